import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { closeDialog, dialogSelector, scansInTheme } from './fixtures/axe';
import { slowdown } from './fixtures/load';
import { typeAfterLine } from './fixtures/editor';
import { expect, test } from './fixtures/studio';

/**
 * Accessibility: axe-core over every screen of the studio, and every dialog, in the light and the
 * dark theme: no serious or critical violation of WCAG 2 A / AA. Each violation is reported with where it
 * was found, its rule, its help text and the elements it was found on, and all of them are reported at once.
 *
 * Every scan waits for what the screen or dialog shows once its data has loaded (its heading and a known
 * row, card or field), and for running CSS transitions (a theme switch fades colours) to end, so axe never
 * measures a half-drawn page.
 */

/**
 * A definition of this test's own: saved ones are editable and can be renamed and deleted. Its source is
 * longer than the editor, so the editor scrolls (as the built-in's read-only source does).
 */
const ownDefinition = `import { defineWorkflow } from 'shuttle';

${Array.from({ length: 60 }, (_, index) => `// Note ${index + 1}: a line of a source longer than the editor.`).join('\n')}
export default defineWorkflow({
  name: 'a11y-note',
  version: 1,
  *run(ctx, input: { text: string }) {
    const seen = yield* ctx.activity('read', () => input.text.length);
    return { seen };
  },
});
`;

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate((value) => {
    location.hash = value;
  }, hash);
}

/**
 * The time budget of a test of `scans` axe scans. A scan is CPU-bound work on the page's main thread (no
 * product timing bounds it): 1–3 s on a quiet 2-core machine, up to 8 s under load (`SHUTTLE_E2E_LOAD=1`
 * beside other work, load average ~20), so each is given 15 s, plus a minute for setting up what the screens
 * show; all of it times the DevTools CPU throttling rate (`slowdown`), which slows exactly that thread.
 */
function scanBudgetMs(scans: number): number {
  return (60_000 + scans * 15_000) * slowdown();
}

function heading(page: Page, name: string): Locator {
  return page.getByRole('heading', { level: 1, name, exact: true });
}

for (const theme of ['light', 'dark'] as const)
  test(`every screen and dialog, ${theme} theme: no serious or critical axe violation`, async ({
    studio,
  }) => {
    test.setTimeout(scanBudgetMs(20));
    const page = studio.page;
    const { scan, found } = await scansInTheme(page, theme);

    // Something on every screen: a waiting workflow, one whose activity failed once, a long one with a
    // result waiter (and so a claim), a saved definition, and a drill's report.
    const order = await page.evaluate(async () => {
      const definition = (await window.shuttle!.definitions()).find(
        (candidate) => candidate.name === 'order',
      );
      return window.shuttle!.start('order', definition?.sampleInput ?? undefined, { id: 'a11y-order' });
    });
    await studio.startViaConsole(
      'flaky',
      { failures: 1, maxAttempts: 3, initialIntervalMs: 100 },
      { id: 'a11y-flaky' },
    );
    await studio.startViaConsole('countdown', { from: 300, tickMs: 2_000 }, { id: 'a11y-countdown' });
    expect(
      await page.evaluate((source) => window.shuttle!.saveDefinition(source), ownDefinition),
    ).toMatchObject({ ok: true, version: 1 });

    // Workflows, and its dialogs: start, bulk terminate, the command palette and "Connect to server".
    await go(page, '#/workflows');
    await expect(heading(page, 'Workflows')).toBeVisible();
    for (const id of [order, 'a11y-flaky', 'a11y-countdown']) await expect(studio.row(id)).toBeVisible();
    await scan('#/workflows');

    await studio.startButton.click();
    await expect(page.getByTestId('start.dialog')).toBeVisible();
    await expect(page.locator('[data-testid="start.definition"][aria-checked="true"]')).toBeVisible();
    await scan('start dialog', dialogSelector('start.dialog'));
    await closeDialog(page, 'start.dialog');

    await page.getByTestId('workflows.bulk-terminate').click();
    await expect(page.getByTestId('workflows.bulk-count')).toHaveAttribute('data-count', /\d+/);
    await scan('bulk terminate dialog', dialogSelector('workflows.bulk-dialog'));
    await closeDialog(page, 'workflows.bulk-dialog');

    await page.keyboard.press('Control+k');
    await page.getByTestId('palette.input').fill('a');
    await expect(page.locator(`[data-testid="palette.item"][data-command-id="wf:${order}"]`)).toBeVisible();
    await expect(page.locator('[data-testid="palette.item"][data-command-id^="engine:"]')).toBeVisible();
    await scan('command palette', dialogSelector('palette.dialog'));
    await page.getByTestId('palette.input').fill('connect to server');
    await expect(page.getByTestId('palette.item')).toHaveCount(1);
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('connect.url')).toBeVisible();
    await scan('connect dialog', dialogSelector('connect.dialog'));
    await closeDialog(page, 'connect.dialog');

    // A workflow's page, its message and confirmation dialogs, and an event's details.
    const countdown = await studio.openWorkflow('a11y-countdown');
    await countdown.waitForResult();
    await expect(countdown.event('timer-fired').first()).toBeVisible();
    await scan('#/workflows/a11y-countdown');

    await page.getByTestId('detail.signal-button').click();
    await expect(page.getByTestId('detail.signal-name')).toBeVisible();
    await scan('signal dialog', dialogSelector('detail.signal-dialog'));
    await closeDialog(page, 'detail.signal-dialog');

    await page.getByTestId('detail.terminate-button').click();
    await expect(page.getByTestId('detail.terminate-confirm')).toBeVisible();
    await scan('terminate dialog', dialogSelector('detail.terminate-dialog'));
    await closeDialog(page, 'detail.terminate-dialog');

    const detail = await studio.openWorkflow(order);
    await expect(detail.event('started')).toBeVisible();
    await scan(`#/workflows/${order}`);

    const flaky = await studio.openWorkflow('a11y-flaky');
    await flaky.expectStatus('completed');
    await expect(flaky.event('activity-failed')).toBeVisible();
    await scan('#/workflows/a11y-flaky');
    await flaky.event('activity-failed').getByTestId('detail.event-open').click();
    await expect(page.getByTestId('detail.event-error')).toBeVisible();
    await scan('event detail dialog', dialogSelector('detail.event-dialog'));
    await closeDialog(page, 'detail.event-dialog');

    // Definitions: the list, a built-in (read-only) and a saved one, with its rename and delete dialogs.
    const editorScroller = page.getByTestId('definitions.editor').locator('.cm-scroller');
    const expectScrolls = (scroller: Locator) =>
      expect
        .poll(() => scroller.evaluate((element) => element.scrollHeight > element.clientHeight))
        .toBe(true);
    await go(page, '#/definitions');
    await expect(heading(page, 'Definitions')).toBeVisible();
    await expect(studio.definitions.item('a11y-note', 1)).toBeVisible();
    await scan('#/definitions');

    await studio.definitions.select('countdown');
    await expect(page.getByTestId('definitions.read-only')).toBeVisible();
    await expect(studio.definitions.editor).toContainText("name: 'countdown'");
    await expectScrolls(editorScroller);
    await scan('#/definitions/countdown');

    await studio.definitions.select('a11y-note', 1);
    await studio.definitions.expectCompiles('a11y-note', 1);
    await expectScrolls(editorScroller);
    await scan('#/definitions/a11y-note');

    await page.getByTestId('definitions.rename').click();
    await expect(page.getByTestId('definitions.rename-input')).toBeVisible();
    await scan('rename dialog', dialogSelector('definitions.rename-dialog'));
    await closeDialog(page, 'definitions.rename-dialog');

    await page.getByTestId('definitions.delete').click();
    await expect(page.getByTestId('definitions.delete-confirm')).toBeVisible();
    await scan('delete dialog', dialogSelector('definitions.delete-dialog'));
    await closeDialog(page, 'definitions.delete-dialog');

    // Engines, claims, result waiters.
    await go(page, '#/engines');
    await expect(heading(page, 'Engines')).toBeVisible();
    await expect(page.getByTestId('engines.card')).toHaveCount(1);
    await scan('#/engines');

    await go(page, '#/claims');
    await expect(heading(page, 'Claims')).toBeVisible();
    await expect(page.locator('[data-testid="claims.row"]').first()).toBeVisible();
    await scan('#/claims');
    // Moderate, so the scans above pass it: no landmark of a side panel nested inside <main> (the epoch
    // history was an <aside>)
    const landmarks = await new AxeBuilder({ page })
      .withRules(['landmark-complementary-is-top-level'])
      .analyze();
    expect(landmarks.violations.map((violation) => violation.id)).toEqual([]);

    await go(page, '#/waiters');
    await expect(heading(page, 'Result waiters')).toBeVisible();
    await expect(studio.waiters.row('a11y-countdown')).toBeVisible();
    await scan('#/waiters');

    // Chaos: the drills, one with its report (the race runs with the one tab there is).
    await go(page, '#/chaos');
    await expect(heading(page, 'Chaos drills')).toBeVisible();
    const race = page.locator('[data-testid="chaos.drill"][data-drill="race"]');
    await race.getByTestId('chaos.run').click();
    await expect(race.getByTestId('chaos.report')).toBeVisible({ timeout: 30_000 });
    await scan('#/chaos');

    expect(found).toEqual([]);
  });

