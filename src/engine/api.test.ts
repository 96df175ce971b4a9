/**
 * The engine's public API (docs/engine.md, Public API): one describe block per method.
 */
import { describe, expect, it } from 'vitest';
import { TestWorld } from './engine.test-support';
import {
  EngineDisposedError,
  InvalidWorkflowStateError,
  QueryFailedError,
  UpdateRejectedError,
  UpdateTimeoutError,
  WorkflowAlreadyExistsError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  WorkflowTerminatedError,
  WorkflowTimedOutError,
} from './errors';
import type { EngineEvent } from './events';
import { defineWorkflow } from './workflow';

const waiter = defineWorkflow({
  name: 'waiter',
  version: 1,
  *run(ctx, input: { label: string }) {
    ctx.state.label = input.label;
    ctx.state.count = 0;
    const payload = yield* ctx.waitForSignal<string>('go');
    ctx.state.stage = 'after-signal';
    yield* ctx.sleep(1000);
    return { label: input.label, payload, count: ctx.state.count };
  },
  queries: {
    label: (state) => state.label,
    count: (state) => state.count,
    broken: () => {
      throw new Error('query exploded');
    },
  },
  updates: {
    increment: {
      validate: (arg) => {
        if (typeof arg !== 'number' || arg <= 0) throw new Error('increment must be a positive number');
      },
      handle: (state, arg) => {
        state.count = (state.count as number) + (arg as number);
        return state.count;
      },
    },
    explode: {
      handle: (state) => {
        state.count = 999;
        throw new Error('handler failed');
      },
    },
  },
});

describe('register', () => {
  it('adds definitions and replaces one with the same name and version', async () => {
    const world = new TestWorld();
    const engine = await world.engine([]);
    engine.register(waiter);
    const v2 = defineWorkflow({ ...waiter, version: 2 });
    engine.register(v2);
    engine.register(defineWorkflow({ ...waiter, version: 2, description: 'replaced' }));
    expect(engine.definitions().map((d) => `${d.name}@${d.version}:${d.description ?? ''}`)).toEqual([
      'waiter@1:',
      'waiter@2:replaced',
    ]);
    expect(() => engine.register({ name: 'bad name!', version: 1, *run() {} })).toThrow(
      /name "bad name!" is invalid/,
    );
  });
});

