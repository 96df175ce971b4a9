import AxeBuilder from '@axe-core/playwright';
import { expect, StudioPage, test } from './fixtures/studio';

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

  // Chaos drills with a drill's report: the same.
  await studio.openScreen('chaos');
  const race = studio.page.locator('[data-drill="race"]');
  await race.getByTestId('chaos.run').click();
  await expect(race.getByTestId('chaos.report')).toBeVisible({ timeout: 30_000 });
  await studio.page.locator('main').evaluate((main) => main.scrollTo(0, main.scrollHeight));
  await studio.page.mouse.wheel(0, 5_000);
  const chaos = await studio.page.evaluate(() => ({
    scrollTop: document.scrollingElement!.scrollTop,
    scrollHeight: document.scrollingElement!.scrollHeight,
    innerHeight,
  }));
  expect(chaos.scrollTop).toBe(0);
  expect(chaos.scrollHeight).toBeLessThanOrEqual(chaos.innerHeight);
  await expect(studio.page.getByTestId('shell.palette-button')).toBeInViewport();
});

test('rerun: a finished workflow starts again with the same input, under an id that names it, after a confirmation', async ({
  studio,
}) => {
  const input = { from: 2, tickMs: 100 };
  const first = await studio.startViaConsole('countdown', input, { id: 'rerun-original' });
  const detail = await studio.openWorkflow(first);
  await detail.expectStatus('completed');
  await studio.page.getByTestId('detail.rerun-button').click();
  await expect(studio.page.getByTestId('detail.rerun-button-dialog')).toContainText(
    'as rerun-original-rerun-1',
  );
  await studio.page.getByTestId('detail.rerun-button-confirm').click();
  await expect(detail.workflowId).toHaveAttribute('data-full-id', 'rerun-original-rerun-1');
  expect(await studio.describe('rerun-original-rerun-1')).toMatchObject({ workflowType: 'countdown', input });
  expect((await studio.describe(first)).status).toBe('completed');
  // a second rerun of the original takes the next number (the first is still there)
  await studio.openWorkflow(first);
  await studio.page.getByTestId('detail.rerun-button').click();
  await studio.page.getByTestId('detail.rerun-button-confirm').click();
  await expect(detail.workflowId).toHaveAttribute('data-full-id', 'rerun-original-rerun-2');
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

const twiceSource = (version: number) => `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'twice',
  version: ${version},
  *run(ctx) {
    yield* ctx.sleep(1);
    return ${version};
  },
});
`;

test('lists: one Type choice per name, ids keep their distinct ends, Waiting on says what a run waits on', async ({
  studio,
}) => {
  const page = studio.page;
  for (const version of [1, 2])
    await page.evaluate((source) => window.shuttle!.saveDefinition(source), twiceSource(version));
  const prefix = 'drill-handoff-mx6e64ot-0123456789abcdef0123456789';
  const ids: string[] = [];
  for (const suffix of ['alpha-1', 'bravo-2', 'charlie-3'])
    ids.push(
      await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: `${prefix}-${suffix}` }),
    );
  const approval = await studio.startViaConsole(
    'approval',
    {
      requestId: 'EXP-1',
      requester: 'grace',
      summary: 'x',
      amountCents: 1,
      approvers: ['ada'],
      timeoutMs: 600_000,
    },
    { id: 'approval-waits' },
  );
  const failed = await studio.startViaConsole(
    'flaky',
    { failures: 5, maxAttempts: 1, initialIntervalMs: 10 },
    { id: 'flaky-fails' },
  );
  await studio.openScreen('workflows');
  await studio.expectWorkflowStatus(failed, 'failed');

  // The Type filter: "twice" once, saying which versions exist.
  const twice = page.getByTestId('workflows.filter-type').locator('option[value="twice"]');
  await expect(twice).toHaveCount(1);
  await expect(twice).toHaveText('twice · v1, v2');

  // Ids sharing a long start: each row still shows its own end, inside the cell.
  for (const id of ids) {
    const link = studio.row(id).getByTestId('workflows.row-id');
    const tail = link.getByTestId('middle-truncate.tail');
    await expect(tail).toBeVisible();
    expect(id.endsWith((await tail.textContent())!)).toBe(true);
    const [linkBox, tailBox] = [await link.boundingBox(), await tail.boundingBox()];
    expect(tailBox!.x + tailBox!.width).toBeLessThanOrEqual(linkBox!.x + linkBox!.width + 0.5);
  }

  // Waiting on: a waitUntil condition in words; nothing for a finished run (its error is its status's tooltip).
  await expect(studio.row(approval).getByTestId('workflows.row-waiting')).toHaveText('waitUntil condition');
  await expect(studio.row(failed).getByTestId('workflows.row-waiting')).toHaveText('—');
  await expect(studio.rowStatus(failed).locator('xpath=..')).toHaveAttribute('title', /ActivityFailedError/);
});

