import { describe, expect, it } from 'vitest';
import { ActivityCompletionRefusedError, type Engine } from '../engine';
import { createTestEnvironment } from '../test-kit';
import { manualApproval } from './manual-approval';

/** The token of the waiting external activity, as the studio reads it. */
async function tokenOf(engine: Engine, workflowId: string): Promise<string> {
  const leaf = (await engine.describe(workflowId)).pending?.leaves.find((each) => each.completionToken);
  expect(leaf, 'an external activity waits').toBeDefined();
  return leaf!.completionToken!;
}

describe('manual-approval', () => {
  it('waits for an external completion and returns the decision it was given, once', async () => {
    const env = await createTestEnvironment({ workflows: [manualApproval] });
    const { engine } = env;
    const handle = await engine.start(manualApproval, manualApproval.sampleInput, { id: 'po' });
    // Nothing moves it on but the decision: the test kit says what it waits on.
    await expect(env.result(handle)).rejects.toThrow(/waits on activity 'await-decision'/);
    expect(await engine.query('po', 'status')).toBe('waiting');

    const token = await tokenOf(engine, 'po');
    await engine.completeActivity(token, { approved: true, by: 'ada' });
    expect(await env.result(handle)).toEqual({
      requestId: 'PO-1042',
      approved: true,
      decision: { approved: true, by: 'ada' },
    });
    await expect(engine.completeActivity(token, { approved: false })).rejects.toBeInstanceOf(
      ActivityCompletionRefusedError,
    );
    await env.close();
  });

  it('fails when the activity is failed from outside', async () => {
    const env = await createTestEnvironment({ workflows: [manualApproval] });
    const { engine } = env;
    const handle = await engine.start(manualApproval, manualApproval.sampleInput, { id: 'po' });
    await env.idle();
    await engine.failActivity(await tokenOf(engine, 'po'), { name: 'Rejected', message: 'Over budget' });
    await expect(env.result(handle)).rejects.toThrow(/Over budget/);
    await env.close();
  });
});
