import { expect, test } from './fixtures/studio';

/**
 * Studio depth, in the browser: the page never scrolls as a whole (only <main> does); a finished workflow
 * reruns with the same input as a new workflow; cancel / terminate act on every workflow the list's filter
 * matches, after a confirmation that says how many; a signal the workflow does not wait for is said to stay
 * buffered.
 */

test('the header and sidebar stay put: only <main> scrolls, on Engines with several cards', async ({
  studio,
  openTab,
}) => {
  await openTab();
  await openTab();
  await studio.openScreen('engines');
  await expect(studio.page.getByTestId('engines.card')).toHaveCount(3);
  await studio.page.locator('main').evaluate((main) => main.scrollTo(0, main.scrollHeight));
  await studio.page.mouse.wheel(0, 5_000);
  const page = await studio.page.evaluate(() => ({
    scrollTop: document.scrollingElement!.scrollTop,
    scrollHeight: document.scrollingElement!.scrollHeight,
    innerHeight,
  }));
  expect(page.scrollTop).toBe(0);
  expect(page.scrollHeight).toBeLessThanOrEqual(page.innerHeight);
  await expect(studio.page.getByTestId('shell.palette-button')).toBeInViewport();
});

test('rerun: a finished workflow starts again with the same input, under a new id', async ({ studio }) => {
  const input = { from: 2, tickMs: 100 };
  const first = await studio.startViaConsole('countdown', input, { id: 'rerun-original' });
  const detail = await studio.openWorkflow(first);
  await detail.expectStatus('completed');
  await studio.page.getByTestId('detail.rerun-button').click();
  await expect(detail.workflowId).not.toHaveAttribute('data-full-id', first);
  const second = (await detail.workflowId.getAttribute('data-full-id'))!;
  expect(await studio.describe(second)).toMatchObject({ workflowType: 'countdown', input });
  expect((await studio.describe(first)).status).toBe('completed');
});

test('bulk terminate by the current filter says how many first, then ends exactly those', async ({
  studio,
}) => {
  const ids: string[] = [];
  for (let index = 1; index <= 4; index++)
    ids.push(await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: `bulk-${index}` }));
  const bystander = await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: 'other-1' });
  await studio.page.evaluate(() => {
    location.hash = '#/workflows?q=bulk-';
  });
  await expect(studio.row('bulk-1')).toBeVisible();
  await studio.page.getByTestId('workflows.bulk-terminate').click();
  const dialog = studio.page.getByTestId('workflows.bulk-dialog');
  await expect(dialog.getByTestId('workflows.bulk-count')).toHaveAttribute('data-count', '4');
  await expect(dialog.getByTestId('workflows.bulk-count')).toContainText('id starting “bulk-”');
  await dialog.getByTestId('workflows.bulk-reason').fill('cleanup');
  await dialog.getByTestId('workflows.bulk-confirm').click();
  await expect(dialog.getByTestId('workflows.bulk-result')).toContainText('Terminated 4 of 4');
  for (const id of ids) expect((await studio.describe(id)).status).toBe('terminated');
  expect((await studio.describe(bystander)).status).toBe('running');
});

test('a signal the workflow does not wait for is said to stay buffered', async ({ studio }) => {
  const id = await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: 'signal-note' });
  await studio.openWorkflow(id);
  await studio.page.getByTestId('detail.signal-button').click();
  await studio.page.getByTestId('detail.signal-name').fill('ping');
  await expect(studio.page.getByTestId('detail.signal-note')).toContainText('waits for no signal right now');
  await studio.page.getByTestId('detail.signal-submit').click();
  await expect(studio.page.getByTestId('detail.signal-result')).toContainText('It is buffered');
});
