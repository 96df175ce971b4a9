import type { CDPSession, Page } from '@playwright/test';
import { studioClaimTimings } from '../src/host/protocol';
import { expect, test } from './fixtures/studio';

/**
 * Page Lifecycle freeze (issue 14): when the browser freezes a background tab (`freeze` on `document`; its
 * worker is frozen with it), the tab hands its workflows over at once, as a closing tab does, instead of
 * making the others wait for its claims to lapse (TTL + grace). When it resumes it rejoins with a fresh
 * engine, and the workflow completes with every step recorded once.
 *
 * The freeze is asked for through CDP (`Page.setWebLifecycleState`). The Chromium these tests run (156,
 * headless, and headed under Xvfb too) answers it with success but neither hides nor freezes the page, so no
 * `freeze` fires; the test then fires the lifecycle events itself, on the document, exactly as the browser
 * would. Either way the code under test is the studio's own `freeze` and `resume` handlers.
 */

const { ttlMs, graceMs } = studioClaimTimings;
/** "At once": well before the claim could lapse on its own. */
const takeoverBudgetMs = (ttlMs + graceMs) / 2;

/** Asks the browser to freeze `page`; fires `freeze` on its document if the browser did not. */
async function freeze(session: CDPSession, page: Page): Promise<'browser' | 'dispatched'> {
  await page.evaluate(() => {
    (window as { frozeAt?: number }).frozeAt = undefined;
    document.addEventListener('freeze', () => ((window as { frozeAt?: number }).frozeAt = Date.now()), {
      once: true,
    });
  });
  await session.send('Page.setWebLifecycleState', { state: 'frozen' });
  // A frozen page runs no script: this read then settles only after the resume.
  const fired = await Promise.race([
    page.evaluate(() => (window as { frozeAt?: number }).frozeAt !== undefined),
    new Promise<'frozen'>((resolve) => setTimeout(() => resolve('frozen'), 1_000)),
  ]);
  if (fired === 'frozen' || fired) return 'browser';
  await page.evaluate(() => document.dispatchEvent(new Event('freeze')));
  return 'dispatched';
}

async function resume(session: CDPSession, page: Page, how: 'browser' | 'dispatched'): Promise<void> {
  await session.send('Page.setWebLifecycleState', { state: 'active' });
  if (how === 'dispatched') await page.evaluate(() => document.dispatchEvent(new Event('resume')));
}

test('a tab the browser freezes hands its workflow over at once, and rejoins with a new engine on resume', async ({
  studio: tabA,
  openTab,
  context,
}) => {
  test.setTimeout(45_000);
  const engineA = await tabA.engineId();
  const tabB = await openTab();
  const engineB = await tabB.engineId();
  const steps = Array.from({ length: 24 }, (_, index) => ({ name: `step-${index + 1}`, ms: 250 }));
  const workflowId = await tabA.startViaConsole('slow-steps', { steps }, { id: 'lifecycle-frozen-1' });
  const detailB = await tabB.openWorkflow(workflowId);
  await expect(detailB.ownerEngine).toHaveAttribute('data-engine-id', engineA);
  await expect
    .poll(
      async () =>
        (await tabB.timeline(workflowId)).filter((entry) => entry.kind === 'activity-completed').length,
      { intervals: [50] },
    )
    .toBeGreaterThanOrEqual(2);

  const session = await context.newCDPSession(tabA.page);
  const frozenAt = Date.now();
  const how = await freeze(session, tabA.page);
  test.info().annotations.push({ type: 'freeze', description: how });

  // B takes it over at once, at epoch 2.
  await expect(detailB.ownerEngine).toHaveAttribute('data-engine-id', engineB, { timeout: takeoverBudgetMs });
  await expect(detailB.epoch).toHaveText('2');
  const claimedByB = (await tabB.timeline(workflowId)).find(
    (entry) =>
      (entry.kind === 'claim-acquired' || entry.kind === 'claim-taken-over') && entry.engineId === engineB,
  );
  expect(claimedByB, 'B claimed the workflow').toBeTruthy();
  const takeoverMs = claimedByB!.at - frozenAt;
  test.info().annotations.push({ type: 'takeover-ms', description: String(takeoverMs) });
  expect(takeoverMs, `B took over within ${takeoverBudgetMs} ms of the freeze`).toBeLessThan(
    takeoverBudgetMs,
  );

  // A resumes with a new engine, running, with no storm of errors.
  const errorsAfterResume: string[] = [];
  tabA.page.on('console', (message) => {
    if (message.type() === 'error') errorsAfterResume.push(message.text());
  });
  await resume(session, tabA.page, how);
  await expect
    .poll(() => tabA.page.getByTestId('shell.engine-id').getAttribute('data-full-id'))
    .not.toBe(engineA);
  await tabA.expectEngineRunning();
  // The same latency from the page's own `freeze` event (without the CDP round trips), for the record.
  const frozeAtInPage = await tabA.page.evaluate(() => (window as { frozeAt?: number }).frozeAt);
  if (frozeAtInPage !== undefined)
    test.info().annotations.push({
      type: 'takeover-ms-from-event',
      description: String(claimedByB!.at - frozeAtInPage),
    });
  const engineA2 = await tabA.engineId();
  expect(engineA2).not.toBe(engineB);

  await detailB.expectStatus('completed', 20_000);
  const timeline = await tabB.timeline(workflowId);
  // Every step completed once, in order, whoever ran it.
  expect(
    timeline.filter((entry) => entry.kind === 'activity-completed').map((entry) => entry.detail.name),
  ).toEqual(steps.map((step) => step.name));
  // Epochs only rise along the durable timeline.
  const epochs = timeline.map((entry) => entry.epoch);
  expect(epochs).toEqual([...epochs].sort((a, b) => a - b));
  expect(Math.max(...epochs)).toBe(2);
  // The frozen engine wrote nothing after the freeze: nothing of it was refused, nothing of it came later.
  const refused = await tabB.page.evaluate((id) => window.shuttle!.fenceRejections(id), workflowId);
  expect(refused.filter((rejection) => rejection.engineId === engineA)).toEqual([]);
  expect(timeline.filter((entry) => entry.engineId === engineA && entry.at > claimedByB!.at)).toEqual([]);
  // The resumed tab sees the workflow as finished, owned by B's engine in the end.
  const detailA = await tabA.openWorkflow(workflowId);
  await detailA.expectStatus('completed');
  expect(await detailA.custodyLaneEngineIds()).toEqual([engineA, engineB]);
  expect(errorsAfterResume, 'errors logged in the resumed tab').toEqual([]);
});