test('a crashed tab shows the store’s truth: the new owner and epoch, no claims of its own; a restart takes over again', async ({
  studio,
  openTab,
}) => {
  const other = await openTab();
  await studio.page.bringToFront();
  const otherLabel = await other.engineLabel();
  const ownId = await studio.engineId();
  const id = await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: 'crashed-tab' });
  const page = studio.page;
  await studio.openWorkflow(id);
  await expect(page.getByTestId('detail.epoch')).toHaveText('1');
  await expect(page.getByTestId('detail.owner')).toContainText('this tab');

  await studio.openScreen('engines');
  await studio.engines.card(ownId).getByTestId('engines.crash').click();
  // Crash asks first; Keep it does nothing
  await studio.page.getByTestId('engines.crash-dialog').getByRole('button', { name: 'Keep it' }).click();
  await expect(studio.page.getByTestId('engines.crash-dialog')).toHaveCount(0);
  await expect(studio.engineStatus).not.toHaveText('crashed');
  await studio.engines.card(ownId).getByTestId('engines.crash').click();
  await studio.page.getByTestId('engines.crash-confirm').click();
  await expect(studio.engineStatus).toHaveText('crashed');
  const otherId = await other.engineId();
  await expect.poll(async () => (await other.describe(id)).owner?.engineId).toBe(otherId);
  await studio.openWorkflow(id);
  // The other tab took it over at a newer epoch; this tab's page says so, not what its dead engine last knew.
  await expect(page.getByTestId('detail.owner')).toContainText(otherLabel);
  await expect
    .poll(
      async () =>
        (await page.getByTestId('detail.epoch').textContent()) === String((await other.describe(id)).epoch),
    )
    .toBe(true);
  await expect(page.getByTestId('detail.epoch')).not.toHaveText('1');
  await expect(page.getByTestId('detail.owner')).not.toContainText('this tab');
  await expect(page.getByTestId('shell.claims-held')).toHaveText('0 claims');
  // Its card on the Engines screen is still this tab's, crashed.
  await studio.openScreen('engines');
  await expect(studio.engines.card(ownId).getByTestId('engines.card-status')).toHaveAttribute(
    'data-state',
    'crashed',
  );
  await expect(studio.engines.card(ownId)).toContainText('this tab');

  // A new engine in this tab reads for itself again.
  await page.getByTestId('shell.engine-problem').getByRole('button', { name: 'Start a new engine' }).click();
  await expect(studio.engineStatus).toHaveText('running');
  await expect(page.getByTestId('shell.engine-id')).not.toHaveAttribute('data-full-id', ownId);
  const newId = await studio.engineId();
  await expect(studio.engines.card(newId)).toContainText('this tab');
  // The viewer the page read through meanwhile has shut down.
  await expect
    .poll(async () =>
      (await other.page.evaluate(() => window.shuttle!.engines()))
        .filter((engine) => engine.mode === 'viewer')
        .map((engine) => engine.status),
    )
    .toEqual(['stopped']);
});

test('a tab keeps its label for its life, across reloads and restarts; other tabs, and a copy of a live one, get new letters', async ({
  studio,
  openTab,
  context,
  databaseName,
}) => {
  const label = await studio.engineLabel();
  const firstId = await studio.engineId();
  await studio.reload();
  await expect.poll(() => studio.engineId()).not.toBe(firstId);
  expect(await studio.engineLabel()).toBe(label);

  // A restart in place (a new engine, its old epochs fenced) keeps the label too.
  const secondId = await studio.engineId();
  await studio.page.evaluate(() => window.shuttle!.restartThisTab());
  await studio.expectEngineRunning();
  await expect.poll(() => studio.engineId()).not.toBe(secondId);
  expect(await studio.engineLabel()).toBe(label);

  const other = await openTab();
  expect(await other.engineLabel()).not.toBe(label);

  // A tab whose session storage claims the first tab's label (as a duplicated tab's copy would, had the
  // original ended) does not get it while the first tab's engine is alive.
  const copyPage = await context.newPage();
  const liveId = await studio.engineId();
  await copyPage.addInitScript(
    ([db, label]) =>
      sessionStorage.setItem(
        `shuttle.tab-label:${db}`,
        JSON.stringify({ label, engineId: 'an-engine-that-ended', ended: true }),
      ),
    [databaseName, label] as const,
  );
  const copy = await StudioPage.open(copyPage, { databaseName });
  const copyLabel = await copy.engineLabel();
  expect([label, await other.engineLabel()]).not.toContain(copyLabel);
  expect(await studio.engineId()).toBe(liveId);
  await copyPage.close();
});

