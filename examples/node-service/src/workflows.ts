/**
 * The service's workflows. Workflow code imports `shuttle/workflow` only: nothing that runs an engine.
 */
import { defineWorkflow, delay, type WorkflowContext } from 'shuttle/workflow';

export type OrderInput = { orderId: string; amountCents: number; approvalTimeoutMs?: number };
export type OrderResult = { orderId: string; status: 'shipped' | 'rejected'; chargeId: string | null };

/** The side effects. A real service calls its payment provider and warehouse here. */
export const activities = {
  charges: 0,
  async charge(orderId: string, amountCents: number, signal: AbortSignal) {
    await delay(20, signal);
    activities.charges += 1;
    return { chargeId: `ch_${orderId}_${amountCents}` };
  },
  async ship(orderId: string, signal: AbortSignal) {
    await delay(20, signal);
    return { trackingNumber: `TRK-${orderId}` };
  },
};

/** Charge, wait for a person's approval (a signal), then ship — or refund nothing if nobody approves. */
export const order = defineWorkflow({
  name: 'order',
  version: 1,
  *run(ctx: WorkflowContext<{ stage: string }>, input: OrderInput) {
    ctx.state.stage = 'charging';
    const { chargeId } = yield* ctx.activity('charge', ({ signal }) =>
      activities.charge(input.orderId, input.amountCents, signal),
    );
    ctx.state.stage = 'awaiting-approval';
    const approval = yield* ctx.waitForSignal<{ ok: boolean }>('approve', {
      timeoutMs: input.approvalTimeoutMs ?? 60_000,
    });
    if (approval?.ok !== true) {
      ctx.state.stage = 'rejected';
      return { orderId: input.orderId, status: 'rejected', chargeId } satisfies OrderResult;
    }
    ctx.state.stage = 'shipping';
    yield* ctx.activity('ship', ({ signal }) => activities.ship(input.orderId, signal));
    ctx.state.stage = 'shipped';
    return { orderId: input.orderId, status: 'shipped', chargeId } satisfies OrderResult;
  },
});