/**
 * The purge and external-completion dialogs, the external activity panel and the storage card (added after
 * the scan above), in both themes, scanned the same way.
 */
for (const theme of ['light', 'dark'] as const)
  test(`purge, external completion and storage, ${theme} theme: no serious or critical axe violation`, async ({
    studio,
  }) => {
    test.setTimeout(scanBudgetMs(7));
    const page = studio.page;
    const { scan, found } = await scansInTheme(page, theme);

    await studio.startViaConsole('countdown', { from: 0 }, { id: 'a11y-done' });
    await studio.startViaConsole(
      'manual-approval',
      { requestId: 'PO-1', summary: 'Laptops' },
      { id: 'a11y-po' },
    );

    await go(page, '#/workflows?status=running');
    await expect(page.getByTestId('workflows.purge-blocked')).toBeVisible();
    await scan('#/workflows?status=running (purge not offered)');

    await go(page, '#/workflows');
    await expect(studio.row('a11y-done')).toBeVisible();
    await page.getByTestId('workflows.purge-finished').click();
    await expect(page.getByTestId('workflows.purge-count')).toHaveAttribute('data-count', '1');
    await scan('purge finished dialog', dialogSelector('workflows.purge-dialog'));
    await closeDialog(page, 'workflows.purge-dialog');

    const done = await studio.openWorkflow('a11y-done');
    await done.expectStatus('completed');
    await page.getByTestId('detail.purge-button').click();
    await expect(page.getByTestId('detail.purge-confirm')).toBeVisible();
    await scan('purge dialog', dialogSelector('detail.purge-dialog'));
    await closeDialog(page, 'detail.purge-dialog');

    await studio.openWorkflow('a11y-po');
    await expect(page.getByTestId('detail.external-activity')).toBeVisible();
    await scan('#/workflows/a11y-po (an external activity waits)');
    await page.getByTestId('detail.complete-activity').click();
    await expect(page.getByTestId('detail.complete-value')).toBeVisible();
    await scan('complete activity dialog', dialogSelector('detail.complete-dialog'));
    await closeDialog(page, 'detail.complete-dialog');
    await page.getByTestId('detail.fail-activity').click();
    await expect(page.getByTestId('detail.fail-message')).toBeVisible();
    await scan('fail activity dialog', dialogSelector('detail.fail-dialog'));
    await closeDialog(page, 'detail.fail-dialog');

    await go(page, '#/engines');
    await expect(page.getByTestId('engines.storage-bytes')).toBeVisible();
    await scan('#/engines (storage)');

    expect(found).toEqual([]);
  });

