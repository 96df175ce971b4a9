/**
 * The claim in the public API: `engine.claimHolder(id)` reports who holds a workflow and whether that holder
 * is live, judged as a takeover judges it; `engine.reclaim(id)` takes one workflow over when — and only
 * when — its holder is gone, expired or dead.
 */
import { describe, expect, it } from 'vitest';
import { fencing, TestWorld } from '../engine.test-support';
import { InvalidOptionsError, WorkflowNotFoundError } from '../errors';
import { defineWorkflow } from '../workflow';

const waiter = defineWorkflow({
  name: 'waiter',
  version: 1,
  *run(ctx) {
    return yield* ctx.waitForSignal<string>('go');
  },
});

describe('claimHolder and reclaim(id)', () => {
  it('report a live holder, leave it alone, and take the workflow over once its holder is not live', async () => {
    const world = new TestWorld();
    const a = await world.engine([waiter], fencing);
    const b = await world.engine([waiter], fencing);
    await a.start(waiter, undefined, { id: 'w' });
    await world.idle();
    const held = await b.claimHolder('w');
    expect(held).toMatchObject({ engineId: a.id, epoch: 1, live: true });
    expect(held!.expiresAt).toBeGreaterThan(world.clock.now());

    // A live holder is never taken over, however it is asked.
    expect(await b.reclaim('w')).toEqual({ outcome: 'held-live', holder: held });
    expect(await a.reclaim('w')).toEqual({ outcome: 'already-held', epoch: 1 });
    expect((await b.claimHolder('w'))?.engineId).toBe(a.id);

    // A freezes: its session lapses past the grace, and only then may B take the workflow.
    world.freeze(a);
    await world.advance(3000, { stepMs: 500, engines: [b] });
    expect((await b.claimHolder('w'))?.live).toBe(true);
    await world.advance(2500, { stepMs: 500, engines: [] });
    expect(await b.claimHolder('w')).toMatchObject({ engineId: a.id, live: false });
    const outcome = await b.reclaim('w');
    expect(outcome).toEqual({ outcome: 'taken-over', epoch: 2 });
    expect(await b.claimHolder('w')).toMatchObject({ engineId: b.id, epoch: 2, live: true });
    const timeline = await b.timeline('w');
    expect(timeline.filter((entry) => entry.kind === 'claim-taken-over')).toHaveLength(1);

    // B drives it now: a signal finishes it, and a finished workflow has no holder.
    await b.signal('w', 'go', 'done');
    await world.idle([b]);
    expect(await b.handle('w').result()).toBe('done');
    expect(await b.claimHolder('w')).toBeNull();
    expect(await b.reclaim('w')).toEqual({ outcome: 'not-running' });
    await expect(b.reclaim('nobody')).rejects.toBeInstanceOf(WorkflowNotFoundError);
    world.thaw(a);
    await world.shutdownAll();
  });

  it('outside workflow-lease there are no per-workflow claims: null, and reclaim(id) says why', async () => {
    const world = new TestWorld();
    const engine = await world.engine([waiter]);
    await engine.start(waiter, undefined, { id: 'w' });
    await world.idle();
    expect(await engine.claimHolder('w')).toBeNull();
    await expect(engine.reclaim('w')).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(engine.reclaim('w')).rejects.toThrow(/needs ownership 'workflow-lease'/);
    await world.shutdownAll();
  });
});