test('a long workflow id wraps in the page title at 1400 px, clear of the actions beside it', async ({
  studio,
}) => {
  await studio.page.setViewportSize({ width: 1400, height: 900 });
  const id = `a-long-id-${'0123456789'.repeat(12)}`;
  await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id });
  await studio.openWorkflow(id);
  const title = studio.page.locator('#detail-title');
  await expect(title).toContainText(id);
  const box = (await title.boundingBox())!;
  for (const action of ['detail.signal-button', 'detail.cancel-button']) {
    const button = (await studio.page.getByTestId(action).boundingBox())!;
    const overlaps =
      box.x < button.x + button.width &&
      button.x < box.x + box.width &&
      box.y < button.y + button.height &&
      button.y < box.y + box.height;
    expect(overlaps, `${action} overlaps the title`).toBe(false);
  }
  // the whole id is on the page, not cut off (the title is as wide as its text)
  const clipped = await title.evaluate((h1) => h1.scrollWidth > h1.clientWidth + 1);
  expect(clipped).toBe(false);
});

test('the start dialog closes when the studio goes elsewhere (Back)', async ({ studio }) => {
  await studio.openScreen('engines');
  await studio.openScreen('workflows');
  await studio.startDialog.open();
  await expect(studio.page.getByTestId('start.dialog')).toBeVisible();
  await studio.page.goBack();
  await expect(studio.page.getByTestId('shell.nav-engines')).toHaveAttribute('aria-current', 'page');
  await expect(studio.page.getByTestId('start.dialog')).toBeHidden();
  // and it opens again where the studio is now
  await studio.openScreen('workflows');
  await studio.startDialog.open();
  await expect(studio.page.getByTestId('start.dialog')).toBeVisible();
});

test('the start dialog names a definition once, and the start confirmation on the list goes away', async ({
  studio,
}) => {
  const dialog = await studio.startDialog.open();
  const about = studio.page.getByTestId('start.about');
  await dialog.choose('order');
  // Its description starts with its title: the title is not put before it again.
  await expect(about).toContainText('Order fulfilment:');
  expect((await about.textContent())!.match(/Order fulfilment/g)).toHaveLength(1);
  await dialog.choose('countdown');
  await expect(about).toContainText(/^Countdown\. /);

  await dialog.setInput('{ "from": 1, "tickMs": 10 }');
  await dialog.setWorkflowId('started-here');
  await dialog.submit();
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'started-here');
  await studio.openScreen('workflows');
  const notice = studio.page.getByTestId('workflows.start-result');
  await expect(notice).toContainText('Started countdown');
  await notice.getByTestId('workflows.start-result-dismiss').click();
  await expect(notice).toBeHidden();
});

