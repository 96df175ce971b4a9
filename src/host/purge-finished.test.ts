import { describe, expect, it } from 'vitest';
import { createEngine, defineWorkflow, InvalidArgumentError } from '../engine';
import { MemoryStorage } from '../storage/memory';
import { purgeFinished } from './purge-finished';

const done = defineWorkflow({
  name: 'done',
  version: 1,
  *run(_ctx, input: number) {
    return input;
  },
});
const waits = defineWorkflow({
  name: 'waits',
  version: 1,
  *run(ctx) {
    return yield* ctx.waitForSignal('go');
  },
});

describe('purge by filter', () => {
  it('counts, then purges only the finished workflows the filter matches; a running status is refused', async () => {
    const engine = await createEngine({ storage: new MemoryStorage(), workflows: [done, waits] });
    for (let n = 0; n < 7; n++) await (await engine.start(done, n, { id: `done-${n}` })).result();
    const finishedWaiter = await engine.start(waits, undefined, { id: 'waits-1' });
    await finishedWaiter.signal('go', 1);
    await finishedWaiter.result();
    await engine.start(waits, undefined, { id: 'waits-2' });

    expect(await purgeFinished(engine, { workflowType: 'done' }, true)).toEqual({
      matched: 7,
      purged: 0,
      failed: [],
    });
    expect((await engine.list()).items).toHaveLength(9);
    expect(await purgeFinished(engine, { workflowType: 'done' }, false)).toEqual({
      matched: 7,
      purged: 7,
      failed: [],
    });
    expect((await engine.list()).items.map(({ workflowId }) => workflowId).sort()).toEqual([
      'waits-1',
      'waits-2',
    ]);
    await expect(purgeFinished(engine, { status: 'running' }, true)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await purgeFinished(engine, {}, false)).toMatchObject({ matched: 1, purged: 1 });
    expect((await engine.list()).items.map(({ workflowId }) => workflowId)).toEqual(['waits-2']);
    await engine.shutdown();
  });
});
