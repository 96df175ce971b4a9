/**
 * Between workflows (`ctx.signalWorkflow`, `ctx.cancelWorkflow`): messages sent as operations of the sender,
 * exactly once — what they write for the target joins the commit that records the operation — whichever
 * engines hold the sender and the target, through a crash of the sender, and when senders race for the
 * target's signal numbers. A target that is missing or has ended is the operation's outcome, which the
 * sender may catch. Over MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { checkOwnershipInvariants } from './invariants';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow } from './workflow';

/** Takes `item` signals until `stop`; returns them in order. */
const inbox = defineWorkflow({
  name: 'inbox',
  version: 1,
  *run(ctx) {
    const items: unknown[] = [];
    for (;;) {
      const item = yield* ctx.waitForSignal('item');
      if (item === 'stop') return items;
      items.push(item);
    }
  },
});

let releases: (() => void)[] = [];

/** Sends its items to `to` (after a gated activity when `gated`), then `stop` when `stop` is set. */
const sender = defineWorkflow({
  name: 'sender',
  version: 1,
  *run(ctx, input: { to: string; items: string[]; gated?: boolean; stop?: boolean }) {
    if (input.gated)
      yield* ctx.activity('wait', () => new Promise<void>((resolve) => releases.push(resolve)));
    for (const item of input.items) yield* ctx.signalWorkflow(input.to, 'item', item);
    if (input.stop) yield* ctx.signalWorkflow(input.to, 'item', 'stop');
    return input.items.length;
  },
});

/** Cancels `target`; then signals and cancels `missing`, catching what it is told. */
const canceller = defineWorkflow({
  name: 'canceller',
  version: 1,
  *run(ctx, input: { target: string; missing: string }) {
    const first = yield* ctx.cancelWorkflow(input.target, 'no longer needed');
    let signalled: string;
    try {
      yield* ctx.signalWorkflow(input.missing, 'item', 1);
      signalled = 'sent';
    } catch (error) {
      signalled = (error as Error).name;
    }
    let late: string;
    try {
      yield* ctx.signalWorkflow(input.target, 'item', 1);
      late = 'sent';
    } catch (error) {
      late = (error as Error).message;
    }
    return { first, signalled, late };
  },
});

const waiter = defineWorkflow({
  name: 'waiter',
  version: 1,
  *run(ctx) {
    yield* ctx.waitForSignal('never');
    return 'woken';
  },
});

const all = [inbox, sender, canceller, waiter];
const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('workflow-to-workflow messages on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  async function setup() {
    releases = [];
    return new TestWorld({ storage: await store.open() });
  }

  it('signals another engine’s workflow exactly once each, in order, several in one turn', async () => {
    const world = await setup();
    const a = await world.engine(all, fencing);
    const b = await world.engine(all, fencing);
    await b.start(inbox, undefined, { id: 'box' });
    await a.start(sender, { to: 'box', items: ['x', 'y', 'z'], stop: true }, { id: 'send' });
    await world.idle();
    expect(await a.handle('box').result()).toEqual(['x', 'y', 'z']);
    expect(await a.handle('send').result()).toBe(3);
    const sent = (await a.history('send')).entries.filter((entry) => entry.t === 'op');
    expect(sent.map((entry) => (entry.t === 'op' ? `${entry.kind}:${entry.name}` : ''))).toEqual([
      'signal-workflow:item',
      'signal-workflow:item',
      'signal-workflow:item',
      'signal-workflow:item',
    ]);
    // The sender's timeline says what it sent, once per operation (an invariant the audits check).
    const timeline = await a.timeline('send');
    expect(
      timeline.flatMap((entry) =>
        entry.kind === 'message-sent' ? [`${entry.detail.pos}>${entry.detail.to}`] : [],
      ),
    ).toEqual(['0>box', '1>box', '2>box', '3>box']);
    expect(
      checkOwnershipInvariants([{ workflowId: 'send', status: 'completed', timeline }], []).every(
        (result) => result.ok,
      ),
    ).toBe(true);
    const doubled = [...timeline, { ...timeline.find((entry) => entry.kind === 'message-sent')!, seq: 999 }];
    expect(
      checkOwnershipInvariants([{ workflowId: 'send', status: 'completed', timeline: doubled }], []).find(
        (result) => result.name === 'no-operation-ran-twice',
      )?.ok,
    ).toBe(false);
    await world.shutdownAll();
  });

  it('a crash of the sender before its send commits sends once, from its successor', async () => {
    const world = await setup();
    const a = await world.engine(all, fencing);
    await a.start(inbox, undefined, { id: 'box' });
    await a.start(sender, { to: 'box', items: ['once'], gated: true, stop: true }, { id: 'send' });
    await world.maintain();
    world.crash(a);
    const b = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000 });
    for (let i = 0; i < 100 && releases.length < 2; i++) await world.maintain();
    for (const release of releases) release(); // the dead engine's attempt and the successor's
    await world.maintain();
    await world.idle();
    expect(await b.handle('box').result()).toEqual(['once']);
    await world.shutdownAll();
  });

  it('senders racing for one target’s signal numbers each land once (a lost race replays and sends again)', async () => {
    const world = await setup();
    const engines = [await world.engine(all, fencing), await world.engine(all, fencing)];
    await engines[0]!.start(inbox, undefined, { id: 'box' });
    const senders = Array.from({ length: 6 }, (_, i) => `s${i}`);
    await Promise.all(
      senders.map((id, i) =>
        engines[i % 2]!.start(sender, { to: 'box', items: [`${id}-1`, `${id}-2`] }, { id }),
      ),
    );
    // A sender that lost a race more than three times in a row is driven again by the next maintenance pass.
    for (let i = 0; i < 10; i++) await world.maintain();
    for (const id of senders) expect(await engines[0]!.handle(id).result()).toBe(2);
    await engines[1]!.signal('box', 'item', 'stop');
    await world.idle();
    const received = (await engines[0]!.handle('box').result()) as string[];
    expect([...received].sort()).toEqual(senders.flatMap((id) => [`${id}-1`, `${id}-2`]).sort());
    // Each sender's two signals arrive in the order it sent them.
    for (const id of senders) expect(received.indexOf(`${id}-1`)).toBeLessThan(received.indexOf(`${id}-2`));
    await world.shutdownAll();
  });

  it('cancels another workflow; a missing or finished target is an outcome the sender catches', async () => {
    const world = await setup();
    const engine = await world.engine(all, fencing);
    const target = await engine.start(waiter, undefined, { id: 'target' });
    await world.idle();
    const handle = await engine.start(canceller, { target: 'target', missing: 'nobody' }, { id: 'c' });
    await world.idle();
    await expect(target.result()).rejects.toMatchObject({ name: 'WorkflowCancelledError' });
    // The signal after the cancel request was sent: the target had not ended when the turn committed.
    expect(await handle.result()).toEqual({
      first: 'requested',
      signalled: 'WorkflowNotFoundError',
      late: 'sent',
    });
    // Again, now that it has ended: nothing to cancel, and a signal to it is refused, saying why.
    const again = await engine.start(canceller, { target: 'target', missing: 'nobody' }, { id: 'c2' });
    await world.idle();
    expect(await again.result()).toEqual({
      first: 'already-finished',
      signalled: 'WorkflowNotFoundError',
      late: expect.stringMatching(/'target'.*cancelled/) as unknown,
    });
    await world.shutdownAll();
  });
});
