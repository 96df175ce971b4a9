import { hostClaimTimings } from '../src/protocol';
import { outlastingMs } from './fixtures/load';
import { StudioPage, expect, test } from './fixtures/studio';

/**
 * Viewer mode (`?engine=off`): the tab observes through an engine that never claims, so a workflow started
 * from it is run by another tab's engine.
 */

test('a viewer tab starts a workflow that an engine tab runs, and claims nothing itself', async ({
  studio,
  context,
  databaseName,
}) => {
  const viewer = await StudioPage.open(await context.newPage(), { databaseName, viewer: true });
  await expect(viewer.page.getByTestId('shell.engine-mode')).toHaveText('viewer');
  await expect(viewer.page.getByTestId('shell.viewer-notice')).toBeVisible();
  const engineId = await studio.engineId();

  // Still running while its row's owner is checked twice: 6 × 200 ms (1.2 s) ended between the two checks on
  // a loaded machine, so the countdown lasts `outlastingMs(1)` (TTL + grace; times the CPU throttling rate).
  const ticks = 6;
  const tickMs = Math.ceil(outlastingMs(1) / ticks);
  const workflowId = await viewer.startViaConsole('countdown', { from: ticks, tickMs });

  await expect(viewer.rowOwner(workflowId).locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    engineId,
  );
  await expect(viewer.rowOwner(workflowId)).toContainText(await studio.engineLabel());
  // Its length, with TTL + grace of slack (ticks run a little longer than their nominal time under load).
  await viewer.expectWorkflowStatus(
    workflowId,
    'completed',
    ticks * tickMs + hostClaimTimings.ttlMs + hostClaimTimings.graceMs,
  );
  await studio.expectWorkflowStatus(workflowId, 'completed');
  await expect(viewer.page.getByTestId('shell.claims-held')).toHaveText('0 claims');
  const timeline = await viewer.timeline(workflowId);
  const viewerId = await viewer.engineId();
  // The viewer created the workflow; everything after that, from the claim on, was the engine tab's.
  expect(timeline.filter((entry) => entry.engineId === viewerId).map((entry) => entry.kind)).toEqual([
    'started',
  ]);
  expect(timeline.find((entry) => entry.kind.startsWith('claim-'))?.engineId).toBe(engineId);
});