describe('start', () => {
  it('starts with a chosen id, rejects a duplicate non-terminal id, and allows reuse after it ends', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    const handle = await engine.start(waiter, { label: 'one' }, { id: 'dup' });
    expect(handle.workflowId).toBe('dup');
    await expect(engine.start(waiter, { label: 'two' }, { id: 'dup' })).rejects.toBeInstanceOf(
      WorkflowAlreadyExistsError,
    );
    await engine.terminate('dup');
    await engine.start(waiter, { label: 'three' }, { id: 'dup' });
    await world.idle();
    const description = await engine.describe('dup');
    expect(description.run).toBe(2);
    expect(description.input).toEqual({ label: 'three' });
    expect(description.status).toBe('running');
  });

  it('a duplicate start from another engine, while the first holds the workflow, is told it exists', async () => {
    const world = new TestWorld();
    const fenced = {
      ownership: 'workflow-lease',
      workflowClaimTtlMs: 3000,
      workflowClaimRenewIntervalMs: 1000,
    } as const;
    const holder = await world.engine([waiter], fenced);
    const other = await world.engine([waiter], fenced);
    await holder.start(waiter, { label: 'one' }, { id: 'held' });
    await world.idle();
    expect(holder.ownedWorkflows()).toEqual(['held']);
    await expect(other.start(waiter, { label: 'two' }, { id: 'held' })).rejects.toMatchObject({
      name: 'WorkflowAlreadyExistsError',
      workflowId: 'held',
    });
  });

  it('a start of a new id commits at once, without reading; an id with a finished run is read and planned from it', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    const storage = engine.wrapper;
    const calls: string[] = [];
    for (const method of ['get', 'getMany', 'scan', 'conditionalBatch', 'commitGroups'] as const) {
      const original = (storage[method] as (...args: unknown[]) => Promise<unknown>).bind(storage);
      Object.assign(storage, {
        [method]: (...args: unknown[]) => {
          calls.push(method);
          return original(...args);
        },
      });
    }
    const isCommit = (call: string) => call === 'conditionalBatch' || call === 'commitGroups';
    await engine.start(waiter, { label: 'new' }, { id: 'fresh' });
    expect(calls.slice(0, calls.findIndex(isCommit) + 1)).toEqual([
      expect.stringMatching(/^(conditionalBatch|commitGroups)$/),
    ]);
    await engine.terminate('fresh');
    await world.idle();
    calls.length = 0;
    await engine.start(waiter, { label: 'again' }, { id: 'fresh' });
    // The guess fails on the finished run's record; what is stored is then read, and run 2 is created.
    expect(calls.filter(isCommit).length).toBe(2);
    expect(calls.some((call) => !isCommit(call))).toBe(true);
    await world.idle();
    expect(await engine.describe('fresh')).toMatchObject({
      run: 2,
      status: 'running',
      input: { label: 'again' },
    });
  });

  it('generates a UUID when no id is given, and rejects unknown types', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    const handle = await engine.start('waiter', { label: 'x' });
    expect(handle.workflowId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    await expect(engine.start('nope', {})).rejects.toBeInstanceOf(WorkflowNotRegisteredError);
  });

  it('startDelayMs keeps the workflow pending until the delay passes', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 'later' }, { id: 'delayed', startDelayMs: 5000 });
    await world.advance(4999);
    expect((await engine.describe('delayed')).status).toBe('pending');
    await world.advance(1);
    expect((await engine.describe('delayed')).status).toBe('running');
    expect((await engine.describe('delayed')).pending?.kind).toBe('signal');
  });

  it('executionTimeoutMs times the workflow out', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    const handle = await engine.start(waiter, { label: 't' }, { id: 'slowpoke', executionTimeoutMs: 3000 });
    await world.advance(3000);
    expect((await engine.describe('slowpoke')).status).toBe('timed-out');
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowTimedOutError);
    expect((await engine.timeline('slowpoke')).at(-1)?.kind).toBe('timed-out');
  });
});

describe('handle, result, signal and query', () => {
  it('result resolves with the result; query reads committed state on any engine', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter]);
    const b = await world.engine([waiter], { recover: false });
    const handle = await a.start(waiter, { label: 'q' }, { id: 'q' });
    await world.idle();
    expect(await b.query('q', 'label')).toBe('q');
    await expect(b.query('q', 'missing')).rejects.toBeInstanceOf(QueryFailedError);
    await expect(b.query('q', 'broken')).rejects.toThrow(/query exploded/);
    await b.handle('q').signal('go', 'payload');
    await world.idle();
    await world.advance(1000);
    expect(await handle.result()).toEqual({ label: 'q', payload: 'payload', count: 0 });
  });

  it('result rejects with the typed error of the way the workflow ended', async () => {
    const failing = defineWorkflow({
      name: 'failing',
      version: 1,
      *run() {
        throw new TypeError('bad thing');
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([failing, waiter]);
    const failed = await engine.start(failing, undefined, { id: 'f' });
    await world.idle();
    const error = await failed.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).failure).toMatchObject({ name: 'TypeError', message: 'bad thing' });
    const terminated = await engine.start(waiter, { label: 'x' }, { id: 't' });
    const pending = terminated.result();
    await engine.terminate('t', 'enough');
    await expect(pending).rejects.toBeInstanceOf(WorkflowTerminatedError);
    await expect(engine.handle('ghost').result()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('signal to a finished workflow or an unknown id is refused', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 'x' }, { id: 's' });
    await engine.terminate('s');
    await expect(engine.signal('s', 'go')).rejects.toBeInstanceOf(InvalidWorkflowStateError);
    await expect(engine.signal('nobody', 'go')).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });
});

