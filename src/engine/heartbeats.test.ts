/**
 * Activity heartbeats that matter: `context.heartbeat(details)` is recorded durably (the first at once, then
 * at most once a second, the latest details winning), shown by `describe` with the pending operation, given
 * to the next attempt as `context.heartbeatDetails` — after a failure on the same engine, and after a
 * takeover by another — and deleted once the activity is decided. `heartbeatTimeoutMs` fails a silent
 * attempt with `ActivityHeartbeatTimeoutError`, and the retry policy applies. Over MemoryStorage, PostgreSQL
 * and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Json } from './codec';
import { fencing, TestWorld } from './engine.test-support';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow, type ActivityContext } from './workflow';

/** What each attempt was given, in order. */
let given: { attempt: number; details: Json | undefined }[] = [];
/** The running attempt's controls, by attempt number. */
let attempts = new Map<number, { beat: (details: Json) => void; finish: () => void; fail: () => void }>();

function controlled(context: ActivityContext): Promise<string> {
  given.push({ attempt: context.attempt, details: context.heartbeatDetails });
  return new Promise((resolve, reject) => {
    attempts.set(context.attempt, {
      beat: (details) => context.heartbeat(details),
      finish: () => resolve(`done by attempt ${context.attempt}`),
      fail: () => reject(new Error(`attempt ${context.attempt} failed`)),
    });
    context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
  });
}

const copy = defineWorkflow({
  name: 'copy',
  version: 1,
  *run(ctx) {
    return yield* ctx.activity('copy-files', controlled, {
      retry: { maxAttempts: 3, initialIntervalMs: 100 },
    });
  },
});

const watched = defineWorkflow({
  name: 'watched',
  version: 1,
  *run(ctx) {
    return yield* ctx.activity('copy-files', controlled, {
      heartbeatTimeoutMs: 2_000,
      retry: { maxAttempts: 3, initialIntervalMs: 100 },
    });
  },
});

const misconfigured = defineWorkflow({
  name: 'misconfigured',
  version: 1,
  *run(ctx) {
    return yield* ctx.activity('ask', () => undefined, { completion: 'external', heartbeatTimeoutMs: 1_000 });
  },
});

const all = [copy, watched, misconfigured];
const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('activity heartbeats on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  async function setup() {
    given = [];
    attempts = new Map();
    return new TestWorld({ storage: await store.open() });
  }

  /** Waits for attempt `n` to be running. */
  async function attempt(world: TestWorld, n: number) {
    for (let i = 0; i < 100 && !attempts.has(n); i++) await world.maintain();
    const controls = attempts.get(n);
    if (!controls) throw new Error(`attempt ${n} never started (given: ${JSON.stringify(given)})`);
    return controls;
  }

  const heartbeatKeys = async (world: TestWorld) =>
    (await world.storage.scan('act-hb:')).map((entry) => entry.key);

  it('records heartbeats (throttled, latest wins), shows them, and gives them to the next attempt', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(copy, undefined, { id: 'c' });
    const first = await attempt(world, 1);
    expect(given).toEqual([{ attempt: 1, details: undefined }]);

    // The first heartbeat is written at once; the burst after it within the second, once, at its end.
    for (let file = 1; file <= 50; file++) first.beat({ files: file });
    await world.maintain();
    const leaf = async () => (await engine.describe('c')).pending!.leaves[0]!;
    expect((await leaf()).heartbeat).toMatchObject({
      attempt: 1,
      details: { files: 1 },
      engineId: engine.id,
    });
    await world.advance(1_000);
    expect((await leaf()).heartbeat).toMatchObject({ attempt: 1, details: { files: 50 } });

    // Attempt 1 fails: attempt 2 starts from its last heartbeat.
    first.fail();
    await world.advance(100);
    const second = await attempt(world, 2);
    expect(given).toEqual([
      { attempt: 1, details: undefined },
      { attempt: 2, details: { files: 50 } },
    ]);
    second.beat({ files: 51 });
    await world.maintain();
    expect((await leaf()).heartbeat).toMatchObject({ attempt: 2, details: { files: 51 } });
    second.finish();
    await world.maintain();
    expect(await handle.result()).toBe('done by attempt 2');
    // Decided: its heartbeat is gone.
    expect(await heartbeatKeys(world)).toEqual([]);
    await world.shutdownAll();
  });

  it('after a takeover, the attempt run again starts from the heartbeat its dead engine recorded', async () => {
    const world = await setup();
    const a = await world.engine(all, fencing);
    await a.start(copy, undefined, { id: 'c' });
    const onA = await attempt(world, 1);
    onA.beat({ files: 7 });
    await world.maintain();
    world.crash(a);
    attempts.delete(1);
    const b = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000 });
    const onB = await attempt(world, 2);
    expect(given.at(-1)).toEqual({ attempt: 2, details: { files: 7 } });
    onB.finish();
    await world.maintain();
    expect(await b.handle('c').result()).toBe('done by attempt 2');
    expect(await heartbeatKeys(world)).toEqual([]);
    await world.shutdownAll();
  });

  it('heartbeatTimeoutMs fails a silent attempt, which is retried; one that heartbeats runs on', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(watched, undefined, { id: 'w' });
    await attempt(world, 1); // never heartbeats
    await world.advance(2_000);
    await world.advance(100);
    const second = await attempt(world, 2);
    const timeline = await engine.timeline('w');
    const failed = timeline.find((entry) => entry.kind === 'activity-failed');
    expect(failed).toMatchObject({
      detail: {
        attempt: 1,
        error: {
          name: 'ActivityHeartbeatTimeoutError',
          message: expect.stringContaining('sent no heartbeat for 2000 ms') as unknown,
        },
      },
    });
    // Attempt 2 heartbeats every 1.5 s: it outlives several timeouts' worth of time.
    for (let i = 0; i < 4; i++) {
      second.beat({ step: i });
      await world.advance(1_500);
    }
    second.finish();
    await world.maintain();
    expect(await handle.result()).toBe('done by attempt 2');
    await world.shutdownAll();
  });

  it('refuses heartbeatTimeoutMs on an external activity, saying why', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const handle = await engine.start(misconfigured, undefined, { id: 'm' });
    await world.idle();
    await expect(handle.result()).rejects.toThrow(
      /heartbeatTimeoutMs does not apply to completion 'external'/,
    );
    await world.shutdownAll();
  });
});
