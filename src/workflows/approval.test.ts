import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidWorkflowStateError, UpdateRejectedError, type ActivityContext } from '../engine';
import { approval, approvalActivities, type ApprovalInput } from './approval';
import { TestWorld, entriesOf } from './workflows.test-support';

const request: ApprovalInput = {
  requestId: 'EXP-311',
  requester: 'grace',
  summary: 'Conference travel to Lisbon',
  amountCents: 129_900,
  approvers: ['ada', 'linus', 'grace'],
  timeoutMs: 60_000,
};

async function startApproval(input: ApprovalInput = request) {
  const world = new TestWorld();
  const engine = await world.engine([approval]);
  const handle = await engine.start(approval, input, { id: 'exp' });
  await world.idle();
  return { world, engine, handle };
}

/** Sends an update and lets the owner apply it. */
async function update(world: TestWorld, name: string, arg: unknown) {
  const answer = world.engines[0]!.update('exp', name, arg);
  answer.catch(() => undefined);
  await world.idle();
  return answer;
}

/** An activity body that works until the engine aborts it. */
function untilAborted({ signal }: ActivityContext): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('approval', () => {
  it('is approved through the approve update, which answers the caller, and ends approved', async () => {
    const notifyRequester = vi.spyOn(approvalActivities, 'notifyRequester');
    const { world, engine, handle } = await startApproval();
    expect(await engine.query('exp', 'status')).toEqual({
      status: 'pending',
      decidedBy: null,
      note: null,
      approvers: ['ada', 'linus', 'grace'],
    });
    expect((await engine.describe('exp')).pending?.kind).toBe('until');

    await world.advance(5_000);
    expect(await update(world, 'approve', { by: 'ada', comment: ' Enjoy Lisbon ' })).toEqual({
      status: 'approved',
      decidedBy: 'ada',
    });

    expect(await handle.result()).toEqual({
      requestId: 'EXP-311',
      status: 'approved',
      decidedBy: 'ada',
      note: 'Enjoy Lisbon',
      decidedAt: world.clock.now(),
    });
    expect(notifyRequester.mock.calls[0]?.[0]).toMatchObject({ requester: 'grace', status: 'approved' });
    const timeline = await engine.timeline('exp');
    expect(entriesOf(timeline, 'update-applied', 'approve')).toHaveLength(1);
    expect(entriesOf(timeline, 'wait-completed')[0]?.detail).toMatchObject({ satisfied: true });
  });

  it('the validators reject malformed decisions at the caller before anything is stored', async () => {
    const { world, engine, handle } = await startApproval();
    const before = await engine.timeline('exp');
    const described = await engine.describe('exp');

    for (const [name, arg, message] of [
      ['approve', 'ada', /expected \{ by, comment \}/],
      ['approve', { by: '  ' }, /"by" must name the approver/],
      ['approve', { by: 'ada', comment: 7 }, /"comment" must be a string when given/],
      ['reject', { by: 'ada' }, /"reason" must be a non-empty string/],
    ] as const) {
      const attempt = engine.update('exp', name, arg);
      await expect(attempt).rejects.toThrow(UpdateRejectedError);
      await expect(attempt).rejects.toThrow(message);
    }
    await world.idle();

    expect(await engine.timeline('exp')).toEqual(before);
    expect(await engine.describe('exp')).toEqual(described);
    expect(await engine.query('exp', 'status')).toMatchObject({ status: 'pending' });

    expect(await update(world, 'reject', { by: 'linus', reason: 'over budget' })).toEqual({
      status: 'rejected',
      decidedBy: 'linus',
    });
    expect(await handle.result()).toMatchObject({
      status: 'rejected',
      decidedBy: 'linus',
      note: 'over budget',
    });
  });

  it('the handler refuses non-approvers and self-approval, recording the refusal and leaving the state alone', async () => {
    const { world, engine } = await startApproval();

    await expect(update(world, 'approve', { by: 'mallory' })).rejects.toThrow(
      /mallory is not an approver of this request \(approvers: ada, linus, grace\)/,
    );
    await expect(update(world, 'approve', { by: 'grace' })).rejects.toThrow(
      /grace cannot decide their own request/,
    );
    expect(await engine.query('exp', 'status')).toMatchObject({ status: 'pending', decidedBy: null });
    const refused = entriesOf(await engine.timeline('exp'), 'update-rejected');
    expect(refused.map((entry) => entry.detail.name)).toEqual(['approve', 'approve']);
    expect((await engine.describe('exp')).status).toBe('running');
  });

  it('of two concurrent decisions exactly one wins; the other is told the request is already decided', async () => {
    const { world, engine, handle } = await startApproval();
    const approve = engine.update('exp', 'approve', { by: 'ada' });
    const reject = engine.update('exp', 'reject', { by: 'linus', reason: 'over budget' });
    const [approved, rejected] = await Promise.allSettled([approve, reject]);
    await world.idle();

    const outcomes = [approved, rejected].map((outcome) => outcome.status);
    expect(outcomes.sort()).toEqual(['fulfilled', 'rejected']);
    const loser = [approved, rejected].find(
      (outcome) => outcome.status === 'rejected',
    ) as PromiseRejectedResult;
    expect(String(loser.reason)).toMatch(/The request is already (approved|rejected)/);
    const result = await handle.result();
    expect(result).toMatchObject({ status: approved.status === 'fulfilled' ? 'approved' : 'rejected' });
    expect(entriesOf(await engine.timeline('exp'), 'update-applied')).toHaveLength(1);
  });

  it('expires when nobody decides before the timeout, and refuses decisions after it ended', async () => {
    const { world, engine, handle } = await startApproval({ ...request, timeoutMs: 10_000 });
    await world.advance(9_999);
    expect(await engine.query('exp', 'status')).toMatchObject({ status: 'pending' });
    await world.advance(1);
    await world.idle();

    expect(await handle.result()).toMatchObject({ status: 'expired', decidedBy: null, note: null });
    expect(entriesOf(await engine.timeline('exp'), 'wait-completed')[0]?.detail).toMatchObject({
      satisfied: false,
    });
    await expect(engine.update('exp', 'approve', { by: 'ada' })).rejects.toThrow(InvalidWorkflowStateError);
  });

  it('replays the applied decision on a new engine after a crash, without notifying approvers again', async () => {
    const original = approvalActivities.notifyRequester;
    const notifyApprovers = vi.spyOn(approvalActivities, 'notifyApprovers');
    const notifyRequester = vi.spyOn(approvalActivities, 'notifyRequester');
    notifyRequester.mockImplementationOnce((_request, activity) => untilAborted(activity));
    const world = new TestWorld();
    const a = await world.engine([approval]);
    await a.start(approval, request, { id: 'exp' });
    await world.idle();
    const approved = a.update('exp', 'approve', { by: 'ada', comment: 'ok' });
    await vi.waitFor(() => expect(notifyRequester).toHaveBeenCalledTimes(1));
    expect(await approved).toEqual({ status: 'approved', decidedBy: 'ada' });

    // A stops while notifying the requester; B replays the history, the update included.
    await a.shutdown();
    notifyRequester.mockImplementation(original);
    const b = await world.engine([approval], { recover: true });
    await world.idle([b]);

    expect(await b.handle('exp').result()).toMatchObject({
      status: 'approved',
      decidedBy: 'ada',
      note: 'ok',
    });
    expect(notifyApprovers).toHaveBeenCalledTimes(1);
    expect(notifyRequester).toHaveBeenCalledTimes(2);
    expect(notifyRequester.mock.calls[1]?.[0]).toMatchObject({ status: 'approved' });
  });
});
