import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { ClaimHolder, ReclaimOutcome, StartOptions } from '../src/engine';
import { crashTab, entriesOf, expectNoPageErrors, openTabs, type PageError } from './fixtures/console';
import { slowdown } from './fixtures/load';
import { StudioPage, expect, test } from './fixtures/studio';

/**
 * Claims and idempotency in the studio: the start dialog's idempotency key and signal-with-start, the claim's liveness and
 * "Take over" on a workflow's page, and the console's `shuttle.claimHolder(id)` / `shuttle.reclaim(id)`.
 *
 * Engine tabs take a dead holder's workflows over by themselves within moments (their death watch), so the
 * Take over button is observed enabled from a viewer tab (`?engine=off`) with no engine tab left: the viewer
 * sees the dead holder, and its engine, which claims nothing, refuses the takeover in its own words. A new
 * engine tab then takes the workflow over by itself, and the viewer's page says the claim is live again.
 */

/** The built-in approval: waits two minutes for a decision, with no timer due before (nothing moves it). */
const approvalInput = {
  requestId: 'EXP-11',
  requester: 'grace',
  summary: 'Conference travel',
  amountCents: 1_000,
  approvers: ['ada', 'linus'],
  timeoutMs: 120_000,
};

function claimHolder(page: Page, workflowId: string): Promise<ClaimHolder | null> {
  return page.evaluate((id) => window.shuttle!.claimHolder(id), workflowId);
}

/** `shuttle.reclaim(id)` in the page, its rejection as data. */
function tryReclaim(
  page: Page,
  workflowId: string,
): Promise<{ ok: true; value: ReclaimOutcome } | { ok: false; error: PageError }> {
  return page.evaluate(async (id) => {
    try {
      return { ok: true as const, value: await window.shuttle!.reclaim(id) };
    } catch (caught) {
      const error = caught as Error & Record<string, unknown>;
      return { ok: false as const, error: { ...error, name: error.name, message: error.message } };
    }
  }, workflowId);
}

/** Serious or critical WCAG 2 A / AA violations inside `selector` (the new controls), as readable lines. */
async function axeViolations(page: Page, selector: string): Promise<string[]> {
  const results = await new AxeBuilder({ page })
    .include(selector)
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    );
}

function startRun(page: Page, type: string, input: unknown, options: StartOptions) {
  return page.evaluate(({ type, input, options }) => window.shuttle!.startRun(type, input, options), {
    type,
    input,
    options,
  });
}

test('a repeated idempotency key in the start dialog starts nothing and says it returned the existing run', async ({
  studio,
}) => {
  test.setTimeout(90_000); // two trips through the dialog and an accessibility scan, on a busy machine
  const dialog = await studio.startDialog.open();
  await dialog.choose('countdown');
  await dialog.setInput('{ "from": 300, "tickMs": 200 }');
  await studio.page.getByTestId('start.more-options').click();
  await studio.page.getByTestId('start.idempotency-key').fill('e2e-order-42');
  await dialog.submit();
  await expect(dialog.root).toBeHidden();
  const firstId = (await studio.detail.workflowId.getAttribute('data-full-id'))!;
  expect(firstId).toBeTruthy();

  // Again with the same key, another input and an id of its own: the key wins, and the dialog says so.
  await studio.openScreen('workflows');
  await studio.startDialog.open();
  await dialog.choose('countdown');
  await dialog.setInput('{ "from": 3 }');
  await dialog.setWorkflowId('a-second-countdown');
  await studio.page.getByTestId('start.more-options').click();
  await studio.page.getByTestId('start.idempotency-key').fill('e2e-order-42');
  await dialog.submit();
  const notice = studio.page.getByTestId('start.nothing-started');
  await expect(notice).toBeVisible();
  await expect(dialog.root).toBeVisible();
  await expect(notice).toHaveAttribute('data-workflow-id', firstId);
  await expect(notice).toContainText(`already started workflow ${firstId} (run 1)`);
  await expect(notice).toContainText('returned that existing run');
  // The new field and the notice are labelled and legible.
  expect(await axeViolations(studio.page, '[data-testid="start.dialog"]')).toEqual([]);

  // One workflow in the database; the id the second start asked for was never created.
  const ids = await studio.page.evaluate(async () =>
    (await window.shuttle!.list({})).items.map((item) => item.workflowId),
  );
  expect(ids).toEqual([firstId]);
  expect(await startRun(studio.page, 'countdown', {}, { idempotencyKey: 'e2e-order-42' })).toEqual({
    workflowId: firstId,
    run: 1,
    started: false,
  });

  await studio.page.getByTestId('start.open-existing').click();
  await expect(dialog.root).toBeHidden();
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', firstId);
});

