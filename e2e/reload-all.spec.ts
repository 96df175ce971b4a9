import { expect, test } from '@playwright/test';
import { countByOperation, entriesOf, expectNoPageErrors, openTabs } from './fixtures/console';
import { freshDatabaseName } from './fixtures/studio';

/**
 * Reload all (end-to-end scenario 9, docs/quality.md): three tabs run several countdowns between them; every
 * tab reloads at once, mid-run. The new engines (new ids) take every workflow over, every workflow completes,
 * and no tick fires twice.
 */

test('every workflow continues and completes when all tabs reload mid-run, repeating no tick', async ({
  context,
}, testInfo) => {
  const tabs = await openTabs(context, freshDatabaseName(testInfo), 3);
  const firstEngines = await Promise.all(tabs.map((tab) => tab.api.engineId()));
  const ticks = 24;
  const started = await Promise.all(
    tabs.flatMap((tab, index) =>
      [1, 2].map(async (copy) => ({
        starter: firstEngines[index]!,
        workflowId: await tab.api.start(
          'countdown',
          { from: ticks, tickMs: 200 },
          { id: `reload-${index}-${copy}` },
        ),
      })),
    ),
  );
  const workflowIds = started.map(({ workflowId }) => workflowId);
  // Every workflow is owned by the tab that started it and has got somewhere.
  await expect
    .poll(async () =>
      Promise.all(
        started.map(async ({ workflowId, starter }) => {
          const owner = await tabs[0]!.api.owner(workflowId);
          const remaining = await tabs[0]!.api.query<number>(workflowId, 'remaining');
          return owner?.engineId === starter && remaining <= ticks - 2;
        }),
      ),
    )
    .toEqual(workflowIds.map(() => true));

  await Promise.all(tabs.map((tab) => tab.studio.reload()));

  const secondEngines = await Promise.all(tabs.map((tab) => tab.api.engineId()));
  expect(new Set([...firstEngines, ...secondEngines]).size).toBe(6);
  for (const workflowId of workflowIds) {
    const done = await tabs[0]!.api.waitFor(workflowId, 'completed');
    expect(done.result).toEqual({ counted: ticks });
    expect(done.epoch).toBeGreaterThanOrEqual(2);
    const timeline = await tabs[0]!.api.timeline(workflowId);
    const fired = countByOperation(timeline, 'timer-fired');
    expect(fired.size, `${workflowId}: every tick fired`).toBe(ticks);
    expect(
      [...fired.values()].every((count) => count === 1),
      `${workflowId}: no tick fired twice`,
    ).toBe(true);
    expect(entriesOf(timeline, 'started')).toHaveLength(1);
    // Its last custodian is one of the new engines.
    const lastClaim = timeline
      .filter((entry) => entry.kind.startsWith('claim-') && entry.kind !== 'claim-released')
      .at(-1);
    expect(secondEngines).toContain(lastClaim?.engineId);
  }
  expectNoPageErrors(tabs);
});
