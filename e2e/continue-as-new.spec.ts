import { expect, test } from './fixtures/studio';

/**
 * Continue-as-new in the studio: a countdown that continues as new every two ticks is one workflow to the
 * person — one row in the list, its latest run on its page — whose chain of runs the page shows: the latest
 * run says which run it continued from (a link), an earlier run says it continued as new and which run took
 * its place, and each run's timeline holds its own ticks only, ending (or beginning) with the hand-over.
 *
 * Budgets: five 50 ms ticks end within a second; every wait is the default 15 s expectation.
 */

const id = 'chain-1';

test('a chain of runs: the latest says where it continued from, an earlier run where it went', async ({
  studio,
}) => {
  const { page } = studio;
  await studio.startViaConsole('countdown', { from: 5, tickMs: 50, ticksPerRun: 2 }, { id });
  await studio.expectWorkflowStatus(id, 'completed');
  expect(
    await page.evaluate(
      async (workflowId) =>
        (await window.shuttle!.runs(workflowId)).map(({ run, status }) => `${run}:${status}`),
      id,
    ),
  ).toEqual(['3:completed', '2:continued-as-new', '1:continued-as-new']);

  // One row in the list: the workflow, at its latest run.
  await expect(studio.row(id)).toHaveCount(1);
  await expect(studio.row(id)).toHaveAttribute('data-run', '3');

  const detail = await studio.openWorkflow(id);
  await detail.expectStatus('completed');
  await expect(page.getByTestId('detail.run-switcher')).toHaveText(/Run 3 of 3/);
  await expect(page.getByTestId('detail.chain')).toHaveText('from run 2');
  await expect(page.getByTestId('detail.event-group').filter({ hasText: 'sleep' })).toHaveCount(1);
  await expect(page.getByTestId('detail.screen')).toContainText('started by run 2 (continued as new)');

  // Follow the link to run 2: an earlier run, which continued as new into run 3 and came from run 1.
  await page.getByTestId('detail.continued-from-link').click();
  await expect(page.getByTestId('detail.screen')).toHaveAttribute('data-run', '2');
  await detail.expectStatus('continued-as-new');
  await expect(page.getByTestId('detail.chain')).toHaveText('from run 1 · into run 3');
  await expect(page.getByTestId('detail.event-group').filter({ hasText: 'sleep' })).toHaveCount(2);
  await expect(page.getByTestId('detail.screen')).toContainText('continued as new: run 3 (version 1)');

  // And on to the run that took its place.
  await page.getByTestId('detail.continued-as-link').click();
  await expect(page.getByTestId('detail.screen')).toHaveAttribute('data-run', '3');
  await expect(page.getByTestId('detail.continued-as')).toBeHidden();
});
