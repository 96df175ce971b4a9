import type { Page } from '@playwright/test';
import type { ScheduleInfo, WorkflowDescription } from '../src/engine';
import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Schedules in the studio, across two tabs: a schedule created from the start dialog's Schedule tab (a cron
 * checked and previewed as it is typed; a bad name refused by the engine at its field, with nothing
 * written) fires every second on whichever tab's engine reaches each slot first; the tab that fired last is
 * closed, and the other tab carries on alone. Every slot from the first to the last started exactly one
 * workflow, `tick@<slot ISO>` — no duplicates, and (catch-up 'all') no gaps. Pause, trigger now, the link
 * from a started workflow back to its schedule, and delete with its confirmation, all through the screen.
 *
 * Budgets: slots are one second apart and a tab's engine fires a due slot as soon as its timer or the change
 * feed wakes it, so "three more slots" is about three seconds; each wait allows the default 15 s (a loaded
 * 2-core machine, a worker starting). Nothing sleeps: every wait is on what the page or the store shows.
 */

const name = 'tick';

function schedulesOf(tab: StudioPage): Promise<ScheduleInfo[]> {
  return tab.page.evaluate(() => window.shuttle!.schedules());
}

/** The slots the schedule decided, newest first, as the store has them. */
async function lastSlots(tab: StudioPage) {
  const [schedule] = await schedulesOf(tab);
  return schedule?.lastSlots ?? [];
}

/** The workflows the schedule started for its slots (not triggers), read from the store through `tab`. */
function slotWorkflows(tab: StudioPage): Promise<WorkflowDescription[]> {
  return tab.page.evaluate(async (prefix) => {
    const shuttle = window.shuttle!;
    const page = await shuttle.list({ idPrefix: prefix, limit: 1000 });
    const ids = page.items.map((item) => item.workflowId).filter((id) => !id.includes('@trigger-'));
    return Promise.all(ids.map((id) => shuttle.describe(id)));
  }, `${name}@`);
}

async function openSchedules(page: Page): Promise<void> {
  await page.getByTestId('shell.nav-schedules').click();
  await expect(page.getByTestId('shell.nav-schedules')).toHaveAttribute('aria-current', 'page');
}