test('signal-with-start from the dialog needs an id, starts the workflow with its signal, and signals a running one', async ({
  studio,
}) => {
  test.setTimeout(90_000); // two orders run to completion (charge retries, packing, a shipment child)
  const dialog = await studio.startDialog.open();
  await dialog.choose('order');
  await studio.page.getByTestId('start.more-options').click();
  await studio.page.getByTestId('start.with-signal').check();
  await studio.page.getByTestId('start.signal-name').fill('approve');
  await studio.page.getByTestId('start.signal-payload').fill('{ "ok": true, "by": "dana" }');
  // No id yet: refused before any round trip, with what to do.
  await expect(dialog.fieldError).toContainText('Signal-with-start needs a workflow id');
  await expect(dialog.submitButton).toBeDisabled();
  expect(await axeViolations(studio.page, '[data-testid="start.dialog"]')).toEqual([]);
  await dialog.setWorkflowId('order-with-approval');
  await expect(dialog.fieldError).toBeHidden();
  await expect(dialog.submitButton).toHaveText('Signal with start');
  await dialog.submit();
  await expect(dialog.root).toBeHidden();
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'order-with-approval');

  // The order took the approval it was started with: nobody signalled it afterwards.
  const done = await studio.page.evaluate(() =>
    window.shuttle!.waitFor('order-with-approval', 'completed', { timeoutMs: 30_000 }),
  );
  expect(done.result).toMatchObject({ status: 'delivered', approvedBy: 'dana' });
  const timeline = await studio.timeline('order-with-approval');
  expect(entriesOf(timeline, 'signal-received').map((entry) => entry.detail.name)).toEqual(['approve']);
  expect(entriesOf(timeline, 'signal-consumed').map((entry) => entry.detail.name)).toEqual(['approve']);

  // A running workflow is only signalled: the dialog says nothing was started, and that order takes it.
  const running = await studio.page.evaluate(async () => {
    const order = (await window.shuttle!.definitions()).find((definition) => definition.name === 'order');
    return window.shuttle!.start('order', order!.sampleInput, { id: 'order-waiting' });
  });
  await studio.openScreen('workflows');
  await studio.startDialog.open();
  await dialog.choose('order');
  await dialog.setWorkflowId(running);
  await studio.page.getByTestId('start.more-options').click();
  await studio.page.getByTestId('start.with-signal').check();
  await studio.page.getByTestId('start.signal-name').fill('approve');
  await studio.page.getByTestId('start.signal-payload').fill('{ "ok": true, "by": "lee" }');
  await dialog.submit();
  const notice = studio.page.getByTestId('start.nothing-started');
  await expect(notice).toHaveAttribute('data-kind', 'signal-with-start');
  await expect(notice).toContainText(
    `Workflow ${running} was already running (run 1): signal approve was delivered to it`,
  );
  const approved = await studio.page.evaluate(
    (id) => window.shuttle!.waitFor(id, 'completed', { timeoutMs: 30_000 }),
    running,
  );
  expect(approved).toMatchObject({ run: 1, result: { status: 'delivered', approvedBy: 'lee' } });
  expect(await studio.page.evaluate((id) => window.shuttle!.runs(id), running)).toHaveLength(1);
});

