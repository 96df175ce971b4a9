/**
 * A signal sent while its workflow is busy with something else — an activity in flight, an update — is
 * buffered, and the run takes it the moment it reaches `waitForSignal`: the engine driving it re-reads its
 * buffered signals after the step in progress, instead of leaving the signal for the next background poll
 * (which, at the default 5 s, once made such a signal wait that long on MemoryStorage). Background tasks are
 * manual here, so no poll ever runs: only the delivery path can consume the signal. Over MemoryStorage,
 * PostgreSQL and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from './engine';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow } from './workflow';

/** Ends the activity in flight. */
const gate: { release?: () => void } = {};

const approval = defineWorkflow({
  name: 'approval',
  version: 1,
  *run(ctx) {
    yield* ctx.activity('prepare', () => new Promise<void>((resolve) => (gate.release = resolve)));
    const approved = yield* ctx.waitForSignal<{ by: string }>('approve');
    return `approved by ${approved?.by}`;
  },
  updates: {
    note: { handle: (state: { note?: string }, arg) => ((state.note = arg as string), 'noted') },
  },
});

const twice = defineWorkflow({
  name: 'twice',
  version: 1,
  *run(ctx) {
    yield* ctx.activity('prepare', () => new Promise<void>((resolve) => (gate.release = resolve)));
    const first = yield* ctx.waitForSignal<number>('go');
    const second = yield* ctx.waitForSignal<number>('go');
    const third = yield* ctx.waitForSignal<number>('go', { timeoutMs: 60_000 });
    return [first, second, third ?? null];
  },
});

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('a signal sent before the workflow waits for it, on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const ownership of ['none', 'workflow-lease'] as const)
    it(`is taken when the workflow reaches waitForSignal, with no poll (${ownership})`, async () => {
      const engine = await createEngine({
        storage: await store.open(),
        workflows: [approval],
        ownership,
        backgroundTasks: 'manual',
      });
      delete gate.release;
      const handle = await engine.start(approval, undefined, { id: `approval-${ownership}` });
      const inFlight = () => gate.release;
      while (!inFlight()) await new Promise((resolve) => setTimeout(resolve, 1));
      // The activity is in flight: the signal and an update arrive now.
      await engine.signal(handle.workflowId, 'approve', { by: 'ada' });
      expect(await engine.update(handle.workflowId, 'note', 'checked')).toBe('noted');
      inFlight()!();
      await engine.idle();
      expect((await engine.describe(handle.workflowId)).status).toBe('completed');
      expect(await handle.result()).toBe('approved by ada');
      await engine.shutdown();
    });

  it('several signals sent while it is busy: each taken once, in order, by the waits it reaches in one turn', async () => {
    const engine = await createEngine({
      storage: await store.open(),
      workflows: [twice],
      ownership: 'workflow-lease',
      backgroundTasks: 'manual',
    });
    delete gate.release;
    const handle = await engine.start(twice, undefined, { id: 'twice' });
    const inFlight = () => gate.release;
    while (!inFlight()) await new Promise((resolve) => setTimeout(resolve, 1));
    await engine.signal('twice', 'go', 1);
    await engine.signal('twice', 'go', 2);
    inFlight()!();
    await engine.idle();
    // Two waits taken in the turn the activity ended; the third still waits.
    expect((await engine.describe('twice')).pending?.kind).toBe('signal');
    expect((await engine.describe('twice')).bufferedSignals).toEqual([]);
    await engine.signal('twice', 'go', 3);
    await engine.idle();
    expect(await handle.result()).toEqual([1, 2, 3]);
    const consumed = (await engine.timeline('twice')).filter((entry) => entry.kind === 'signal-consumed');
    expect(consumed).toHaveLength(3);
    await engine.shutdown();
  });
});
