import { expect, test } from '@playwright/test';
import { hostClaimTimings } from '../src/protocol';
import { countByOperation, entriesOf, expectNoPageErrors, openTabs } from './fixtures/console';
import { outlastingMs } from './fixtures/load';
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
  // The countdowns must still run when the tabs reload: the poll below that sees every one under way (12
  // calls into one tab per round), the three reloads and the new engines' start-up all happen inside them.
  // 24 × 200 ms (4.8 s) was not enough on a loaded machine: they completed before the poll saw them under way.
  // They last `outlastingMs()` (twice TTL + grace; times the CPU throttling rate).
  const ticks = 24;
  const tickMs = Math.ceil(outlastingMs() / ticks);
  const started = await Promise.all(
    tabs.flatMap((tab, index) =>
      [1, 2].map(async (copy) => ({
        starter: firstEngines[index]!,
        workflowId: await tab.api.start(
          'countdown',
          { from: ticks, tickMs },
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
    // The rest of the countdown, after a takeover (at most TTL + grace).
    const done = await tabs[0]!.api.waitFor(
      workflowId,
      'completed',
      ticks * tickMs + hostClaimTimings.ttlMs + hostClaimTimings.graceMs,
    );
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
