/**
 * Bad input gets a clear, typed error before anything is written; a corrupt record fails only its
 * workflow, with a message naming the key (docs/quality.md, "Reliability and bad input").
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { SimulatedClock } from './clock';
import { TestWorld } from './engine.test-support';
import { createEngine } from './engine';
import {
  InvalidArgumentError,
  InvalidOptionsError,
  PayloadNotSerializableError,
  PayloadTooLargeError,
  WorkflowNotRegisteredError,
} from './errors';
import { keys } from './keys';
import { defineWorkflow } from './workflow';

const echo = defineWorkflow({
  name: 'echo',
  version: 1,
  *run(ctx, input: unknown) {
    const signal = yield* ctx.waitForSignal('value');
    return { input, signal };
  },
  updates: { set: { handle: (state, arg) => ((state.value = arg as never), 'ok') } },
});

async function storedKeys(world: TestWorld): Promise<string[]> {
  return (await world.storage.scan('')).map((entry) => entry.key);
}

describe('bad input is rejected before anything is written', () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const cases: [string, unknown, RegExp][] = [
    ['a function', { f: () => 1 }, /f is a function/],
    ['a cycle', cycle, /self refers to itself/],
    ['a BigInt', { n: 10n }, /n is a BigInt/],
    ['NaN', [1, Number.NaN], /\[1\] is the number NaN/],
    ['a Date', { when: new Date(0) }, /when is a Date/],
    ['a Map', new Map(), /is a Map/],
    ['a symbol', Symbol('s'), /is a symbol/],
  ];
  for (const [label, value, message] of cases) {
    it(`start input with ${label}`, async () => {
      const world = new TestWorld();
      const engine = await world.engine([echo]);
      const before = await storedKeys(world);
      const error = await engine.start(echo, value, { id: 'x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PayloadNotSerializableError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(/Input of workflow 'x'/);
      expect(await storedKeys(world)).toEqual(before);
    });
  }

  it('oversized input, signal payload and update argument', async () => {
    const world = new TestWorld();
    const engine = await world.engine([echo], { limits: { maxPayloadBytes: 1000 } });
    const big = 'x'.repeat(2000);
    await expect(engine.start(echo, big, { id: 'big' })).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(await storedKeys(world)).toEqual([]);
    await engine.start(echo, 'small', { id: 'ok' });
    await world.idle();
    const before = await storedKeys(world);
    await expect(engine.signal('ok', 'value', big)).rejects.toThrow(
      /Payload of signal 'value' to workflow 'ok' is 2002 bytes, over the limit of 1000 bytes/,
    );
    await expect(engine.signal('ok', 'value', { n: 1n })).rejects.toBeInstanceOf(PayloadNotSerializableError);
    await expect(engine.update('ok', 'set', big)).rejects.toBeInstanceOf(PayloadTooLargeError);
    await expect(engine.update('ok', 'set', () => 1)).rejects.toBeInstanceOf(PayloadNotSerializableError);
    expect(await storedKeys(world)).toEqual(before);
  });

  it('bad ids, unknown types and invalid start options', async () => {
    const world = new TestWorld();
    const engine = await world.engine([echo]);
    await expect(engine.start(echo, 1, { id: '' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(engine.start(echo, 1, { id: 'a'.repeat(257) })).rejects.toThrow(
      /257 characters long; the limit is 256/,
    );
    await expect(engine.start(echo, 1, { id: 'bad\nid' })).rejects.toThrow(/control characters/);
    await expect(engine.start('unknown-type', 1)).rejects.toBeInstanceOf(WorkflowNotRegisteredError);
    await expect(engine.start(echo, 1, { startDelayMs: -5 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(engine.start(echo, 1, { executionTimeoutMs: 0 })).rejects.toThrow(
      /executionTimeoutMs must be a positive number/,
    );
    await expect(engine.start(echo, 1, { idd: 'typo' } as never)).rejects.toThrow(
      /Unknown start option 'idd'/,
    );
    expect(() => engine.handle('')).toThrow(InvalidArgumentError);
    await expect(engine.signal('x', '', 1)).rejects.toThrow(/Signal name must be a non-empty string/);
    expect(await storedKeys(world)).toEqual([]);
  });

  it('invalid engine options quote the values', async () => {
    const storage = new MemoryStorage();
    await expect(createEngine({ storage, ownership: 'workflow_lease' as never })).rejects.toThrow(
      /Unknown ownership mode "workflow_lease"/,
    );
    await expect(createEngine({ storage, limits: { maxPayloadBytes: -1 } })).rejects.toThrow(
      /limits.maxPayloadBytes must be a positive number of milliseconds|got -1/,
    );
    await expect(createEngine({ storage: {} as never })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(createEngine({ storage, backgroundTasks: 'sometimes' as never })).rejects.toThrow(
      /"sometimes"/,
    );
  });

  it('a clock outside 2000–2200 is refused at start, before anything is written', async () => {
    const storage = new MemoryStorage();
    for (const ownership of ['none', 'workflow-lease'] as const) {
      const nearEpoch = new SimulatedClock(1_000_000);
      const refused = createEngine({ storage, ownership, clock: nearEpoch, backgroundTasks: 'manual' });
      await expect(refused).rejects.toBeInstanceOf(InvalidOptionsError);
      await expect(
        createEngine({ storage, ownership, clock: nearEpoch, backgroundTasks: 'manual' }),
      ).rejects.toThrow(/now\(\) returned 1000000.*between 2000-01-01T00:00:00.000Z and 2200/);
    }
    expect(await storage.scan('')).toEqual([]);
    // A real date works, and claims hold with it.
    const world = new TestWorld({ storage });
    const engine = await world.engine([echo], {
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    });
    const handle = await engine.start(echo, 1);
    await world.advance(10_000, { stepMs: 1000 });
    expect((await handle.describe()).owner?.engineId).toBe(engine.id);
    await world.shutdownAll();
  });
});

describe('a corrupt record fails only its workflow', () => {
  it('names the key and lets the other workflows carry on', async () => {
    const world = new TestWorld();
    const a = await world.engine([echo]);
    await a.start(echo, 1, { id: 'good' });
    await a.start(echo, 2, { id: 'bad' });
    await world.idle();
    world.crash(a);
    await world.storage.batch([{ type: 'put', key: keys.checkpoint('bad'), value: '{not json' }]);
    const b = await world.engine([echo]);
    await world.idle();
    await b.signal('good', 'value', 'v');
    await world.idle();
    expect(await b.handle('good').result()).toEqual({ input: 1, signal: 'v' });
    const bad = await b.describe('bad');
    expect(bad.corrupt).toMatchObject({ key: 'wf-ckpt:bad' });
    expect(bad.corrupt?.message).toMatch(/Stored record 'wf-ckpt:bad' is corrupt \(not valid JSON\)/);
    expect(b.events.some((e) => e.type === 'workflow.corrupt' && e.key === 'wf-ckpt:bad')).toBe(true);
    expect(b.warnings.some((w) => w.name === 'WorkflowCorruptWarning')).toBe(true);
    // the corrupt record is left untouched for inspection
    expect(await world.storage.get(keys.checkpoint('bad'))).toBe('{not json');
    const list = await b.list();
    expect(list.items.find((item) => item.workflowId === 'bad')?.corrupt?.key).toBe('wf-ckpt:bad');
  });

  it('a bad epoch fails the workflow closed under workflow-lease', async () => {
    const world = new TestWorld();
    const a = await world.engine([echo], {
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    });
    await a.start(echo, 1, { id: 'good' });
    await a.start(echo, 2, { id: 'bad' });
    await world.idle();
    world.crash(a);
    await world.storage.batch([{ type: 'put', key: keys.ownerEpoch('bad'), value: 'seven' }]);
    const b = await world.engine([echo], {
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    });
    await world.advance(6000, { stepMs: 1000 });
    expect(b.ownedWorkflows()).toEqual(['good']);
    expect((await b.describe('bad')).corrupt?.key).toBe('wf-owner-epoch:bad');
    expect(await world.storage.get(keys.ownerEpoch('bad'))).toBe('seven');
  });
});
