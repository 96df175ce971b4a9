import { readFile } from 'node:fs/promises';
import { expect, test } from './fixtures/studio';

/**
 * Smoke: the studio opens with a running engine; the order demo is started from the start dialog, approved
 * by a signal sent from its page, and completes with its timeline shown; filters live in the URL and the
 * command palette finds a workflow by id prefix; a reloaded tab's new engine takes a running countdown over
 * and finishes it without repeating a tick.
 */

test('starts the order demo from the start dialog, approves it by a signal from its page, and watches it complete', async ({
  studio,
}) => {
  const engineId = await studio.engineId();
  await expect(studio.page.getByTestId('shell.engine-label')).toHaveText(/^Tab [A-Z]+$/);
  await expect(studio.page.getByTestId('shell.engine-mode')).toHaveText('engine');
  await expect(studio.page.getByTestId('workflows.empty')).toBeVisible();

  const workflowId = await studio.startFromDialog({ workflowType: 'order', workflowId: 'order-smoke' });

  const detail = studio.detail;
  await expect(detail.status).toHaveText('running');
  await expect(studio.page.getByTestId('detail.type')).toContainText('order');
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', engineId);
  await expect(detail.ownerEngine).toContainText('this tab');
  await expect(detail.epoch).toHaveText('1');
  await expect(detail.waitingOn).toContainText("signal 'approve'", { timeout: 15_000 });

  await detail.sendSignal('approve', '{ "ok": true, "by": "e2e" }');

  await detail.expectStatus('completed', 30_000);
  await expect(detail.event('signal-consumed')).toBeVisible();
  await expect(detail.event('completed')).toBeVisible();
  await expect(
    studio.page
      .locator('[data-testid="detail.event-group"]')
      .filter({ hasText: "activity 'charge-payment'" }),
  ).toContainText('2 attempts');
  expect(await detail.custodyLaneEngineIds()).toEqual([engineId]);
  await studio.page.getByTestId('detail.tab-result').click();
  await expect(studio.page.getByTestId('detail.result')).toContainText('"delivered"');
  await expect(studio.page.getByTestId('detail.result')).toContainText('"e2e"');

  const [download] = await Promise.all([
    studio.page.waitForEvent('download'),
    studio.page.getByTestId('detail.export-button').click(),
  ]);
  expect(download.suggestedFilename()).toBe('workflow-order-smoke.json');
  const exported = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
    workflow: { status: string };
    timeline: { kind: string }[];
  };
  expect(exported.workflow.status).toBe('completed');
  expect(exported.timeline.at(-1)?.kind).toBe('completed');

  await studio.openScreen('workflows');
  await expect(studio.rowStatus(workflowId)).toHaveText('completed');
  await expect(studio.rowOwner(workflowId)).toHaveText('—');
});

test('filters live in the URL, and the command palette jumps to a workflow by id prefix', async ({
  studio,
}) => {
  await studio.startViaConsole('countdown', { from: 1, tickMs: 10 }, { id: 'alpha-1' });
  await studio.startViaConsole('countdown', { from: 50, tickMs: 1_000 }, { id: 'beta-1' });
  await expect(studio.rowStatus('alpha-1')).toHaveText('completed');

  await studio.page.getByTestId('workflows.filter-status-running').click();
  await expect(studio.row('beta-1')).toBeVisible();
  await expect(studio.row('alpha-1')).toBeHidden();
  expect(new URL(studio.page.url()).hash).toBe('#/workflows?status=running');

  await studio.page.reload();
  await expect(studio.row('beta-1')).toBeVisible();
  await expect(studio.row('alpha-1')).toBeHidden();
  await expect(studio.page.getByTestId('workflows.filter-status-running')).toHaveAttribute(
    'aria-pressed',
    'true',
  );

  await studio.page.keyboard.press('Control+k');
  await studio.page.getByTestId('palette.input').fill('alph');
  await expect(studio.page.getByTestId('palette.item').first()).toHaveText(/alpha-1/);
  await studio.page.keyboard.press('Enter');
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'alpha-1');
  await expect(studio.detail.status).toHaveText('completed');
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
