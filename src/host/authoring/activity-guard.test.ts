import { describe, expect, it, vi } from 'vitest';
import { defineWorkflow } from '../../engine';
import { TestWorld } from '../../engine/engine.test-support';
import { MemoryStorage } from '../../storage';
import { StorageActivity } from '../storage-activity';
import { startActivitiesWhenQuiet } from './activity-guard';

const calls: string[] = [];
const twoSteps = defineWorkflow({
  name: 'two-steps',
  version: 1,
  *run(ctx, input: { n: number }) {
    const a: number = yield* ctx.activity('first', ({ attempt }) => {
      calls.push(`first#${attempt}`);
      return input.n + 1;
    });
    const b: number = yield* ctx.activity('second', async () => {
      calls.push('second');
      return a * 2;
    });
    return { a, b, workflowId: ctx.workflowId };
  },
});

describe('startActivitiesWhenQuiet', () => {
  it('starts each activity only when the gate says the worker is quiet, and the workflow runs as before', async () => {
    calls.length = 0;
    const gate: (() => void)[] = [];
    const guarded = startActivitiesWhenQuiet(twoSteps, (run) => gate.push(run));
    expect(guarded).toMatchObject({ name: 'two-steps', version: 1 });
    const world = new TestWorld();
    const engine = await world.engine([guarded]);
    await engine.start('two-steps', { n: 1 }, { id: 'w' });
    await engine.idle({ activities: false });
    expect(calls).toEqual([]);
    expect(gate).toHaveLength(1);
    gate.shift()!();
    await vi.waitFor(() => expect(gate).toHaveLength(1));
    expect(calls).toEqual(['first#1']);
    gate.shift()!();
    await world.idle();
    expect(await engine.handle('w').result()).toEqual({ a: 2, b: 4, workflowId: 'w' });
  });

  it('holds an activity back while a storage call of the worker is in flight', async () => {
    calls.length = 0;
    let release!: () => void;
    const base = new MemoryStorage();
    const held = new Proxy(base, {
      get(target, property) {
        if (property === 'get')
          return (key: string) =>
            key === 'held-open'
              ? new Promise<null>((resolve) => (release = () => resolve(null)))
              : target.get(key);
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const activity = new StorageActivity(held);
    const inFlight = activity.storage.get('held-open');
    const world = new TestWorld();
    const engine = await world.engine([startActivitiesWhenQuiet(twoSteps, (run) => activity.whenQuiet(run))]);
    await engine.start('two-steps', { n: 5 }, { id: 'w' });
    await engine.idle({ activities: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toEqual([]);
    release();
    await inFlight;
    await world.idle();
    expect(await engine.handle('w').result()).toEqual({ a: 6, b: 12, workflowId: 'w' });
    expect(calls).toEqual(['first#1', 'second']);
  });
});
