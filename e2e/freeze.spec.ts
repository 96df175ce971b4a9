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
  test.setTimeout(90_000);
  const engineA = await tabA.engineId();
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  await tabB.openScreen('engines');
  await tabA.page.bringToFront();
  // Short steps back to back (about 7 s in all): an activity is in flight at any moment, and each is a single
  // short timer, so when A wakes up its activity completes first and A tries to commit it.
  const steps = Array.from({ length: 28 }, (_, index) => ({ name: `step-${index + 1}`, ms: 250 }));
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

  await detailB.expectStatus('completed', 30_000);
  expect(await detailB.custodyLaneEngineIds()).toEqual([engineA, engineB]);
  // Every step was recorded once, whoever ran it.
  const finished = await tabB.timeline(workflowId);
  const completed = finished
    .filter((entry) => entry.kind === 'activity-completed')
    .map((entry) => entry.detail.name);
  expect(completed).toEqual(steps.map((step) => step.name));
  await expect(detailB.fence(2)).toHaveCount(1);
});