describe('update', () => {
  it('validates at the caller before anything is stored', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 'u' }, { id: 'u' });
    await world.idle();
    await expect(engine.update('u', 'increment', -1)).rejects.toBeInstanceOf(UpdateRejectedError);
    await expect(engine.update('u', 'nope')).rejects.toThrow(/has no update named 'nope'/);
    expect(await world.storage.scan('upd:')).toEqual([]);
  });

  it('applies the handler once, atomically with its response, and replay restores the state', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter]);
    await a.start(waiter, { label: 'u' }, { id: 'u' });
    await world.idle();
    expect(await a.update('u', 'increment', 2)).toBe(2);
    expect(await a.update('u', 'increment', 3)).toBe(5);
    expect(await world.storage.scan('upr:')).toEqual([]); // collected by the caller
    expect(await a.query('u', 'count')).toBe(5);
    const records = await world.storage.scan('wf-tl:'); // commit records hold the history entries
    expect(records.filter((entry) => entry.value.includes('"t":"update"'))).toHaveLength(2);
    // a rejected handler changes nothing
    await expect(a.update('u', 'explode')).rejects.toThrow(/handler failed/);
    expect(await a.query('u', 'count')).toBe(5);
    // crash and replay: the state the updates produced is restored before the signal continues the run
    world.crash(a);
    const b = await world.engine([waiter]);
    await world.idle();
    await b.signal('u', 'go', 'p');
    await world.idle();
    await world.advance(1000);
    expect(await b.handle('u').result()).toEqual({ label: 'u', payload: 'p', count: 5 });
  });

  it('times out and withdraws the request when nobody applies it', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter]);
    await a.start(waiter, { label: 'u' }, { id: 'u' });
    await world.idle();
    world.crash(a);
    const b = await world.engine([waiter], { recover: false, claimWorkflows: false });
    const pending = b.update('u', 'increment', 1, { timeoutMs: 500 });
    await world.advance(500);
    await expect(pending).rejects.toBeInstanceOf(UpdateTimeoutError);
    expect(await world.storage.scan('upd:')).toEqual([]);
  });
});

describe('terminate, suspend and resume', () => {
  it('suspend parks the workflow and releases it; resume continues from the checkpoint', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 's' }, { id: 's' });
    await world.idle();
    await engine.signal('s', 'go', 1);
    await world.idle();
    await engine.suspend('s');
    expect((await engine.describe('s')).status).toBe('suspended');
    expect(await world.storage.scan('timer:')).toEqual([]); // the sleep's timer is parked with the workflow
    await world.advance(5000);
    expect((await engine.describe('s')).status).toBe('suspended');
    await engine.resume('s');
    await world.idle();
    // the sleep fell due while suspended, so it fires as soon as the workflow resumes
    expect(await engine.handle('s').result()).toEqual({ label: 's', payload: 1, count: 0 });
    const kinds = (await engine.timeline('s')).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['suspended', 'resumed', 'completed']));
    await expect(engine.resume('s')).rejects.toBeInstanceOf(InvalidWorkflowStateError);
    await expect(engine.suspend('s')).rejects.toBeInstanceOf(InvalidWorkflowStateError);
  });
});

