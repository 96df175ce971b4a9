import { agePresence } from './fixtures/presence';
import { expect, test, type StudioPage } from './fixtures/studio';

/**
 * Issue #37: history keeps who held it. Engines' presence records are deleted 10 minutes after the engine
 * died; custody lanes, events and chips then resolve the engine through the engine directory, so they read
 * the same, in the same colours, and no other engine changes colour. And a closed tab's engine card says its
 * tab is closed and offers no Restart, while a stopped engine of an open tab still does.
 *
 * The simulated clock: the host prunes a presence record when `now - lastSeenAt` exceeds 10 minutes, with
 * `now` read in the engine's worker, where Playwright's `page.clock` does not reach. So the test moves the
 * closed tab's record 11 minutes into the past instead (its `lastSeenAt` and `startedAt`, in the tabs'
 * IndexedDB), which is what 11 minutes passing means to the pruning rule for that record — and to nothing
 * else, so every live engine carries on as it would.
 */

const retentionPlusAMinute = 11 * 60_000;

/** What the workflow page shows of `engineId`: its custody lane's label and colour, its events' writer. */
async function historyOf(tab: StudioPage, engineId: string) {
  const lane = tab.page.locator(
    `[data-testid="detail.custody-lane"][data-engine-id=${JSON.stringify(engineId)}]`,
  );
  await expect(lane).toHaveCount(1);
  const writers = tab.page.locator('[data-testid="detail.event"] [title^="Written by"]');
  await expect(writers.first()).toBeVisible();
  return {
    label: await lane.getAttribute('data-label'),
    color: await lane.locator('rect').first().getAttribute('fill'),
    writer: await writers.first().getAttribute('title'),
  };
}

/** The background colour of an engine's chip on its card. */
async function chipColor(tab: StudioPage, engineId: string): Promise<string> {
  return tab.engines
    .card(engineId)
    .getByTestId('engines.card-chip')
    .evaluate((chip) => getComputedStyle(chip).backgroundColor);
}

test('custody lanes, events and chips keep an engine’s name and colour after its presence aged out', async ({
  studio: tabA,
  openTab,
  databaseName,
}) => {
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  expect(await tabB.engineLabel()).toBe('Tab B');
  const tabC = await openTab();
  const engineC = await tabC.engineId();

  // Tab B runs a workflow to its end: its custody lane and every event name Tab B.
  const workflowId = await tabB.startViaConsole('countdown', { from: 3, tickMs: 50 }, { id: 'history-1' });
  await expect.poll(async () => (await tabB.describe(workflowId)).status).toBe('completed');
  const detail = await tabA.openWorkflow(workflowId);
  await detail.expectStatus('completed');
  const before = await historyOf(tabA, engineB);
  expect(before.label).toBe('Tab B');
  expect(before.writer).toMatch(/^Written by Tab B /);
  await tabA.openScreen('engines');
  const colorC = await chipColor(tabA, engineC);
  const colorB = await chipColor(tabA, engineB);
  expect(colorC).not.toBe(colorB);

  // B's tab closes; 11 minutes pass for its record: the host prunes it and no longer lists B.
  await tabB.page.close();
  await expect(tabA.engines.card(engineB).getByTestId('engines.card-alive')).toHaveText(/released/);
  await agePresence(tabA.page, databaseName, engineB, retentionPlusAMinute);
  await expect(tabA.engines.card(engineB)).toHaveCount(0);
  // Tab C, opened after B, keeps its colour (the order-based rule gave it B's once B was gone).
  expect(await chipColor(tabA, engineC)).toBe(colorC);

  // The workflow's history still says Tab B, in B's colour — on this page, and on a page opened afresh.
  await tabA.openWorkflow(workflowId);
  await expect.poll(() => historyOf(tabA, engineB)).toEqual(before);
  await tabA.reload();
  await tabA.openWorkflow(workflowId);
  await expect.poll(() => historyOf(tabA, engineB)).toEqual(before);
  expect(before.color).not.toBe('#8a93a1'); // not the grey of an engine nobody knows
});

test('a closed tab’s card says so and offers no Restart; a stopped engine of an open tab still offers it', async ({
  studio: tabA,
  openTab,
}) => {
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  await tabA.openScreen('engines');
  const card = tabA.engines.card(engineB);
  await expect(card).toHaveAttribute('data-tab', 'open');

  // Shut B's engine down from A: stopped, its page open — Restart is offered, and works.
  await card.getByTestId('engines.shutdown').click();
  await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'stopped');
  await expect(card).toHaveAttribute('data-tab', 'open');
  await expect(card.getByTestId('engines.tab-gone')).toHaveCount(0);
  await card.getByTestId('engines.restart').click();
  await expect.poll(() => tabB.engineId()).not.toBe(engineB);
  const engineB2 = await tabB.engineId();
  await tabB.expectEngineRunning();
  // The old engine's tab now runs the new one: it says so, and offers no Restart.
  await expect(card).toHaveAttribute('data-tab', 'replaced');
  await expect(card.getByTestId('engines.restart')).toHaveCount(0);
  await expect(card.getByTestId('engines.tab-gone')).toContainText('runs a newer engine');

  // Stop the new engine too: the same `stopped` card as before, with Restart.
  const card2 = tabA.engines.card(engineB2);
  await card2.getByTestId('engines.shutdown').click();
  await expect(card2.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'stopped');
  await expect(card2.getByTestId('engines.restart')).toBeVisible();
  // Close B's page: still `stopped`, but now its tab is closed, and the card says that instead of Restart.
  await tabB.page.close();
  await expect(card2).toHaveAttribute('data-tab', 'closed');
  await expect(card2.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'stopped');
  await expect(card2.getByTestId('engines.restart')).toHaveCount(0);
  await expect(card2.getByTestId('engines.card-tab-closed')).toHaveText('tab closed');
  await expect(card2.getByTestId('engines.tab-gone')).toContainText('Its tab is closed');
  // This tab's own card never says so, nor does an open viewer's (a page too, though it offers no Restart).
  await expect(tabA.engines.card(await tabA.engineId())).toHaveAttribute('data-tab', 'open');
  const viewer = await openTab({ viewer: true });
  const viewerCard = tabA.engines.card(await viewer.engineId());
  await expect(viewerCard).toHaveAttribute('data-tab', 'open');
  await expect(viewerCard.getByTestId('engines.card-tab-closed')).toHaveCount(0);
});
