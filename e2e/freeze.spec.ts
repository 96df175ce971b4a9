import { hostClaimTimings } from '../src/protocol';
import { outlastingMs, slowdown } from './fixtures/load';
import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 4 (docs/quality.md), freeze: tab A's engine is frozen past the claim TTL from tab B's
 * Engines screen while an activity of A's workflow is in flight; B takes the workflow over; when A wakes up
 * its write is refused, A's page says it lost the workflow, and B's custody lanes show A's refused write as a
 * hollow red mark in A's lane.
 */

test('a frozen owner is taken over after the TTL, and when it wakes up its write is refused and it says so', async ({
  studio: tabA,
  openTab,
}) => {
  test.setTimeout(90_000 * slowdown());
  const engineA = await tabA.engineId();
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  await tabB.openScreen('engines');
  await tabA.page.bringToFront();
  // Short steps back to back: an activity is in flight at any moment, and each is a single short timer, so
  // when A wakes up its activity completes first and A tries to commit it. The workflow must still run when
  // the freeze lands: 28 × 250 ms (7 s) ended at epoch 1 on a loaded machine while the freeze was being asked
  // for on B's Engines screen, so it lasts `outlastingMs()` (at most 50 steps: slow-steps' limit).
  const totalMs = outlastingMs();
  const stepMs = Math.max(250, Math.ceil(totalMs / 50));
  const steps = Array.from({ length: Math.ceil(totalMs / stepMs) }, (_, index) => ({
    name: `step-${index + 1}`,
    ms: stepMs,
  }));
  const workflowId = await tabA.startViaConsole('slow-steps', { steps }, { id: 'frozen-1' });
  const detailA = await tabA.openWorkflow(workflowId);
  await expect(detailA.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await expect
    .poll(
      async () =>
        (await tabA.timeline(workflowId)).filter((entry) => entry.kind === 'activity-completed').length,
    )
    .toBeGreaterThanOrEqual(2);

  await tabB.engines.freeze(engineA, 12);

  const detailB = await tabB.openWorkflow(workflowId);
  await expect(detailB.ownerEngine).toHaveAttribute('data-engine-id', engineB, { timeout: 20_000 });
  await expect(detailB.epoch).toHaveText('2');

  await expect(detailA.lostNotice).toBeVisible({ timeout: 30_000 });
  await expect(detailA.lostNotice).toContainText('lost this workflow');
  await expect(detailB.rejectedWrites(engineA).first()).toBeAttached({ timeout: 30_000 });
  const refused = await tabB.page.evaluate((id) => window.shuttle!.fenceRejections(id), workflowId);
  expect(refused.filter((rejection) => rejection.engineId === engineA).length).toBeGreaterThan(0);
  expect(refused.every((rejection) => rejection.heldEpoch === 1 && rejection.currentEpoch === 2)).toBe(true);

  // At most the whole workflow after the takeover, with TTL + grace of slack (steps run a little longer than
  // their nominal time under load).
  await detailB.expectStatus('completed', totalMs + hostClaimTimings.ttlMs + hostClaimTimings.graceMs);
  expect(await detailB.custodyLaneEngineIds()).toEqual([engineA, engineB]);
  // Every step was recorded once, whoever ran it.
  const finished = await tabB.timeline(workflowId);
  const completed = finished
    .filter((entry) => entry.kind === 'activity-completed')
    .map((entry) => entry.detail.name);
  expect(completed).toEqual(steps.map((step) => step.name));
  await expect(detailB.fence(2)).toHaveCount(1);
});
