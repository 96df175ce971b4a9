import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Run history in the studio: a workflow id started from the start dialog, finished, and started again with
 * the same id keeps its first run. The detail screen's run switcher opens either run — the whole page
 * (description, timeline, result) follows, the URL carries the run so a reload lands on it, and the earlier
 * run is read-only — and the workflows list shows every run when asked. An id that last ran as another type
 * is refused by the start dialog with the engine's WorkflowIdReuseError, starts only when the person asks to
 * reuse it for the new type, and keeps its earlier run in the switcher.
 *
 * Budgets: a countdown of one or two 50 ms ticks ends within a second; every wait is the default 15 s
 * expectation (a worker's start-up and a claim, on a loaded 2-core machine).
 */

const id = 'invoice-7';

/** The detail page of the run shown: its run number and whether it is an earlier run. */
function shownRun(studio: StudioPage) {
  return studio.page.getByTestId('detail.screen');
}

test('a finished id started again keeps its first run, and the run switcher shows either one', async ({
  studio,
}) => {
  const { page } = studio;
  const detail = studio.detail;

  // Run 1: one tick, started from the start dialog with an id.
  await studio.startFromDialog({
    workflowType: 'countdown',
    input: '{ "from": 1, "tickMs": 50 }',
    workflowId: id,
  });
  await detail.expectStatus('completed');
  await expect(page.getByTestId('detail.run-switcher')).toBeHidden();

  // Run 2: the same id again, two ticks. The page of the new run opens, with a switcher: "Run 2 of 2".
  await page.getByTestId('detail.back').click();
  await studio.startFromDialog({
    workflowType: 'countdown',
    input: '{ "from": 2, "tickMs": 50 }',
    workflowId: id,
  });
  await detail.expectStatus('completed');
  const switcher = page.getByTestId('detail.run-switcher');
  await expect(switcher).toHaveText(/Run 2 of 2/);
  await expect(shownRun(studio)).toHaveAttribute('data-run', '2');
  await page.getByTestId('detail.tab-result').click();
  await expect(page.getByTestId('detail.result')).toContainText(/"counted":\s*2/);

  // Switch to run 1: its result, its timeline (one tick, not two), read-only, and the URL names it.
  await switcher.click();
  const options = page.getByTestId('detail.run-option');
  await expect(options).toHaveCount(2);
  await expect(options.first()).toContainText('latest');
  await options.filter({ hasText: 'Run 1' }).click();
  await expect(shownRun(studio)).toHaveAttribute('data-run', '1');
  await expect(shownRun(studio)).toHaveAttribute('data-earlier-run', 'true');
  expect(new URL(page.url()).hash).toBe(`#/workflows/${id}?run=1`);
  await expect(switcher).toHaveText(/Run 1 of 2/);
  await expectRunOne(studio);

  // A link to run 1 is a link to run 1: reloading the tab lands on it again.
  await studio.reload();
  await expect(shownRun(studio)).toHaveAttribute('data-run', '1');
  await expectRunOne(studio);

  // Back to the latest: actions again, run 2's result and timeline.
  await page.getByTestId('detail.latest-run').click();
  await expect(shownRun(studio)).toHaveAttribute('data-run', '2');
  await expect(shownRun(studio)).not.toHaveAttribute('data-earlier-run');
  expect(new URL(page.url()).hash).toBe(`#/workflows/${id}`);
  await expect(page.getByTestId('detail.signal-button')).toBeVisible();
  await expect(page.getByTestId('detail.earlier-run')).toBeHidden();
  await expect(page.getByTestId('detail.event-group').filter({ hasText: 'sleep' })).toHaveCount(2);
  await page.getByTestId('detail.tab-result').click();
  await expect(page.getByTestId('detail.result')).toContainText(/"counted":\s*2/);

  // The list shows the latest run only; "Every run" shows both, and run 1's row opens run 1.
  await page.getByTestId('detail.back').click();
  await expect(studio.row(id)).toHaveCount(1);
  await expect(studio.row(id)).toHaveAttribute('data-run', '2');
  await expect(studio.row(id).getByTestId('workflows.row-run')).toHaveText('run 2');
  await page.getByTestId('workflows.all-runs').check();
  await expect(studio.row(id)).toHaveCount(2);
  expect(new URL(page.url()).hash).toBe('#/workflows?runs=all');
  const earlierRow = page.locator(`[data-testid="workflows.row"][data-workflow-id="${id}"][data-run="1"]`);
  await expect(earlierRow).toHaveAttribute('data-earlier-run', 'true');
  await earlierRow.getByTestId('workflows.row-id').click();
  await expect(shownRun(studio)).toHaveAttribute('data-run', '1');
  await expectRunOne(studio);
});

test('the start dialog refuses an id of another type, then reuses it when asked; the old run stays', async ({
  studio,
}) => {
  const { page } = studio;
  const ledger = 'ledger-9';
  const runs = () =>
    page.evaluate(
      async (workflowId) =>
        (await window.shuttle!.runs(workflowId)).map(({ run, workflowType }) => `${run}:${workflowType}`),
      ledger,
    );

  // Run 1: a countdown, finished.
  await studio.startFromDialog({
    workflowType: 'countdown',
    input: '{ "from": 1, "tickMs": 50 }',
    workflowId: ledger,
  });
  await studio.detail.expectStatus('completed');
  await page.getByTestId('detail.back').click();

  // The same id for a flaky call: refused with the engine's typed message; the dialog stays open, nothing starts.
  const dialog = await studio.startDialog.open();
  await dialog.choose('flaky');
  await dialog.setInput('{ "failures": 0, "maxAttempts": 1, "initialIntervalMs": 100 }');
  await dialog.setWorkflowId(ledger);
  await dialog.submit();
  const refused = page.getByTestId('start.id-reuse-refused');
  await expect(refused).toBeVisible();
  await expect(refused).toContainText('This id last ran as another workflow type');
  await expect(refused).toContainText(
    `WorkflowIdReuseError: Workflow '${ledger}' last ran as 'countdown', not 'flaky'.`,
  );
  await expect(refused.locator('[data-error-name]')).toHaveAttribute(
    'data-error-name',
    'WorkflowIdReuseError',
  );
  await expect(dialog.error).toBeHidden();
  await expect(dialog.root).toBeVisible();
  expect(await runs()).toEqual(['1:countdown']);

  // Asked explicitly: the id is reused for flaky, as run 2; the page of the new run opens.
  await refused.getByRole('button', { name: 'Reuse the id for flaky' }).click();
  await expect(dialog.root).toBeHidden();
  const shown = shownRun(studio);
  await expect(shown).toHaveAttribute('data-run', '2');
  await expect(page.getByTestId('detail.type')).toContainText('flaky');
  await studio.detail.expectStatus('completed');
  expect(await runs()).toEqual(['2:flaky', '1:countdown']);

  // The countdown's run is still there, from the run switcher.
  const switcher = page.getByTestId('detail.run-switcher');
  await expect(switcher).toHaveText(/Run 2 of 2/);
  await switcher.click();
  await page.getByTestId('detail.run-option').filter({ hasText: 'Run 1' }).click();
  await expect(shown).toHaveAttribute('data-run', '1');
  await expect(page.getByTestId('detail.type')).toContainText('countdown');
  await expectRunOne(studio);
});

/** Run 1 as its page shows it: completed with one tick, its result, and no actions. */
async function expectRunOne(studio: StudioPage): Promise<void> {
  const { page } = studio;
  await expect(studio.detail.status).toHaveText('completed');
  await expect(page.getByTestId('detail.earlier-run')).toContainText('earlier run — finished completed');
  await expect(page.getByTestId('detail.signal-button')).toBeHidden();
  await expect(page.getByTestId('detail.cancel-button')).toBeHidden();
  await expect(page.getByTestId('detail.event-group').filter({ hasText: 'sleep' })).toHaveCount(1);
  await expect(studio.detail.event('completed')).toBeVisible();
  await page.getByTestId('detail.tab-result').click();
  await expect(page.getByTestId('detail.result')).toContainText(/"counted":\s*1/);
}
