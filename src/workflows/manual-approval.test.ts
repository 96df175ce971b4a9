import { describe, expect, it } from 'vitest';
import { ActivityCompletionRefusedError, type Engine } from '../engine';
import { manualApproval } from './manual-approval';
import { TestWorld } from './workflows.test-support';

/** The token of the waiting external activity, as the studio reads it. */
async function tokenOf(engine: Engine, workflowId: string): Promise<string> {
  const leaf = (await engine.describe(workflowId)).pending?.leaves.find((each) => each.completionToken);
  expect(leaf, 'an external activity waits').toBeDefined();
  return leaf!.completionToken!;
}

describe('manual-approval', () => {
  it('waits for an external completion and returns the decision it was given, once', async () => {
    const world = new TestWorld();
    const engine = await world.engine([manualApproval]);
    const handle = await engine.start(manualApproval, manualApproval.sampleInput, { id: 'po' });
    await world.advance(100);
    expect((await engine.describe('po')).status).toBe('running');
    expect(await engine.query('po', 'status')).toBe('waiting');

    const token = await tokenOf(engine, 'po');
    await engine.completeActivity(token, { approved: true, by: 'ada' });
    await world.idle();
    expect(await handle.result()).toEqual({
      requestId: 'PO-1042',
      approved: true,
      decision: { approved: true, by: 'ada' },
    });
    await expect(engine.completeActivity(token, { approved: false })).rejects.toBeInstanceOf(
      ActivityCompletionRefusedError,
    );
  });

  it('fails when the activity is failed from outside', async () => {
    const world = new TestWorld();
    const engine = await world.engine([manualApproval]);
    const handle = await engine.start(manualApproval, manualApproval.sampleInput, { id: 'po' });
    await world.advance(100);
    await engine.failActivity(await tokenOf(engine, 'po'), { name: 'Rejected', message: 'Over budget' });
    await world.idle();
    await expect(handle.result()).rejects.toThrow(/Over budget/);
  });
});
