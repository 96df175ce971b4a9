/**
 * A claim taken over between an engine's claim and its load: the engine must not drive the checkpoint it
 * loads, which another engine wrote at a later epoch. (Found by the cluster fault suite after a PostgreSQL
 * restart: engines took workflows from each other within milliseconds, and a run loaded after its claim
 * had been taken committed at its old epoch on top of the newer one.)
 */
import { describe, expect, it } from 'vitest';
import { fencing, TestWorld } from '../engine.test-support';
import { keys } from '../keys';
import { defineWorkflow } from '../workflow';

const waiter = defineWorkflow({
  name: 'waiter',
  version: 1,
  *run(ctx) {
    return yield* ctx.waitForSignal<string>('go');
  },
});

describe('a load that finds a later epoch', () => {
  it('forgets the claim and writes nothing on the later checkpoint', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter], fencing);
    await a.start(waiter, undefined, { id: 'w' });
    await world.idle();
    world.freeze(a);
    await world.clock.advance(5500); // A's session is past its grace: takeover-eligible

    const b = await world.engine([waiter], { ...fencing, recover: false });
    const c = await world.engine([waiter], { ...fencing, recover: false });
    // Hold B's load of the workflow (a read of its record and checkpoint; its claim reads four keys).
    let held: (() => void) | null = null;
    const getMany = b.wrapper.getMany.bind(b.wrapper);
    b.wrapper.getMany = async (wanted) => {
      if (!held && wanted.length <= 3 && wanted[0] === keys.record('w') && wanted[1] === keys.checkpoint('w'))
        await new Promise<void>((resolve) => (held = resolve));
      return getMany(wanted);
    };
    expect(await b.reclaim('w')).toEqual({ outcome: 'taken-over', epoch: 2 });
    await world.clock.advance(0);
    expect(held).not.toBeNull();

    // Meanwhile C suspends and resumes it (epoch 3, then 4), and a signal waits in the store.
    await c.suspend('w');
    await c.resume('w');
    await world.maintain([c]);
    world.crash(c); // C stops driving: nobody consumes the signal but whoever loads the workflow next
    await b.signal('w', 'go', 'late');
    const before = await b.timeline('w');

    held!();
    await world.maintain([b]);
    expect(b.ownedWorkflows()).toEqual([]);
    expect(b.events.some((event) => event.type === 'claim.lost' && event.workflowId === 'w')).toBe(true);
    const after = await b.timeline('w');
    const writtenByB = after.slice(before.length).filter((entry) => entry.engineId === b.id);
    expect(writtenByB).toEqual([]);
    expect((await b.describe('w')).status).toBe('running');
    expect(Math.max(...after.map((entry) => entry.epoch))).toBe(4);
    world.thaw(a);
    await world.shutdownAll();
  });
});
