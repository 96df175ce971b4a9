/**
 * A holder's own rotation whose answer is lost: `terminate` (or `suspend`) by the engine that holds the
 * workflow writes the rotation, and storage applies it but the call fails (a connection dropped after the
 * commit). Nobody leaves that engine a displacement notice (it displaced itself), so it must find out
 * itself: it reads the record back and lets the claim go when the rotation landed. Found by the ownership
 * soak (seed 2548, with other timings): an engine kept holding a workflow it had terminated.
 */
import { describe, expect, it } from 'vitest';
import { fencing, TestWorld } from '../engine.test-support';
import { defineWorkflow } from '../workflow';

const waits = defineWorkflow({
  name: 'waits',
  version: 1,
  *run(ctx) {
    return yield* ctx.waitForSignal('go');
  },
});

describe('a holder’s rotation whose answer was lost', () => {
  it.each(['terminate', 'suspend'] as const)(
    '%s: the holder lets its claim go when the write landed',
    async (how) => {
      const world = new TestWorld();
      const engine = await world.engine([waits], fencing);
      await engine.start(waits, undefined, { id: 'w' });
      await world.idle();
      expect(engine.ownedWorkflows()).toEqual(['w']);

      engine.wrapper.setFaults({ writeFailureAfterApplyRate: 1 });
      engine.wrapper.enabled = true;
      const failure = await (
        how === 'terminate' ? engine.terminate('w', 'lost answer') : engine.suspend('w')
      ).then(
        () => null,
        (error: unknown) => error,
      );
      engine.wrapper.enabled = false;
      expect(failure).toBeInstanceOf(Error);
      // The rotation landed: the workflow is terminated (suspended), and this engine no longer holds it.
      expect((await engine.describe('w')).status).toBe(how === 'terminate' ? 'terminated' : 'suspended');
      expect(engine.ownedWorkflows()).toEqual([]);
      await world.shutdownAll();
    },
  );
});
