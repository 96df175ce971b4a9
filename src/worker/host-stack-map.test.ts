/**
 * An app's own stack mapper (`runBrowserEngine({ mapStack })`, the host's `mapStack` option) is applied to a
 * recorded failure's stack, after the host mapped the frames of definitions it compiled.
 */
import { afterEach, expect, it } from 'vitest';
import { defineWorkflow, type SerializedError } from '../engine';
import { MemoryStorage } from '../storage';
import { openTestTab, sharedStorage, type TestTab } from './host.test-support';

const tabs: TestTab[] = [];
afterEach(async () => {
  await Promise.all(tabs.splice(0).map((tab) => tab.close()));
});

const failing = defineWorkflow({
  name: 'bundled-app',
  version: 1,
  *run(ctx) {
    yield* ctx.activity(
      'charge',
      () => {
        throw new Error('card declined');
      },
      { retry: { maxAttempts: 1 } },
    );
  },
});

it("applies the app's mapStack to a recorded failure, once, when it is recorded", async () => {
  const calls: string[] = [];
  const tab = openTestTab({
    storage: sharedStorage(new MemoryStorage()),
    workflows: [failing],
    host: {
      mapStack: (stack) => {
        calls.push(stack);
        return stack.replaceAll('host-stack-map.test.ts', 'app-source.ts');
      },
    },
  });
  tabs.push(tab);
  await tab.client.ready;
  const engine = await tab.host.engine();
  const handle = await engine.start('bundled-app', undefined, { id: 'b-1' });
  await handle.result().catch(() => undefined);
  const failed = (await engine.timeline('b-1')).find((entry) => entry.kind === 'activity-failed');
  const stack = (failed!.detail as { error: SerializedError }).error.stack!;
  expect(stack).toMatch(/^Error: card declined\n/);
  expect(stack).toContain('app-source.ts:');
  expect(stack).not.toContain('host-stack-map.test.ts');
  expect(calls.filter((call) => call.startsWith('Error: card declined'))).toHaveLength(1);
});
