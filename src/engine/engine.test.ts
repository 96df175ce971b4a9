import { describe, expect, it } from 'vitest';
import { TestWorld } from './engine.test-support';
import { defineWorkflow } from './workflow';

describe('engine basics', () => {
  it('runs activities and a durable sleep to completion', async () => {
    const calls: string[] = [];
    const wf = defineWorkflow({
      name: 'basic',
      version: 1,
      *run(ctx, input: { n: number }) {
        const a = yield* ctx.activity('double', () => {
          calls.push('double');
          return input.n * 2;
        });
        yield* ctx.sleep(1000);
        const b = yield* ctx.activity('inc', async () => {
          calls.push('inc');
          return a + 1;
        });
        return b;
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([wf]);
    const handle = await engine.start(wf, { n: 5 }, { id: 'w1' });
    await world.idle();
    expect((await engine.describe('w1')).pending?.kind).toBe('sleep');
    await world.advance(1000);
    expect(await handle.result()).toBe(11);
    expect(calls).toEqual(['double', 'inc']);
    const timeline = await engine.timeline('w1');
    expect(timeline.map((e) => e.kind)).toContain('completed');
  });
});
