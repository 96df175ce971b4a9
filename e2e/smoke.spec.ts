import { expect, test } from './fixtures/studio';

/**
 * Smoke: the studio opens with a running engine, runs the countdown demo to completion, and a reloaded tab's
 * new engine takes a running countdown over and finishes it without repeating a tick.
 */

test('opens with this tab’s engine running and starts the countdown demo from the UI to completion', async ({
  studio,
}) => {
  const engineId = await studio.engineId();
  await expect(studio.page.getByTestId('shell.engine-label')).toHaveText(/^Tab [A-Z]+$/);
  await expect(studio.page.getByTestId('shell.engine-mode')).toHaveText('engine');
  await expect(studio.page.getByTestId('workflows.empty')).toBeVisible();

  const workflowId = await studio.startDemoFromUi();

  await expect(studio.rowStatus(workflowId)).toHaveText('running');
  await expect(studio.row(workflowId).getByTestId('workflows.row-type')).toContainText('countdown');
  await expect(studio.rowOwner(workflowId).locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    engineId,
  );
  await expect(studio.rowOwner(workflowId)).toContainText('this tab');
  await expect(studio.rowEpoch(workflowId)).toHaveText('1');
  await expect(studio.row(workflowId).getByTestId('workflows.row-waiting')).toContainText('sleep');

  await studio.expectWorkflowStatus(workflowId, 'completed', 30_000);
  await expect(studio.rowOwner(workflowId)).toHaveText('—');
  const description = await studio.describe(workflowId);
  expect(description.result).toMatchObject({ counted: expect.any(Number) as unknown });
});

test('a reloaded tab’s new engine takes the running countdown over and completes it', async ({ studio }) => {
  const firstEngine = await studio.engineId();
  const ticks = 20;
  const workflowId = await studio.startViaConsole('countdown', { from: ticks, tickMs: 250 });
  await expect(studio.rowStatus(workflowId)).toHaveText('running');
  await expect(studio.rowOwner(workflowId).locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    firstEngine,
  );
  // Let it get somewhere first, so the reload interrupts it mid-run.
  await expect.poll(() => studio.query<number>(workflowId, 'remaining')).toBeLessThanOrEqual(ticks - 3);

  await studio.reload();

  const secondEngine = await studio.engineId();
  expect(secondEngine).not.toBe(firstEngine);
  await studio.expectWorkflowStatus(workflowId, 'completed', 30_000);
  await expect
    .poll(async () => Number(await studio.rowEpoch(workflowId).textContent()))
    .toBeGreaterThanOrEqual(2);

  const timeline = await studio.timeline(workflowId);
  const engines = new Set(timeline.map((entry) => entry.engineId));
  expect(engines).toEqual(new Set([firstEngine, secondEngine]));
  expect(Math.max(...timeline.map((entry) => entry.epoch))).toBeGreaterThanOrEqual(2);
  // Every tick ran exactly once across both engines: the handoff repeated none.
  expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(ticks);
  expect(timeline.at(-1)?.kind).toBe('completed');
});
