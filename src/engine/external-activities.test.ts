/**
 * External completion: an activity with `completion: 'external'` waits for `completeActivity` /
 * `failActivity` from any engine, takes exactly one completion, keeps its token across retries and
 * takeovers, and a completion racing a takeover is applied once. Over MemoryStorage and PostgreSQL.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fencing, TestWorld } from './engine.test-support';
import { testStores } from './stores.test-support';
import { ActivityCompletionRefusedError, InvalidArgumentError } from './errors';
import { keys } from './keys';
import { defineWorkflow } from './workflow';

/** An approval: the activity hands its token out (to `sent`) and waits for a person. */
function approvalWorkflow(maxAttempts = 1) {
  const sent: { token: string; attempt: number }[] = [];
  const workflow = defineWorkflow({
    name: 'approval',
    version: 1,
    *run(ctx, input: { order: number }) {
      const decision = yield* ctx.activity(
        'ask-a-person',
        ({ completionToken, attempt }) => {
          sent.push({ token: completionToken!, attempt });
        },
        { completion: 'external', retry: { maxAttempts, initialIntervalMs: 100 } },
      );
      return { order: input.order, decision };
    },
  });
  return { workflow, sent };
}

const stores = testStores({ maxConnections: 6 });

describe.each(stores)('external completion on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  for (const mode of ['none', 'workflow-lease'] as const) {
    const options = mode === 'none' ? {} : fencing;

    it(`${mode}: waits for its token, takes one completion from another engine, refuses every later one`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const { workflow, sent } = approvalWorkflow();
      const owner = await world.engine([workflow], options);
      // Under 'none' one engine runs everything: the other caller is the same engine.
      const other =
        mode === 'none' ? owner : await world.engine([workflow], { ...options, claimWorkflows: false });
      const handle = await owner.start(workflow, { order: 7 }, { id: 'approve-7' });
      await world.maintain();
      expect(sent).toHaveLength(1);
      const token = sent[0]!.token;
      const described = await other.describe('approve-7');
      expect(described.status).toBe('running');
      expect(described.pending?.leaves[0]).toMatchObject({ name: 'ask-a-person', completionToken: token });

      await other.completeActivity(token, { approved: true, by: 'ana' });
      expect(await handle.result()).toEqual({ order: 7, decision: { approved: true, by: 'ana' } });
      await expect(other.completeActivity(token, { approved: false })).rejects.toBeInstanceOf(
        ActivityCompletionRefusedError,
      );
      await expect(owner.failActivity(token, 'too late')).rejects.toThrow(
        /was not completed: workflow 'approve-7' is completed/,
      );
      await expect(owner.completeActivity('not a token', 1)).rejects.toBeInstanceOf(InvalidArgumentError);
      const kinds = (await owner.timeline('approve-7')).map((entry) => entry.kind);
      expect(kinds.filter((kind) => kind === 'activity-completed')).toHaveLength(1);
      expect(await world.storage.scan(keys.activityCompletionsPrefix)).toEqual([]);
      await world.shutdownAll();
    });

    it(`${mode}: a failure retries under its policy with the same token; an earlier completion is never lost`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const { workflow, sent } = approvalWorkflow(2);
      const engine = await world.engine([workflow], options);
      const handle = await engine.start(workflow, { order: 8 }, { id: 'approve-8' });
      await world.maintain();
      await engine.failActivity(sent[0]!.token, { name: 'Rejected', message: 'not yet' });
      await world.advance(200, { stepMs: 100 });
      expect(sent.map(({ attempt }) => attempt)).toEqual([1, 2]);
      expect(sent[1]!.token).toBe(sent[0]!.token);
      expect((await engine.describe('approve-8')).pending?.leaves[0]?.lastError?.message).toBe('not yet');
      await engine.completeActivity(sent[1]!.token, 'yes');
      expect(await handle.result()).toEqual({ order: 8, decision: 'yes' });
      await world.shutdownAll();
    });

    it(`${mode}: two engines completing one activity at once: exactly one is accepted`, async () => {
      const world = new TestWorld({ storage: await store.open() });
      const { workflow, sent } = approvalWorkflow();
      const a = await world.engine([workflow], options);
      const b = mode === 'none' ? a : await world.engine([workflow], { ...options, claimWorkflows: false });
      const handle = await a.start(workflow, { order: 9 }, { id: 'approve-9' });
      await world.maintain();
      const outcomes = await Promise.allSettled([
        a.completeActivity(sent[0]!.token, 'from a'),
        b.completeActivity(sent[0]!.token, 'from b'),
      ]);
      const accepted = outcomes.flatMap((outcome, i) =>
        outcome.status === 'fulfilled' ? [i === 0 ? 'from a' : 'from b'] : [],
      );
      expect(accepted).toHaveLength(1);
      const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(ActivityCompletionRefusedError);
      expect((await handle.result()) as unknown as { decision: string }).toMatchObject({
        decision: accepted[0],
      });
      await world.shutdownAll();
    });
  }
});

describe('external completion racing a takeover', () => {
  it('a completion stored while the owner is frozen is applied once, by the engine that takes the workflow over', async () => {
    const world = new TestWorld();
    const { workflow, sent } = approvalWorkflow();
    const a = await world.engine([workflow], fencing);
    await a.start(workflow, { order: 10 }, { id: 'approve-10' });
    await world.maintain([a]);
    expect(sent).toHaveLength(1);
    world.freeze(a);
    const b = await world.engine([workflow], fencing);
    await b.completeActivity(sent[0]!.token, 'approved while A was frozen');
    await world.advance(8000, { stepMs: 1000, engines: [b] });
    expect((await b.describe('approve-10')).status).toBe('completed');
    expect(await b.handle('approve-10').result()).toEqual({
      order: 10,
      decision: 'approved while A was frozen',
    });
    // B ran the activity's function again (with the same token) before finding the completion.
    expect(new Set(sent.map(({ token }) => token)).size).toBe(1);
    world.thaw(a);
    await world.advance(3000, { stepMs: 1000 });
    const timeline = await b.timeline('approve-10');
    expect(timeline.filter((entry) => entry.kind === 'activity-completed')).toHaveLength(1);
    expect(timeline.filter((entry) => entry.kind === 'completed')).toHaveLength(1);
    await world.shutdownAll();
  });
});