/**
 * The screens and dialogs added after the scans above: Schedules with its New schedule dialog, a workflow's
 * run switcher (an id that ran twice), the Update / Query / Cancel / Suspend dialogs, the custody chart's zoom
 * controls, and Pending work with a buffered signal (its payload opened whole) — both themes, scanned the same
 * way.
 */
for (const theme of ['light', 'dark'] as const)
  test(`schedules, run switcher, update / query / cancel / suspend, buffered signals, ${theme} theme: no serious or critical axe violation`, async ({
    studio,
  }) => {
    test.setTimeout(scanBudgetMs(10));
    const page = studio.page;
    const { scan, found } = await scansInTheme(page, theme);

    await page.evaluate(() =>
      window.shuttle!.schedule('a11y-nightly', {
        cron: '0 3 * * *',
        workflow: 'countdown',
        input: { from: 1 },
        timezone: 'UTC',
      }),
    );
    await page.evaluate(() =>
      window.shuttle!.schedule('a11y-paused', { cron: '*/5 * * * *', workflow: 'countdown' }),
    );
    await page.evaluate(() => window.shuttle!.pauseSchedule('a11y-paused'));
    // An id that ran twice (the run switcher), and a running order that waits for its approval.
    await studio.startViaConsole('countdown', { from: 0 }, { id: 'a11y-twice' });
    await expect.poll(async () => (await studio.describe('a11y-twice')).status).toBe('completed');
    await studio.startViaConsole('countdown', { from: 1, tickMs: 10 }, { id: 'a11y-twice' });
    const order = await page.evaluate(async () => {
      const definition = (await window.shuttle!.definitions()).find(
        (candidate) => candidate.name === 'order',
      );
      return window.shuttle!.start('order', definition?.sampleInput ?? undefined, { id: 'a11y-order' });
    });
    await expect.poll(async () => (await studio.describe(order)).pending?.name).toBe('approve');

    await go(page, '#/schedules');
    await expect(heading(page, 'Schedules')).toBeVisible();
    await expect(page.getByTestId('schedules.row')).toHaveCount(2);
    await expect(page.getByTestId('schedules.row-paused')).toBeVisible();
    await scan('#/schedules');

    await page.getByTestId('schedules.new-button').click();
    await expect(page.getByTestId('start.dialog')).toBeVisible();
    await expect(page.getByTestId('start.mode-schedule')).toHaveAttribute('aria-selected', 'true');
    await page.locator('[data-testid="start.definition"][data-definition="countdown"]').click();
    await page.getByTestId('schedule.cron').fill('*/10 * * * *');
    await expect(page.getByTestId('schedule.preview')).toHaveAttribute('data-state', 'ok');
    await scan('new schedule dialog', dialogSelector('start.dialog'));
    await closeDialog(page, 'start.dialog');

    const twice = await studio.openWorkflow('a11y-twice');
    await twice.expectStatus('completed');
    await page.getByTestId('detail.run-switcher').click();
    await expect(page.getByTestId('detail.run-option')).toHaveCount(2);
    await scan('#/workflows/a11y-twice (run switcher open)');
    await page.keyboard.press('Escape');

    await studio.openWorkflow(order);
    await page.getByTestId('detail.zoom-in').click();
    await expect(page.getByTestId('detail.zoom-fit')).toBeVisible();
    await scan(`#/workflows/${order} (chart zoomed)`);

    for (const kind of ['update', 'query'] as const) {
      await page.getByTestId(`detail.${kind}-button`).click();
      await expect(page.getByTestId(`detail.${kind}-name`)).toBeVisible();
      await scan(`${kind} dialog`, dialogSelector(`detail.${kind}-dialog`));
      await closeDialog(page, `detail.${kind}-dialog`);
    }
    for (const kind of ['cancel', 'suspend'] as const) {
      await page.getByTestId(`detail.${kind}-button`).click();
      await expect(page.getByTestId(`detail.${kind}-confirm`)).toBeVisible();
      await scan(`${kind} dialog`, dialogSelector(`detail.${kind}-dialog`));
      await closeDialog(page, `detail.${kind}-dialog`);
    }

    // A signal the order does not wait for: buffered, listed on Pending work with its payload opened.
    await page.evaluate(
      (id) => window.shuttle!.signal(id, 'note', { text: 'a long note '.repeat(12) }),
      order,
    );
    await page.getByTestId('shell.nav-pending').click();
    await expect(heading(page, 'Pending work')).toBeVisible();
    await page.getByTestId('pending.buffered-show-all').click();
    await expect(page.getByTestId('pending.buffered-full')).toBeVisible();
    await scan('#/pending (a buffered signal, its payload open)');

    expect(found).toEqual([]);
  });