test('engines listed together never share a colour, even when the ninth engine records the first one’s', async ({
  studio,
  openTab,
}) => {
  const other = await openTab();
  await studio.page.bringToFront();
  // Each restart of a tab that forgot its label (its session storage cleared: a tab keeps its label
  // otherwise) gives the other tab's engine the next number; the ninth engine of the database records the
  // same colour as the first (this tab's).
  const own = await studio.hello();
  let others = await other.hello();
  for (let restart = 0; restart < 16 && others.color !== own.color; restart++)
    others = await other.page.evaluate(() => {
      sessionStorage.clear();
      return window.shuttle!.restartThisTab();
    });
  expect(others.color).toBe(own.color);

  await studio.openScreen('engines');
  const chip = (engineId: string) => studio.engines.card(engineId).getByTestId('engines.card-chip');
  await expect(chip(others.engineId)).toBeVisible();
  const background = (engineId: string) =>
    chip(engineId).evaluate((element) => getComputedStyle(element).backgroundColor);
  expect(await background(others.engineId)).not.toBe(await background(own.engineId));
  // The same colours in the other tab.
  await other.openScreen('engines');
  const otherChip = other.engines.card(others.engineId).getByTestId('engines.card-chip');
  await expect(otherChip).toBeVisible();
  expect(await otherChip.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe(
    await background(others.engineId),
  );
});

test('with six engines and a viewer, the header counts six and still shows this tab’s engine id and database', async ({
  studio,
  openTab,
}) => {
  test.setTimeout(90_000);
  for (let tab = 0; tab < 5; tab++) await openTab();
  await openTab({ viewer: true });
  await studio.page.bringToFront();
  const page = studio.page;
  await expect(page.getByTestId('shell.engine-count-value')).toHaveAttribute('data-count', '6');
  for (const width of [1280, 1024]) {
    await page.setViewportSize({ width, height: 800 });
    const panel = page.getByTestId('shell.engine');
    const database = page.getByTestId('shell.database');
    // The database's name keeps its end (test databases differ there), inside the panel.
    const tail = database.getByTestId('middle-truncate.tail');
    await expect(tail).toBeVisible();
    expect(studio.options.databaseName.endsWith((await tail.textContent())!)).toBe(true);
    const [panelBox, tailBox, idBox] = await Promise.all([
      panel.boundingBox(),
      tail.boundingBox(),
      page.getByTestId('shell.engine-id').boundingBox(),
    ]);
    expect(tailBox!.x + tailBox!.width).toBeLessThanOrEqual(panelBox!.x + panelBox!.width);
    expect(idBox!.width, `the engine id shows at ${width} px`).toBeGreaterThan(40);
  }
});

test('the editor knows the workflow API: a ctx member that does not exist is a problem at its line, and ctx. completes', async ({
  studio,
}) => {
  const page = studio.page;
  const definitions = studio.definitions;
  await studio.openScreen('definitions');
  await definitions.newDefinition();
  await definitions.setSource(`import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'typo',
  version: 1,
  *run(ctx, input: { n: number }) {
    yield* ctx.sleeep(100);
    return input.n;
  },
});
`);
  await expect(definitions.compileStatus).toHaveAttribute('data-state', 'problems');
  const problem = definitions.problems.first();
  await expect(problem).toHaveAttribute('data-kind', 'type');
  await expect(problem).toHaveAttribute('data-line', '7');
  // In TypeScript's words, from its worker (the editor's quick check of ctx members stands in until then).
  await expect(problem).toContainText(
    /Property 'sleeep' does not exist on type 'WorkflowContext<.*>'\. Did you mean 'sleep'\?/,
  );
  await expect(definitions.inlineErrors).toHaveCount(1);
  await definitions.saveWithKeyboard();
  await expect(definitions.saveRefused).toBeVisible();
  expect(
    (await page.evaluate(() => window.shuttle!.definitions())).some((item) => item.name === 'typo'),
  ).toBe(false);

  // Completion: after "ctx." the context's members, with their signatures, from the engine's declaration.
  await problem.click(); // puts the cursor on the misspelt member
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('const at = yield* ctx.no');
  const completions = page.locator('.cm-tooltip-autocomplete');
  await expect(completions).toBeVisible();
  const now = completions.getByRole('option', { name: /^now/ });
  await expect(now).toBeVisible();
  // Chosen with the mouse: Enter races the list's own update on a busy machine (it can land as a newline).
  await now.click();
  await expect(definitions.editor).toContainText('const at = yield* ctx.now');
});

test('the list finds text beyond the id prefix, narrows by when a workflow started, nests children, and bulk actions follow', async ({
  studio,
}) => {
  const page = studio.page;
  for (const id of ['alpha-1', 'beta-2'])
    await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id });
  const failed = await studio.startViaConsole(
    'flaky',
    { failures: 5, maxAttempts: 1, initialIntervalMs: 10 },
    { id: 'gamma-3' },
  );
  const parent = await studio.startViaConsole(
    'fan-out',
    { sku: 'TEA', quantity: 1, suppliers: ['acme', 'globex'] },
    { id: 'delta-parent' },
  );
  await studio.openScreen('workflows');
  await studio.expectWorkflowStatus(failed, 'failed');
  const error = (await studio.describe(failed)).error!;

  // Text anywhere in a row: here a word of the failure's message, which is not in any id.
  const word = error.message.split(/\W+/).find((part) => part.length > 4)!;
  await page.getByTestId('workflows.text-search').fill(word.toUpperCase());
  await expect(page.getByTestId('workflows.row')).toHaveCount(1);
  await expect(studio.row(failed)).toBeVisible();
  await expect(page.getByTestId('workflows.summary')).toContainText('1 matching');
  await expect(page).toHaveURL(new RegExp(`text=${word.toUpperCase()}`));

  // Bulk actions act on what the text matches, and purge refuses what it cannot follow.
  await page.getByTestId('workflows.text-search').fill('beta');
  await expect(page.getByTestId('workflows.row')).toHaveCount(1);
  await expect(page.getByTestId('workflows.purge-finished')).toBeDisabled();
  await page.getByTestId('workflows.bulk-terminate').click();
  const dialog = page.getByTestId('workflows.bulk-dialog');
  await expect(dialog.getByTestId('workflows.bulk-count')).toHaveAttribute('data-count', '1');
  await expect(dialog.getByTestId('workflows.bulk-count')).toContainText('containing “beta”');
  await page.keyboard.press('Escape');
  await page.getByTestId('workflows.text-search').fill('');

  // A time range: all of these started just now.
  await page.getByTestId('workflows.filter-since').selectOption('15m');
  await expect(page).toHaveURL(/since=15m/);
  await expect(studio.row('alpha-1')).toBeVisible();
  await expect(studio.row(parent)).toBeVisible();

  // The tree view: the fan-out's children come right under it, one level in.
  await page.getByTestId('workflows.tree-view').check();
  await expect(page).toHaveURL(/view=tree/);
  const children = page.locator('[data-testid="workflows.row"][data-depth="1"]');
  await expect(children).toHaveCount(2);
  const order = await page
    .getByTestId('workflows.row')
    .evaluateAll((rows) =>
      rows
        .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
        .map((row) => `${row.getAttribute('data-depth')}:${row.getAttribute('data-workflow-id')}`),
    );
  const at = order.indexOf(`0:${parent}`);
  expect(order.slice(at + 1, at + 3).every((entry) => entry.startsWith('1:'))).toBe(true);
});

