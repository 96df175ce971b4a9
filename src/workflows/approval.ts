/**
 * Approval: an expense request decided through updates, not signals. An approver calls the `approve` or
 * `reject` update; the caller gets an answer (the decision, or why it was refused), unlike a fire-and-forget
 * signal. Each update has a validator that runs at the caller before anything is stored (a malformed
 * argument never reaches the workflow) and a handler that runs once on the owning engine and may still refuse
 * (not an approver, self-approval, already decided). The workflow waits with `ctx.waitUntil` on its state,
 * at most `timeoutMs`; with no decision by then the request expires. The `status` query reads the state from
 * any tab.
 */
import { delay, defineWorkflow, type ActivityContext, type WorkflowContext } from '../engine';

export type ApprovalInput = {
  requestId: string;
  requester: string;
  summary: string;
  amountCents: number;
  /** Who may decide: 1–10 names; the requester may not decide their own request. */
  approvers: string[];
  /** How long to wait for a decision, in ms. Default 120,000. */
  timeoutMs?: number;
};

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';

/** The argument of the `approve` update. */
export type ApproveArgument = { by: string; comment?: string };
/** The argument of the `reject` update. */
export type RejectArgument = { by: string; reason: string };

export type ApprovalResult = {
  requestId: string;
  status: Exclude<ApprovalStatus, 'pending'>;
  decidedBy: string | null;
  note: string | null;
  decidedAt: number;
};

type ApprovalState = {
  status: ApprovalStatus;
  requester: string;
  approvers: string[];
  decidedBy: string | null;
  note: string | null;
  decidedAt: number | null;
};

/**
 * The approval's side effects. Workflow code calls them only through `ctx.activity`; tests may spy on them.
 */
export const approvalActivities = {
  async notifyApprovers(
    request: { requestId: string; approvers: string[]; summary: string },
    { signal }: ActivityContext,
  ): Promise<{ notified: number }> {
    await delay(60, signal);
    return { notified: request.approvers.length };
  },

  async notifyRequester(
    request: { requestId: string; requester: string; status: ApprovalStatus },
    { signal }: ActivityContext,
  ): Promise<{ delivered: boolean }> {
    await delay(40, signal);
    return { delivered: true };
  },
};

function assertApprovalInput(input: ApprovalInput): void {
  if (typeof input?.requestId !== 'string' || input.requestId.length === 0)
    throw new TypeError('approval input: requestId must be a non-empty string.');
  if (typeof input.requester !== 'string' || input.requester.length === 0)
    throw new TypeError('approval input: requester must be a non-empty string.');
  if (
    !Array.isArray(input.approvers) ||
    input.approvers.length === 0 ||
    input.approvers.length > 10 ||
    input.approvers.some((name) => typeof name !== 'string' || name.length === 0)
  )
    throw new TypeError('approval input: approvers must be 1–10 non-empty names.');
}

/** Validates the shape shared by both updates: `{ by: string, [text]: string }`. */
function assertDecision(arg: unknown, text: 'comment' | 'reason', required: boolean): void {
  if (typeof arg !== 'object' || arg === null || Array.isArray(arg))
    throw new TypeError(`expected { by, ${text} }, got ${JSON.stringify(arg)}.`);
  const { by } = arg as Record<string, unknown>;
  const note = (arg as Record<string, unknown>)[text];
  if (typeof by !== 'string' || by.trim().length === 0) throw new TypeError('"by" must name the approver.');
  if (
    required
      ? typeof note !== 'string' || note.trim().length === 0
      : note !== undefined && typeof note !== 'string'
  )
    throw new TypeError(`"${text}" must be ${required ? 'a non-empty string' : 'a string when given'}.`);
  if (typeof note === 'string' && note.length > 500)
    throw new TypeError(`"${text}" is limited to 500 characters.`);
}

/** The handler's checks, against the current state, then the decision. */
function decide(
  state: ApprovalState,
  status: 'approved' | 'rejected',
  by: string,
  note: string | undefined,
): { status: ApprovalStatus; decidedBy: string } {
  if (state.status !== 'pending') throw new Error(`The request is already ${state.status}.`);
  if (!state.approvers.includes(by))
    throw new Error(`${by} is not an approver of this request (approvers: ${state.approvers.join(', ')}).`);
  if (by === state.requester) throw new Error(`${by} cannot decide their own request.`);
  state.status = status;
  state.decidedBy = by;
  state.note = note?.trim() || null;
  return { status, decidedBy: by };
}

export const approval = defineWorkflow({
  name: 'approval',
  version: 1,
  description:
    'An expense request decided with the "approve" ({ "by": "ada" }) or "reject" ({ "by": "ada", "reason": ' +
    '"…" }) update — validated at the caller, answered by the owner — waiting with waitUntil on state; ' +
    'expires after "timeoutMs". Query "status".',
  sampleInput: {
    requestId: 'EXP-311',
    requester: 'grace',
    summary: 'Conference travel to Lisbon',
    amountCents: 129_900,
    approvers: ['ada', 'linus'],
    timeoutMs: 120_000,
  },
  *run(ctx: WorkflowContext<ApprovalState>, input: ApprovalInput) {
    assertApprovalInput(input);
    const timeoutMs = input.timeoutMs ?? 120_000;
    const state = ctx.state;
    const initial: ApprovalState = {
      status: 'pending',
      requester: input.requester,
      approvers: input.approvers,
      decidedBy: null,
      note: null,
      decidedAt: null,
    };
    Object.assign(state, initial);

    yield* ctx.activity(
      'notify-approvers',
      (activity) =>
        approvalActivities.notifyApprovers(
          { requestId: input.requestId, approvers: input.approvers, summary: input.summary },
          activity,
        ),
      { retry: { maxAttempts: 5, initialIntervalMs: 1_000 } },
    );

    const decided = yield* ctx.waitUntil(() => state.status !== 'pending', { timeoutMs });
    if (!decided) state.status = 'expired';
    state.decidedAt = yield* ctx.now();
    const status = state.status as Exclude<ApprovalStatus, 'pending'>;

    yield* ctx.activity(
      'notify-requester',
      (activity) =>
        approvalActivities.notifyRequester(
          { requestId: input.requestId, requester: input.requester, status },
          activity,
        ),
      { retry: { maxAttempts: 5, initialIntervalMs: 1_000 } },
    );
    const result: ApprovalResult = {
      requestId: input.requestId,
      status,
      decidedBy: state.decidedBy,
      note: state.note,
      decidedAt: state.decidedAt,
    };
    return result;
  },
  queries: {
    status: (state) => ({
      status: state.status ?? 'pending',
      decidedBy: state.decidedBy ?? null,
      note: state.note ?? null,
      approvers: state.approvers ?? [],
    }),
  },
  updates: {
    approve: {
      validate: (arg) => assertDecision(arg, 'comment', false),
      handle: (state, arg) => {
        const { by, comment } = arg as ApproveArgument;
        return decide(state, 'approved', by.trim(), comment);
      },
    },
    reject: {
      validate: (arg) => assertDecision(arg, 'reason', true),
      handle: (state, arg) => {
        const { by, reason } = arg as RejectArgument;
        return decide(state, 'rejected', by.trim(), reason);
      },
    },
  },
});

export default approval;