describe('describe, list and timeline', () => {
  it('describe says what the workflow waits on; list filters and pages', async () => {
    const other = defineWorkflow({
      name: 'other',
      version: 1,
      *run(ctx) {
        yield* ctx.sleep(100_000);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([waiter, other]);
    for (let i = 0; i < 7; i++) await engine.start(waiter, { label: `w${i}` }, { id: `w-${i}` });
    for (let i = 0; i < 3; i++) await engine.start(other, undefined, { id: `o-${i}` });
    await engine.terminate('w-6');
    await world.idle();
    const description = await engine.describe('w-0');
    expect(description.pending).toMatchObject({ kind: 'signal', name: 'go', summary: "signal 'go'" });
    expect(description.state).toEqual({ label: 'w0', count: 0 });
    const byType = await engine.list({ workflowType: 'other' });
    expect(byType.items.map((s) => s.workflowId)).toEqual(['o-0', 'o-1', 'o-2']);
    const running = await engine.list({ status: 'running', workflowType: 'waiter' });
    expect(running.items).toHaveLength(6);
    expect(running.items[0]?.waitingOn).toBe("signal 'go'");
    const terminated = await engine.list({ status: ['terminated', 'completed'] });
    expect(terminated.items.map((s) => s.workflowId)).toEqual(['w-6']);
    const first = await engine.list({ limit: 4 });
    expect(first.items).toHaveLength(4);
    const second = await engine.list({ limit: 4, cursor: first.nextCursor! });
    const third = await engine.list({ limit: 4, cursor: second.nextCursor! });
    const all = [...first.items, ...second.items, ...third.items].map((s) => s.workflowId);
    expect(new Set(all).size).toBe(10);
    expect(third.nextCursor).toBeNull();
    expect((await engine.list({ idPrefix: 'o-' })).items).toHaveLength(3);
    await expect(engine.describe('missing')).rejects.toBeInstanceOf(WorkflowNotFoundError);
    // A filter the engine cannot honour is refused with a typed error, never rounded, clamped or ignored.
    await expect(engine.list({ status: 'done' as never })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      message: expect.stringContaining('Unknown status filter "done"; use one of pending, running'),
    });
    for (const limit of [0, 1001, 2.5, Number.NaN])
      await expect(engine.list({ limit })).rejects.toMatchObject({
        name: 'InvalidArgumentError',
        message: expect.stringContaining("A list's limit is an integer from 1 to 1000"),
      });
    expect((await engine.list({ limit: 1000 })).items).toHaveLength(10);
  });

  it('list filters by when workflows were created and when they ended, as half-open ranges', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    const t0 = world.clock.now();
    await engine.start(waiter, { label: 'a' }, { id: 'early' });
    await world.clock.advance(1000);
    await engine.start(waiter, { label: 'b' }, { id: 'late' });
    await world.clock.advance(1000);
    await engine.terminate('early');
    const ids = async (filter: Parameters<typeof engine.list>[0]) =>
      (await engine.list(filter)).items.map((row) => row.workflowId).sort();
    expect(await ids({ createdFrom: t0 + 1000 })).toEqual(['late']);
    expect(await ids({ createdTo: t0 + 1000 })).toEqual(['early']);
    expect(await ids({ createdFrom: t0, createdTo: t0 + 1001 })).toEqual(['early', 'late']);
    // An unfinished workflow has not ended: any ended bound leaves it out.
    expect(await ids({ endedFrom: t0 })).toEqual(['early']);
    expect(await ids({ endedTo: t0 + 2000 })).toEqual([]);
    expect(await ids({ endedFrom: t0 + 2000, status: 'terminated' })).toEqual(['early']);
    await expect(engine.list({ createdFrom: 'yesterday' as never })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      message: expect.stringContaining("A list's createdFrom is a time in epoch milliseconds"),
    });
  });

  it('describe lists the signals buffered for the workflow until it consumes them', async () => {
    const later = defineWorkflow({
      name: 'later',
      version: 1,
      *run(ctx) {
        yield* ctx.sleep(1000);
        return yield* ctx.waitForSignal<{ n: number }>('go');
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([later]);
    await engine.start(later, undefined, { id: 'b' });
    await world.idle();
    expect((await engine.describe('b')).bufferedSignals).toEqual([]);
    const before = world.clock.now();
    await engine.signal('b', 'go', { n: 1 });
    await engine.signal('b', 'other');
    await world.idle();
    const buffered = await engine.describe('b');
    expect(buffered.pending?.kind).toBe('sleep');
    expect(buffered.bufferedSignals).toEqual([
      { seq: 0, name: 'go', payload: { n: 1 }, sentAt: before, sentBy: engine.id },
      { seq: 1, name: 'other', sentAt: before, sentBy: engine.id },
    ]);
    expect(buffered.bufferedSignalsMore).toBe(false);
    await world.advance(1000);
    await world.idle();
    // A signal that arrived while the run did not wait for one is taken when it reaches the wait (no poll).
    const after = await engine.describe('b');
    expect([after.status, after.result]).toEqual(['completed', { n: 1 }]);
    // Consumed: gone; the one it never waited for is not listed for a finished workflow.
    expect((await engine.describe('b')).bufferedSignals).toEqual([]);
  });

  it('describe lists at most 100 buffered signals and says there are more', async () => {
    const sleeper = defineWorkflow({
      name: 'sleeper',
      version: 1,
      *run(ctx) {
        yield* ctx.sleep(100_000);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([sleeper]);
    await engine.start(sleeper, undefined, { id: 'many' });
    for (let i = 0; i < 101; i++) await engine.signal('many', `s${i}`);
    const description = await engine.describe('many');
    expect(description.bufferedSignals).toHaveLength(100);
    expect(description.bufferedSignals[99]?.name).toBe('s99');
    expect(description.bufferedSignalsMore).toBe(true);
  });

  it('the id-prefix filter seeks to the prefix instead of reading the workflows before it', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    for (let i = 0; i < 300; i++) await engine.start(waiter, { label: `a${i}` }, { id: `a-${i}` });
    for (let i = 0; i < 3; i++) await engine.start(waiter, { label: `z${i}` }, { id: `z:${i}` });
    await world.idle();
    let scanned = 0;
    let lastRecords = 0;
    const storage = engine.wrapper;
    const scan = storage.scan.bind(storage);
    storage.scan = async (prefix, options) => {
      const page = await scan(prefix, options);
      // A live row's current checkpoint: the last record of its run's log (checkpoint.ts).
      if (prefix.startsWith('wf-tl:') && options?.reverse && options.limit === 1) lastRecords++;
      else scanned += page.length;
      return page;
    };
    for (const status of [undefined, 'running' as const]) {
      scanned = 0;
      lastRecords = 0;
      const page = await engine.list({ idPrefix: 'z:', ...(status ? { status } : {}) });
      expect(page.items.map((item) => item.workflowId)).toEqual(['z:0', 'z:1', 'z:2']);
      expect(scanned).toBe(3);
      expect(lastRecords).toBe(3);
    }
  });

  it('lists given ids together, in their order, without scanning: the rows a change notice names', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    for (let i = 0; i < 50; i++) await engine.start(waiter, { label: `a${i}` }, { id: `a-${i}` });
    await world.idle();
    await engine.terminate('a-3');
    await world.idle();
    let scanned = 0;
    let lastRecords = 0;
    let gets = 0;
    const storage = engine.wrapper;
    const scan = storage.scan.bind(storage);
    const getMany = storage.getMany.bind(storage);
    storage.scan = async (prefix, options) => {
      // A live row's current checkpoint: the last record of its run's log (checkpoint.ts).
      if (prefix.startsWith('wf-tl:') && options?.reverse && options.limit === 1) lastRecords++;
      else scanned++;
      return scan(prefix, options);
    };
    storage.getMany = async (keys) => {
      gets++;
      return getMany(keys);
    };
    const ids = ['a-9', 'missing', 'a-7', 'a-3', 'a-9'];
    const page = await engine.list({ ids });
    expect(page.items.map((item) => item.workflowId)).toEqual(['a-9', 'a-7', 'a-3']);
    expect(page.nextCursor).toBeNull();
    // The same rows `list` reports when it pages through the store.
    const paged = (await engine.list({ limit: 1000 })).items;
    expect(page.items).toEqual(['a-9', 'a-7', 'a-3'].map((id) => paged.find((row) => row.workflowId === id)));
    expect(scanned).toBe(1); // the paged list; the ids took none
    expect(gets).toBeLessThanOrEqual(3 + 3);
    expect(lastRecords).toBe(2 + 49); // the live rows, asked for (a-9, a-7) and paged; a finished one needs none
    // The other filters apply to the rows asked for.
    expect((await engine.list({ ids, status: 'running' })).items.map((item) => item.workflowId)).toEqual([
      'a-9',
      'a-7',
    ]);
    // Rows read from one status's index: a live status's rows read the last record of their logs, a finished
    // status's rows none (their stored checkpoints are current).
    for (const [status, rows] of [
      ['running', 49],
      ['terminated', 1],
    ] as const) {
      lastRecords = 0;
      expect((await engine.list({ status })).items).toHaveLength(rows);
      expect(lastRecords).toBe(status === 'running' ? rows : 0);
    }
    await expect(engine.list({ ids: Array.from({ length: 1001 }, (_, i) => `a-${i}`) })).rejects.toThrow(
      /at most 1,000/,
    );
    await expect(engine.list({ ids: [''] })).rejects.toThrow();
  });

  it('timeline entries carry seq, time, engine, epoch, kind and detail in order', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 'x' }, { id: 'tl' });
    await world.idle();
    await engine.signal('tl', 'go', 'now');
    await world.idle();
    await world.advance(1000);
    const timeline = await engine.timeline('tl');
    expect(timeline.map((e) => e.seq)).toEqual(timeline.map((_, i) => i));
    expect(timeline.map((e) => e.kind)).toEqual([
      'started',
      'signal-received',
      'signal-consumed',
      'timer-armed',
      'timer-fired',
      'completed',
    ]);
    expect(timeline.every((e) => e.engineId === engine.id && e.epoch === 0)).toBe(true);
  });
});

describe('timeline paging', () => {
  it('pages through the timeline after any seq, without gaps or repeats, although a commit stores its entries as one record', async () => {
    const stepper = defineWorkflow({
      name: 'stepper',
      version: 1,
      *run(ctx) {
        let sum = 0;
        for (let i = 0; i < 6; i++) sum += yield* ctx.activity('step', () => i);
        return sum;
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([stepper]);
    const handle = await engine.start(stepper, undefined, { id: 'pages' });
    expect(await handle.result()).toBe(15);
    const all = await engine.timeline('pages');
    expect(all.map((entry) => entry.seq)).toEqual(all.map((_, index) => index));
    // A step's commit appends two entries (the activity completed, the next one started): one record.
    const records = await world.storage.scan('wf-tl:');
    expect(records.length).toBeLessThan(all.length);
    for (let after = -1; after < all.length; after++)
      for (const limit of [1, 2, 3, 100]) {
        const page = await engine.timeline('pages', { ...(after >= 0 ? { after } : {}), limit });
        expect(page.map((entry) => entry.seq)).toEqual(
          all.slice(after + 1, after + 1 + limit).map((entry) => entry.seq),
        );
      }
  });
});

describe('recoverAll, runMaintenance and subscribe', () => {
  it('emits typed events and recovers workflows of a dropped engine', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter]);
    const events: EngineEvent[] = [];
    a.subscribe((event) => events.push(event));
    await a.start(waiter, { label: 'x' }, { id: 'r1' });
    await a.start(waiter, { label: 'y' }, { id: 'r2' });
    await world.idle();
    expect(
      events
        .filter((e) => e.type === 'workflow.started')
        .map((e) => (e as { workflowId: string }).workflowId),
    ).toEqual(['r1', 'r2']);
    world.crash(a);
    const b = await world.engine([waiter], { recover: false });
    expect(b.ownedWorkflows()).toEqual([]);
    expect(await b.recoverAll()).toBe(2);
    await b.signal('r1', 'go');
    await world.idle();
    await world.advance(1000);
    expect((await b.describe('r1')).status).toBe('completed');
    expect(b.events.some((e) => e.type === 'workflow.completed')).toBe(true);
  });

  it('manual mode creates no timers: durable timers fire only in runMaintenance', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, { label: 'x' }, { id: 'm' });
    await world.idle();
    await engine.signal('m', 'go');
    await world.idle();
    expect(world.clock.pendingTimers).toBe(0);
    await world.clock.advance(5000);
    await world.idle();
    expect((await engine.describe('m')).status).toBe('running');
    await engine.runMaintenance();
    await world.idle();
    expect((await engine.describe('m')).status).toBe('completed');
  });
});

describe('shutdown', () => {
  it('refuses calls afterwards with EngineDisposedError', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.shutdown();
    await expect(engine.start(waiter, { label: 'x' })).rejects.toBeInstanceOf(EngineDisposedError);
    await engine[Symbol.asyncDispose]();
  });

  it('leaves no timer behind, so it never keeps a process alive after it stopped', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter], { backgroundTasks: 'automatic' });
    await engine.start(waiter, { label: 'x' }, { id: 'parked' });
    await world.idle();
    await engine.shutdown();
    expect(world.clock.pendingTimers).toBe(0);
  });
});
