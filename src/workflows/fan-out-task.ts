/**
 * Fan-out task: the child workflow of `fan-out`. It asks one supplier for a price quote: a durable sleep
 * stands for the supplier's response time (so the studio shows the children running side by side and
 * finishing at different times), then an activity fetches the quote.
 *
 * It is registered with the other built-ins so any engine can run it, but it is not offered as a demo of its
 * own: `fan-out` starts one per supplier through `ctx.startChild`.
 */
import { delay, defineWorkflow, type ActivityContext, type WorkflowContext } from '../engine';

export type QuoteRequest = {
  supplier: string;
  sku: string;
  quantity: number;
  /** The supplier's response time (a durable sleep), in ms. */
  responseMs: number;
};

export type Quote = { supplier: string; unitPriceCents: number; leadTimeDays: number };

type TaskState = { stage: 'waiting-for-supplier' | 'fetching-quote' | 'quoted'; supplier: string };

/** A stable small number from a string (FNV-1a), so a supplier always quotes the same price for a SKU. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

/**
 * The task's side effect. Workflow code calls it only through `ctx.activity`; tests may spy on it to count
 * invocations.
 */
export const fanOutTaskActivities = {
  async requestQuote(request: QuoteRequest, { signal }: ActivityContext): Promise<Quote> {
    await delay(50, signal);
    const hash = hashOf(`${request.supplier}/${request.sku}`);
    return {
      supplier: request.supplier,
      unitPriceCents: 500 + (hash % 500),
      leadTimeDays: 1 + (hash % 9),
    };
  },
};

export const fanOutTask = defineWorkflow({
  name: 'fan-out-task',
  version: 1,
  description: 'Child of fan-out: waits for one supplier (durable sleep), then fetches its price quote.',
  sampleInput: { supplier: 'acme', sku: 'TEA-GREEN-250G', quantity: 40, responseMs: 1_000 },
  *run(ctx: WorkflowContext<TaskState>, input: QuoteRequest) {
    const state = ctx.state;
    state.supplier = input.supplier;
    state.stage = 'waiting-for-supplier';
    yield* ctx.sleep(input.responseMs);
    state.stage = 'fetching-quote';
    const quote = yield* ctx.activity(
      'request-quote',
      (activity) => fanOutTaskActivities.requestQuote(input, activity),
      { retry: { maxAttempts: 3, initialIntervalMs: 500 }, timeoutMs: 5_000 },
    );
    state.stage = 'quoted';
    return quote;
  },
  queries: { stage: (state) => state.stage ?? 'starting' },
});

export default fanOutTask;