test('Take over is disabled while the holder is live, enabled once it is dead, and refused by a viewer; the console says the same', async ({
  context,
  databaseName,
}) => {
  test.setTimeout(120_000 * slowdown()); // four tabs, one of them crashed, and a fifth opened
  const [a, b] = await openTabs(context, databaseName, 2);
  const viewerPage = await context.newPage();
  const viewer = await StudioPage.open(viewerPage, { databaseName, viewer: true });
  const aId = await a!.api.engineId();
  const { workflowId } = await startRun(a!.page, 'approval', approvalInput, { id: 'expense-11' });
  await expect.poll(() => a!.api.owner(workflowId)).toEqual({ engineId: aId, epoch: 1 });

  // Live: every page shows it, and nobody may take it.
  const detail = await viewer.openWorkflow(workflowId);
  const liveness = viewerPage.getByTestId('detail.claim-liveness');
  const takeOver = viewerPage.getByTestId('detail.take-over-button');
  await expect(liveness).toHaveAttribute('data-liveness', 'live');
  await expect(liveness).toHaveText('live');
  await expect(takeOver).toBeDisabled();
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', aId);
  await b!.studio.openWorkflow(workflowId);
  await expect(b!.page.getByTestId('detail.claim-liveness')).toHaveAttribute('data-liveness', 'live');
  await expect(b!.page.getByTestId('detail.take-over-button')).toBeDisabled();

  expect(await claimHolder(viewerPage, workflowId)).toMatchObject({ engineId: aId, epoch: 1, live: true });
  // An engine tab is refused with the engine's outcome, naming the live holder; a viewer with a typed error.
  const refused = await tryReclaim(b!.page, workflowId);
  expect(refused).toMatchObject({
    ok: true,
    value: { outcome: 'held-live', holder: { engineId: aId, epoch: 1, live: true } },
  });
  const fromViewer = await tryReclaim(viewerPage, workflowId);
  expect(fromViewer).toMatchObject({ ok: false, error: { name: 'ObserverCannotClaimError', workflowId } });
  if (!fromViewer.ok) expect(fromViewer.error.message).toContain('viewer (?engine=off)');

  // B leaves gracefully (it held nothing); then A's tab crashes: no engine tab is left to take it over.
  await b!.page.close({ runBeforeUnload: true });
  await crashTab(context, a!.page);

  await expect(liveness).toHaveAttribute('data-liveness', 'dead');
  await expect(liveness).toHaveText('holder dead');
  await expect(takeOver).toBeEnabled();
  expect(await claimHolder(viewerPage, workflowId)).toMatchObject({ engineId: aId, epoch: 1, live: false });
  await takeOver.click();
  const error = viewerPage.getByTestId('detail.take-over-error');
  await expect(error).toHaveAttribute('data-error-name', 'ObserverCannotClaimError');
  await expect(error).toContainText('claims no workflow');
  expect(await axeViolations(viewerPage, '[data-testid="detail.owner"]')).toEqual([]);
  // The refusal wrote nothing: the dead engine is still the holder.
  expect(await claimHolder(viewerPage, workflowId)).toMatchObject({ engineId: aId, epoch: 1, live: false });

  // A new engine tab takes it over by itself (it recovers at start): live again, at the next epoch.
  const [c] = await openTabs(context, databaseName, 1);
  const cId = await c!.api.engineId();
  await expect(detail.ownerEngine).toHaveAttribute('data-engine-id', cId);
  await expect(liveness).toHaveAttribute('data-liveness', 'live');
  await expect(takeOver).toBeDisabled();
  expect(await claimHolder(c!.page, workflowId)).toMatchObject({ engineId: cId, epoch: 2, live: true });
  expect(await tryReclaim(c!.page, workflowId)).toEqual({
    ok: true,
    value: { outcome: 'already-held', epoch: 2 },
  });
  const takeovers = entriesOf(await c!.api.timeline(workflowId), 'claim-taken-over');
  expect(takeovers.map((entry) => entry.detail)).toEqual([
    expect.objectContaining({ fromEngineId: aId, toEngineId: cId, toEpoch: 2 }),
  ]);
  expectNoPageErrors([a!, c!]);
});

test('the console answers claimHolder and reclaim for unknown and finished workflows in the engine’s words', async ({
  studio,
}) => {
  const page = studio.page;
  const unknown = await page.evaluate(async () => {
    try {
      await window.shuttle!.claimHolder('nobody-started-this');
      return null;
    } catch (caught) {
      return { name: (caught as Error).name, message: (caught as Error).message };
    }
  });
  expect(unknown).toMatchObject({ name: 'WorkflowNotFoundError' });
  expect(unknown?.message).toContain('nobody-started-this');
  const id = await studio.startViaConsole('countdown', { from: 1, tickMs: 10 });
  await page.evaluate((workflowId) => window.shuttle!.waitFor(workflowId, 'completed'), id);
  expect(await claimHolder(page, id)).toBeNull();
  expect(await tryReclaim(page, id)).toEqual({ ok: true, value: { outcome: 'not-running' } });
  const help = await page.evaluate(() => {
    const lines: string[] = [];
    const log = console.log;
    console.log = (text: string) => lines.push(text);
    try {
      window.shuttle!.help();
    } finally {
      console.log = log;
    }
    return lines.join('\n');
  });
  expect(help).toContain('claimHolder(id)');
  expect(help).toContain('reclaim(id)');
});