const familySources = [
  `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'nest-top',
  version: 1,
  *run(ctx) {
    return yield* ctx.startChild('nest-mid', {}, { id: 'family-mid' });
  },
});
`,
  `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'nest-mid',
  version: 1,
  *run(ctx) {
    return yield* ctx.startChild('countdown', { from: 600, tickMs: 500 }, { id: 'family-leaf' });
  },
});
`,
];

test('the workflow page shows its family as a tree: ancestors above, children below, grandchildren on demand', async ({
  studio,
}) => {
  const page = studio.page;
  for (const source of familySources)
    await page.evaluate((text) => window.shuttle!.saveDefinition(text), source);
  const top = await studio.startViaConsole('nest-top', undefined, { id: 'family-top' });
  await expect
    .poll(async () => (await studio.describe('family-leaf').catch(() => null))?.status)
    .toBe('running');

  // The middle one: its parent above it, its child below.
  await studio.openWorkflow('family-mid');
  await page.getByTestId('detail.tab-children').click();
  const family = page.getByTestId('detail.family');
  await expect(family.getByTestId('detail.family-ancestor')).toHaveAttribute('data-workflow-id', top);
  await expect(family.getByTestId('detail.family-self')).toContainText('family-mid');
  await expect(family.getByTestId('detail.family-child')).toHaveAttribute('data-workflow-id', 'family-leaf');

  // The top one: its child, and that child's child once opened, a level deeper.
  await studio.openWorkflow(top);
  await page.getByTestId('detail.tab-children').click();
  const mid = family.locator('[data-testid="detail.family-child"][data-workflow-id="family-mid"]');
  await expect(mid).toHaveAttribute('data-depth', '1');
  await mid.getByTestId('detail.family-toggle').click();
  const leaf = family.locator('[data-testid="detail.family-child"][data-workflow-id="family-leaf"]');
  await expect(leaf).toHaveAttribute('data-depth', '2');
  await expect(leaf.locator('[data-status]')).toHaveAttribute('data-status', 'running');
  await leaf.getByTestId('detail.child-link').click();
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'family-leaf');
});