/** A saved definition whose body fails, so the Error tab shows a mapped stack (as e2e/stack-lines.spec.ts). */
const failingDefinition = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'a11y-stack',
  version: 1,
  *run(ctx) {
    yield* ctx.activity('check', () => 1);
    throw new TypeError('no shipping address');
  },
});
`;

/**
 * The views issue #37 added: a mapped stack with its "Show engine frames" toggle (Error tab), the editor
 * with a type error underlined and listed, and a closed tab's engine card ("tab closed", no Restart), in
 * both themes, scanned the same way.
 */
for (const theme of ['light', 'dark'] as const)
  test(`stacks, the editor's type errors and a closed tab's card, ${theme} theme: no serious or critical axe violation`, async ({
    studio,
    openTab,
  }) => {
    test.setTimeout(scanBudgetMs(6));
    const page = studio.page;
    const { scan, found } = await scansInTheme(page, theme);

    expect(
      await page.evaluate((source) => window.shuttle!.saveDefinition(source), failingDefinition),
    ).toMatchObject({ ok: true });
    const id = await studio.startViaConsole('a11y-stack', undefined, { id: 'a11y-stack-1' });
    const detail = await studio.openWorkflow(id);
    await detail.expectStatus('failed');
    await expect(page.getByTestId('detail.error-stack-lines')).toContainText('a11y-stack.ts:8:');
    await scan(`#/workflows/${id} (Error tab, engine frames hidden)`);
    await page.getByTestId('detail.error-stack').getByLabel('Show engine frames').check();
    await expect(page.getByTestId('detail.error-stack-lines')).toContainText('engine.worker');
    await scan(`#/workflows/${id} (Error tab, engine frames shown)`);

    await studio.openScreen('definitions');
    await studio.definitions.newDefinition();
    await typeAfterLine(page, "ctx.state.stage = 'composing';", "const x: number = 'a';");
    await expect(
      studio.definitions.problems.filter({ hasText: "Type 'string' is not assignable to type 'number'." }),
    ).toHaveCount(1);
    await expect(studio.definitions.inlineErrors).toHaveCount(1);
    await scan('#/definitions (a new definition with a type error)');

    const other = await openTab();
    const otherEngine = await other.engineId();
    await studio.openScreen('engines');
    const card = studio.engines.card(otherEngine);
    await card.getByTestId('engines.shutdown').click();
    await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'stopped');
    await other.page.close();
    await expect(card.getByTestId('engines.card-tab-closed')).toHaveText('tab closed');
    await scan('#/engines (a closed tab’s card)');

    expect(found).toEqual([]);
  });
