/**
 * Payment: the queue demo. Every payment starts onto the `payments` queue (its definition's `queue`), which
 * admits at most two at once across every tab, one per concurrency key (start it with a `concurrencyKey`,
 * e.g. the customer), and at most 30 a minute. Start several and watch them wait their turn on the Queues
 * screen; close the tab that runs one and another tab takes it over, its slot with it.

Its capture goes through the payment gateway, which takes one capture at a time across every tab: an
activity limit (`paymentActivityLimits`, group `payment-gateway`, the capture's `limit`). With two payments
admitted at once, one capture waits for the other's slot — the Queues screen's "Activity limits" shows who
holds it, on which tab, and who waits.
 *
 * The queue is declared here, beside the workflow (`defineQueue`), and every studio engine declares it
 * (`builtInQueues`, index.ts): a queue must be declared on every engine that starts or runs its workflows.
 */
import { defineQueue, defineWorkflow, delay, type ActivityContext, type WorkflowContext } from '../engine';

/** The demos' activity limit: one capture at a time through the payment gateway, across every engine. */
export const paymentActivityLimits = { 'payment-gateway': { concurrency: 1 } } as const;

/** The demos' queue: two at once, one per key, 30 admissions a minute. */
export const paymentsQueue = defineQueue('payments', {
  concurrency: 2,
  perKeyConcurrency: 1,
  rateLimit: { limit: 30, periodMs: 60_000 },
});

export type PaymentInput = {
  /** Who pays (shown in the result; the queue's per-key limit counts the start's `concurrencyKey`). */
  customer: string;
  /** The amount, a positive number. */
  amount: number;
  /** How long the payment works, in ms of real time (0–60,000), split between authorising and capturing. */
  workMs?: number;
};

export type PaymentResult = { customer: string; amount: number; authorization: string; captured: true };

type PaymentState = { step: 'authorizing' | 'capturing' | 'done' };

/** The payment's side effects. Workflow code calls them only through `ctx.activity`. */
export const paymentActivities = {
  async authorize(
    workflowId: string,
    input: PaymentInput,
    ms: number,
    { signal }: ActivityContext,
  ): Promise<string> {
    await delay(ms, signal);
    return `auth-${workflowId}-${input.amount}`;
  },
  async capture(authorization: string, ms: number, { signal }: ActivityContext): Promise<string> {
    await delay(ms, signal);
    return authorization;
  },
};

function assertPaymentInput(input: PaymentInput): number {
  if (typeof input?.customer !== 'string' || input.customer.length === 0 || input.customer.length > 100)
    throw new TypeError(
      `payment input: customer must be a string of 1–100 characters; got ${input?.customer}.`,
    );
  if (typeof input.amount !== 'number' || !(input.amount > 0))
    throw new TypeError(`payment input: amount must be a positive number; got ${input.amount}.`);
  const workMs = input.workMs ?? 1_500;
  if (typeof workMs !== 'number' || !(workMs >= 0 && workMs <= 60_000))
    throw new TypeError(`payment input: workMs must be from 0 to 60,000 ms; got ${workMs}.`);
  return workMs;
}

export const payment = defineWorkflow({
  name: 'payment',
  version: 1,
  queue: paymentsQueue.name,
  description:
    'Charges a customer through the payments queue (2 at once across every tab, 1 per concurrency key, 30 a ' +
    'minute) — start several and watch them wait their turn on the Queues screen.',
  sampleInput: { customer: 'acme', amount: 42, workMs: 1_500 },
  *run(ctx: WorkflowContext<PaymentState>, input: PaymentInput) {
    const workMs = assertPaymentInput(input);
    ctx.state.step = 'authorizing';
    const authorization = yield* ctx.activity('authorize', (activity) =>
      paymentActivities.authorize(ctx.workflowId, input, Math.floor(workMs / 2), activity),
    );
    ctx.state.step = 'capturing';
    yield* ctx.activity(
      'capture',
      (activity) => paymentActivities.capture(authorization, workMs - Math.floor(workMs / 2), activity),
      { limit: 'payment-gateway' },
    );
    ctx.state.step = 'done';
    const result: PaymentResult = {
      customer: input.customer,
      amount: input.amount,
      authorization,
      captured: true,
    };
    return result;
  },
  queries: { step: (state) => state.step ?? null },
});

export default payment;