test('a per-second schedule fires once per slot across two tabs, and keeps firing when the tab that fired closes', async ({
  studio: tabA,
  openTab,
}) => {
  const tabB = await openTab();
  const engines = new Map([
    [await tabA.engineId(), tabA],
    [await tabB.engineId(), tabB],
  ]);
  const { page } = tabA;
  await openSchedules(page);
  await expect(page.getByTestId('schedules.empty')).toContainText('No schedules yet');

  // The New schedule form: the start dialog on its Schedule tab.
  await page.getByTestId('schedules.new-button').click();
  await expect(page.getByTestId('start.dialog')).toBeVisible();
  await expect(page.getByTestId('start.mode-schedule')).toHaveAttribute('aria-selected', 'true');
  await page.locator('[data-testid="start.definition"][data-definition="countdown"]').click();
  await page.getByTestId('schedule.input').fill('{ "from": 0 }');

  // A cron the engine refuses is refused as it is typed, in the engine's words; nothing can be submitted.
  const cron = page.getByTestId('schedule.cron');
  await cron.fill('61 * * * *');
  await expect(page.getByTestId('schedule.cron-error')).toContainText('Invalid cron "61 * * * *"');
  await expect(page.getByTestId('schedule.cron-error')).toContainText('Accepted:');
  await expect(page.getByTestId('schedule.submit')).toBeDisabled();

  // A per-second cron (six fields, seconds first): in English, and its next five fire times a second apart.
  await cron.fill('* * * * * *');
  await expect(page.getByTestId('schedule.preview')).toHaveAttribute('data-state', 'ok');
  await expect(page.getByTestId('schedule.english')).toContainText('Every second');
  const times = await page
    .getByTestId('schedule.preview-time')
    .evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-at'))));
  expect(times).toHaveLength(5);
  expect(times.slice(1).map((at, index) => at - times[index]!)).toEqual([1000, 1000, 1000, 1000]);

  await page.getByTestId('schedule.overlap').selectOption('allow');
  await page.getByTestId('schedule.catch-up').selectOption('all');
  await expect(page.getByTestId('schedule.catch-up')).toHaveAccessibleDescription(/every missed slot runs/);

  // A name the engine refuses comes back at the name field, typed, and nothing was written.
  await page.getByTestId('schedule.name').fill(` ${name}`);
  await page.getByTestId('schedule.submit').click();
  await expect(page.getByTestId('schedule.error-name')).toHaveAttribute(
    'data-error-name',
    'InvalidScheduleError',
  );
  await expect(page.getByTestId('schedule.error-name')).toContainText('without leading or trailing spaces');
  expect(await schedulesOf(tabA)).toEqual([]);

  await page.getByTestId('schedule.name').fill(name);
  await page.getByTestId('schedule.submit').click();
  await expect(page.getByTestId('start.dialog')).toBeHidden();
  expect(new URL(page.url()).hash).toBe(`#/schedules/${name}`);
  const row = page.locator(`[data-testid="schedules.row"][data-name="${name}"]`);
  await expect(row.getByTestId('schedules.row-when')).toContainText('Every second');
  await expect(row.getByTestId('schedules.row-cron')).toHaveText('* * * * * *');
  await expect(row.getByTestId('schedules.row-timezone')).toHaveText('UTC');
  await expect(row.getByTestId('schedules.details')).toBeVisible();

  // It fires, live, on whichever tab's engine gets to each slot first.
  await expect.poll(() => row.getByTestId('schedules.slot').count()).toBeGreaterThanOrEqual(3);
  const [latest] = await lastSlots(tabA);
  expect(latest?.outcome).toBe('started');
  const firedBy = latest!.outcome === 'started' ? latest!.engineId : '';
  const closing = engines.get(firedBy)!;
  const staying = closing === tabA ? tabB : tabA;
  const stayingEngine = await staying.engineId();
  await openSchedules(staying.page);
  const stayingRow = staying.page.locator(`[data-testid="schedules.row"][data-name="${name}"]`);
  await expect(stayingRow.getByTestId('schedules.slot').first()).toBeVisible();

  // Close the tab that fired last: the other carries on alone, firing every slot after.
  await closing.page.close();
  const closedAt = Date.now();
  await expect
    .poll(
      async () =>
        (await lastSlots(staying)).filter(
          (slot) => slot.outcome === 'started' && slot.engineId === stayingEngine && slot.at > closedAt,
        ).length,
    )
    .toBeGreaterThanOrEqual(3);
  // The screen shows who fired each slot: the remaining tab.
  await stayingRow.getByTestId('schedules.row-toggle').click();
  await expect(stayingRow.getByTestId('schedules.details')).toBeVisible();
  await expect(
    stayingRow.getByTestId('schedules.slot-line').first().locator(`[data-engine-id="${stayingEngine}"]`),
  ).toBeVisible();

  // Pause it from the screen: no slot fires after.
  await stayingRow.getByTestId('schedules.pause').click();
  await expect(stayingRow.getByTestId('schedules.row-paused')).toHaveText('paused');
  await expect(stayingRow.getByTestId('schedules.row-next')).toContainText('paused');

  // Exactly one workflow per slot, from the first slot to the last: no duplicate, no gap.
  const workflows = await slotWorkflows(staying);
  const slots = workflows.map((workflow) => Date.parse(workflow.workflowId.slice(name.length + 1))).sort();
  expect(slots.length).toBeGreaterThanOrEqual(6);
  expect(new Set(slots).size).toBe(slots.length);
  expect(slots.every((slot) => slot % 1000 === 0)).toBe(true);
  expect((slots.at(-1)! - slots[0]!) / 1000 + 1).toBe(slots.length);
  for (const workflow of workflows) {
    expect(workflow.scheduledBy).toEqual({
      schedule: name,
      slot: Date.parse(workflow.workflowId.slice(name.length + 1)),
    });
    expect(workflow.run).toBe(1);
  }
  // Every slot the schedule recorded was started (none missed, none skipped), each once.
  const recorded = await lastSlots(staying);
  expect(recorded.map((slot) => slot.outcome)).toEqual(recorded.map(() => 'started'));
  expect(new Set(recorded.map((slot) => slot.slot)).size).toBe(recorded.length);
  const paused = workflows.length;
  await expect(stayingRow.getByTestId('schedules.slot')).toHaveCount(Math.min(10, recorded.length));

  // Trigger now (paused or not): one run outside the slots, and its page links back to the schedule.
  await stayingRow.getByTestId('schedules.trigger').click();
  const triggered = stayingRow.getByTestId('schedules.triggered');
  await expect(triggered).toContainText(`${name}@trigger-1`);
  await triggered.getByRole('link').click();
  await expect(staying.detail.workflowId).toHaveAttribute('data-full-id', `${name}@trigger-1`);
  await staying.detail.expectStatus('completed');
  await expect(staying.page.getByTestId('detail.schedule')).toHaveText(name);
  await staying.page.getByTestId('detail.schedule').click();
  expect(new URL(staying.page.url()).hash).toBe(`#/schedules/${name}`);
  await expect(stayingRow.getByTestId('schedules.details')).toBeVisible();
  expect((await slotWorkflows(staying)).length).toBe(paused);

  // Delete, after a confirmation; the workflows it started stay.
  await stayingRow.getByTestId('schedules.delete').click();
  const dialog = staying.page.getByTestId('schedules.delete-dialog');
  await expect(dialog).toContainText('The workflows it started are left alone');
  await dialog.getByTestId('schedules.delete-confirm').click();
  await expect(staying.page.getByTestId('schedules.empty')).toBeVisible();
  expect(await schedulesOf(staying)).toEqual([]);
  expect((await slotWorkflows(staying)).length).toBe(paused);
});
