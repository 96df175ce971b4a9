import { expect, test } from './fixtures/studio';

/**
 * An activity that never yields (`for (;;) {}`) stalls the engine worker that runs it — and only that: the
 * tab's page stays responsive (it runs on the main thread), and says its engine stopped answering. The stuck
 * worker keeps its Web Lock (it is alive), so no tab counts it dead; its claim simply stops being renewed,
 * and another tab takes the workflow over once the claim TTL and its grace have passed (6 s + 2 s), at
 * epoch 2, and completes it. The definition loops on its first attempt only, so the retry completes.
 */

const spin = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'spin',
  version: 1,
  *run(ctx) {
    const outcome: string = yield* ctx.activity('spin', ({ attempt }) => {
      if (attempt === 1) for (;;) {} // never yields: the worker running it is stuck for good
      return \`done on attempt \${attempt}\`;
    });
    return outcome;
  },
});
`;

test('an endless activity stalls only its own engine: the page stays responsive, and another tab takes over after the TTL', async ({
  studio: tabA,
  openTab,
}) => {
  test.setTimeout(60_000);
  const tabB = await openTab();
  const engineA = await tabA.engineId();
  const engineB = await tabB.engineId();
  const saved = await tabA.page.evaluate((source) => window.shuttle!.saveDefinition(source), spin);
  expect(saved).toMatchObject({ ok: true, name: 'spin' });
  await expect
    .poll(async () =>
      (await tabB.page.evaluate(() => window.shuttle!.definitions())).some(
        (definition) => definition.name === 'spin' && definition.registered,
      ),
    )
    .toBe(true);

  await tabA.page.bringToFront();
  const startedAt = Date.now();
  const id = await tabA.startViaConsole('spin', undefined, { id: 'spin-1' });

  // A's worker is stuck; its page is not: it notices the silence and says so, and it can still be used.
  await expect(tabA.engineStatus).toHaveText('unresponsive', { timeout: 20_000 });
  await tabA.openScreen('definitions');
  await expect(tabA.definitions.item('spin', 1)).toBeVisible();
  await tabA.openScreen('engines');

  // B took the workflow over once A's claim expired (by now, usually), and completed it.
  const detailB = await tabB.openWorkflow(id);
  await detailB.expectStatus('completed', 30_000);
  await expect(detailB.epoch).toHaveText('2');
  expect(await detailB.custodyLaneEngineIds()).toEqual([engineA, engineB]);
  expect((await tabB.describe(id)).result).toBe('done on attempt 2');

  const timeline = await tabB.timeline(id);
  const takeover = timeline.find((entry) => entry.kind === 'claim-taken-over');
  expect(takeover, 'B took the workflow over').toMatchObject({
    engineId: engineB,
    epoch: 2,
    detail: { fromEngineId: engineA, reason: 'expired' },
  });
  expect(takeover!.at - startedAt, 'not before the claim TTL').toBeGreaterThanOrEqual(6_000);
  const attempts = timeline
    .filter((entry) => entry.kind === 'activity-started')
    .map((entry) => [entry.engineId, entry.detail.attempt]);
  expect(attempts).toEqual([
    [engineA, 1],
    [engineB, 2],
  ]);
  // A was never counted dead: its worker still holds its Web Lock.
  expect(
    (await tabB.page.evaluate(() => window.shuttle!.engines())).find((e) => e.engineId === engineA),
  ).toMatchObject({ alive: true });
});
