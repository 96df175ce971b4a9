import { expect, test } from './fixtures/studio';

/**
 * Graceful handoff: a workflow owned by tab A moves to tab B within a second of A closing, at epoch 2, and
 * completes; B's custody lanes show A, then B, with the fence at epoch 2 between them.
 *
 * The countdown must still be running when B's page is checked for its new owner, so the test closes A
 * early (a few ticks in, watched closely) and leaves B many ticks: the window B owns it in is the
 * workflow's own remaining duration (about 8 s), not a guess about how fast the page or the machine is.
 */

test('a workflow owned by a closed tab moves to the remaining tab within a second, at epoch 2, and completes', async ({
  studio: tabA,
  openTab,
}) => {
  const engineA = await tabA.engineId();
  const labelA = await tabA.engineLabel();
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  const labelB = await tabB.engineLabel();
  const ticks = 30;
  const workflowId = await tabA.startViaConsole(
    'countdown',
    { from: ticks, tickMs: 300 },
    { id: 'handoff-1' },
  );

  const detail = await tabB.openWorkflow(workflowId);
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await expect(detail.epoch).toHaveText('1');
  // Let it get going under A, so the handoff happens mid-run; watch closely, so that A closes a few ticks in
  // and B has most of the countdown still to run.
  await expect
    .poll(() => tabB.query<number>(workflowId, 'remaining'), { intervals: [50] })
    .toBeLessThanOrEqual(ticks - 3);

  const closedAt = Date.now();
  await tabA.page.close();

  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', engineB);
  await expect(detail.epoch).toHaveText('2');
  const timeline = await tabB.timeline(workflowId);
  const claimedByB = timeline.find(
    (entry) =>
      (entry.kind === 'claim-acquired' || entry.kind === 'claim-taken-over') && entry.engineId === engineB,
  );
  expect(claimedByB, 'B claimed the workflow').toBeTruthy();
  expect(claimedByB!.epoch).toBe(2);
  expect(claimedByB!.at - closedAt, 'B claimed it within a second of A closing').toBeLessThan(1_000);

  await detail.expectStatus('completed', 20_000);
  expect(await detail.custodyLaneEngineIds()).toEqual([engineA, engineB]);
  expect(await detail.custodyLaneLabels()).toEqual([labelA, labelB]);
  await expect(detail.fence(2)).toHaveCount(1);
  // Every tick fired once across both engines.
  const finished = await tabB.timeline(workflowId);
  expect(finished.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(ticks);
});
