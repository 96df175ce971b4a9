/**
 * Manual approval: a decision made outside the engine. The `await-decision` activity is declared
 * `completion: 'external'`: its function only hands the request on (here it does nothing but wait a moment;
 * a real one would email a link or post to a chat, with `context.completionToken` in it) and its return value
 * is ignored. The activity then waits — durably, across handoffs — until someone finishes it exactly once:
 * `completeActivity(token, { approved: true, by: 'ada' })` or `failActivity(token, { message })`, from any
 * engine. The studio shows the token of a waiting external activity on the workflow's page, with Complete…
 * and Fail… buttons. The workflow returns the decision it was given.
 */
import { delay, defineWorkflow, type ActivityContext, type WorkflowContext } from '../engine';

export type ManualApprovalInput = {
  requestId: string;
  /** What is to be approved, in a few words. */
  summary: string;
};

/** What whoever completes the activity is expected to send (anything JSON is accepted). */
export type ManualDecision = { approved?: boolean; by?: string; comment?: string };

export type ManualApprovalResult = {
  requestId: string;
  approved: boolean;
  /** The completion's result as given. */
  decision: unknown;
};

type ManualApprovalState = { status: 'waiting' | 'decided' };

/** The side effect of asking: workflow code calls it only through `ctx.activity`. */
export const manualApprovalActivities = {
  /** Hands the request to a person; the token is what finishes the activity. Returns nothing. */
  async requestDecision(
    request: { requestId: string; summary: string },
    { signal }: ActivityContext,
  ): Promise<void> {
    await delay(20, signal);
  },
};

export const manualApproval = defineWorkflow({
  name: 'manual-approval',
  version: 1,
  description:
    'Waits for a decision made outside the engine: the "await-decision" activity completes externally. ' +
    'On its page, Complete… with { "approved": true } (or completeActivity(token, result) from the console).',
  sampleInput: { requestId: 'PO-1042', summary: 'Purchase order: 3 laptops' },
  *run(ctx: WorkflowContext<ManualApprovalState>, input: ManualApprovalInput) {
    if (typeof input?.requestId !== 'string' || input.requestId.length === 0)
      throw new TypeError('manual-approval input: requestId must be a non-empty string.');
    ctx.state.status = 'waiting';
    // The function's return value is ignored: the activity returns what completeActivity is given.
    const decision = (yield* ctx.activity(
      'await-decision',
      (activity) =>
        manualApprovalActivities.requestDecision(
          { requestId: input.requestId, summary: input.summary },
          activity,
        ),
      // One attempt: a decision failed from outside (failActivity) fails the request instead of asking again.
      { completion: 'external', retry: { maxAttempts: 1 } },
    )) as unknown;
    ctx.state.status = 'decided';
    const approved =
      typeof decision === 'object' && decision !== null && (decision as ManualDecision).approved === true;
    const result: ManualApprovalResult = { requestId: input.requestId, approved, decision: decision ?? null };
    return result;
  },
  queries: {
    status: (state) => state.status ?? 'waiting',
  },
});

export default manualApproval;