test('pending work: activities with their attempt and next retry, timers with their due time, across the store and per workflow', async ({
  studio,
}) => {
  const page = studio.page;
  const flaky = await studio.startViaConsole(
    'flaky',
    { failures: 3, maxAttempts: 5, initialIntervalMs: 600_000, maxIntervalMs: 600_000 },
    { id: 'pending-flaky' },
  );
  const timer = await studio.startViaConsole(
    'countdown',
    { from: 600, tickMs: 60_000 },
    { id: 'pending-timer' },
  );
  await studio.startViaConsole('countdown', { from: 1, tickMs: 10 }, { id: 'pending-done' });
  await expect.poll(async () => (await studio.describe(flaky)).pending?.leaves[0]?.retrying).toBe(true);

  await page.getByTestId('shell.nav-pending').click();
  await expect(page.getByRole('heading', { level: 1, name: 'Pending work' })).toBeVisible();
  const activity = page.locator(`[data-testid="pending.row"][data-workflow-id="${flaky}"]`);
  await expect(activity).toHaveAttribute('data-kind', 'activity');
  // Attempt 1 failed: attempt 2 is due in ten minutes.
  await expect(activity).toHaveAttribute('data-attempt', '2');
  await expect(activity).toContainText('backing off · attempt 2 due');
  await expect(activity).toContainText('ServiceUnavailableError');
  const retryAt = Number(await activity.getAttribute('data-due-at'));
  expect(retryAt).toBeGreaterThan(Date.now() + 500_000);
  const sleep = page.locator(`[data-testid="pending.row"][data-workflow-id="${timer}"]`);
  await expect(sleep).toHaveAttribute('data-kind', 'timer');
  await expect(sleep.getByTestId('pending.due')).toContainText(/in \d+ s/);
  // A finished workflow waits on nothing.
  await expect(page.locator('[data-testid="pending.row"][data-workflow-id="pending-done"]')).toHaveCount(0);
  // By kind.
  await page.getByTestId('pending.kind-timer').click();
  await expect(activity).toBeHidden();
  await expect(sleep).toBeVisible();

  // The workflow's own Pending tab.
  await studio.openWorkflow(flaky);
  await page.getByTestId('detail.tab-pending').click();
  const own = page.getByTestId('pending.row');
  await expect(own).toHaveCount(1);
  await expect(own).toHaveAttribute('data-due-at', String(retryAt));
});

for (const theme of ['light', 'dark'] as const)
  test(`the new views — pending work, a workflow's Pending and Family tabs, the list's text, time and tree filters — ${theme} theme: no serious or critical axe violation`, async ({
    studio,
  }) => {
    test.setTimeout(120_000);
    const page = studio.page;
    const found: string[] = [];
    const scan = async (where: string) => {
      await page.waitForFunction(() =>
        document.getAnimations().every((animation) => !(animation instanceof CSSTransition)),
      );
      const results = await new AxeBuilder({ page })
        .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
        .analyze();
      expect(results.passes.length, `axe checked something on ${where}`).toBeGreaterThan(0);
      for (const violation of results.violations)
        if (violation.impact === 'serious' || violation.impact === 'critical')
          found.push(
            `${where}: ${violation.id}: ${violation.help} — ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
          );
    };
    await page.emulateMedia({ reducedMotion: 'reduce' });
    await page.getByTestId(`shell.theme-${theme}`).click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    await studio.startViaConsole(
      'fan-out',
      { sku: 'TEA', quantity: 1, suppliers: ['acme', 'globex'] },
      { id: 'a11y-fan' },
    );
    const flaky = await studio.startViaConsole(
      'flaky',
      { failures: 3, maxAttempts: 5, initialIntervalMs: 600_000, maxIntervalMs: 600_000 },
      { id: 'a11y-flaky' },
    );
    await studio.startViaConsole('countdown', { from: 600, tickMs: 60_000 }, { id: 'a11y-timer' });
    await expect.poll(async () => (await studio.describe(flaky)).pending?.leaves[0]?.retrying).toBe(true);

    await page.evaluate(() => {
      location.hash = '#/workflows?text=a11y&since=1h&view=tree';
    });
    await expect(page.locator('[data-testid="workflows.row"][data-depth="1"]')).toHaveCount(2);
    await scan('workflows, filtered by text and time, as a tree');

    await page.getByTestId('shell.nav-pending').click();
    await expect(page.locator(`[data-testid="pending.row"][data-workflow-id="${flaky}"]`)).toBeVisible();
    await scan('pending work');

    await studio.openWorkflow(flaky);
    await page.getByTestId('detail.tab-pending').click();
    await expect(page.getByTestId('pending.row')).toHaveCount(1);
    await scan('a workflow: Pending tab');

    await studio.openWorkflow('a11y-fan');
    await page.getByTestId('detail.tab-children').click();
    await page.getByTestId('detail.family-toggle').first().click();
    await expect(page.getByTestId('detail.family')).toContainText('no children');
    await scan('a workflow: Family tab');
    expect(found, found.join('\n')).toEqual([]);
  });
