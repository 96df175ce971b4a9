/**
 * Fan-out: asks every supplier for a price quote in parallel, one child workflow (`fan-out-task`) each,
 * started together with `ctx.all` over `ctx.startChild`, then aggregates the quotes and picks the cheapest.
 *
 * Each child has its own claim, so in the studio the children may run on different tabs than the parent;
 * the parent waits for all of them durably and continues wherever it is owned when the last one finishes.
 * A child that fails makes the parent fail with `ChildWorkflowFailedError`.
 */
import { defineWorkflow, type WorkflowContext } from '../engine';
import type { Quote, QuoteRequest } from './fan-out-task';

export type FanOutInput = {
  sku: string;
  quantity: number;
  /** One child per supplier, 1–20 distinct names. */
  suppliers: string[];
  /** The first supplier's response time, in ms; each next one answers `responseStepMs` later. Default 800. */
  firstResponseMs?: number;
  /** Default 400. */
  responseStepMs?: number;
};

export type FanOutResult = {
  sku: string;
  quantity: number;
  quotes: Quote[];
  best: Quote & { totalCents: number };
  spreadCents: number;
};

type FanOutState = {
  stage: 'requesting-quotes' | 'done';
  suppliers: string[];
  childIds: string[];
  best: string | null;
};

function assertFanOutInput(input: FanOutInput): void {
  if (typeof input?.sku !== 'string' || input.sku.length === 0)
    throw new TypeError('fan-out input: sku must be a non-empty string.');
  if (!Number.isInteger(input.quantity) || input.quantity < 1)
    throw new TypeError('fan-out input: quantity must be an integer ≥ 1.');
  const suppliers = input.suppliers;
  if (
    !Array.isArray(suppliers) ||
    suppliers.length === 0 ||
    suppliers.length > 20 ||
    suppliers.some((supplier) => typeof supplier !== 'string' || supplier.length === 0) ||
    new Set(suppliers).size !== suppliers.length
  )
    throw new TypeError('fan-out input: suppliers must be 1–20 distinct, non-empty names.');
}

export const fanOut = defineWorkflow({
  name: 'fan-out',
  version: 1,
  description:
    'Requests a price quote from every supplier in parallel — one "fan-out-task" child each, started with ' +
    'ctx.all over ctx.startChild — and picks the cheapest. Children may run on other tabs.',
  sampleInput: {
    sku: 'TEA-GREEN-250G',
    quantity: 40,
    suppliers: ['acme', 'globex', 'initech', 'umbrella', 'hooli'],
  },
  *run(ctx: WorkflowContext<FanOutState>, input: FanOutInput) {
    assertFanOutInput(input);
    const first = input.firstResponseMs ?? 800;
    const step = input.responseStepMs ?? 400;
    const requests = input.suppliers.map((supplier, index): QuoteRequest => ({
      supplier,
      sku: input.sku,
      quantity: input.quantity,
      responseMs: first + step * index,
    }));
    const childIds = requests.map((_, index) => `${ctx.workflowId}.quote-${index + 1}`);
    const state = ctx.state;
    const initial: FanOutState = {
      stage: 'requesting-quotes',
      suppliers: input.suppliers,
      childIds,
      best: null,
    };
    Object.assign(state, initial);

    // Children are named by their type, so this module stands alone (it is also an editor template).
    const quotes: Quote[] = yield* ctx.all(
      requests.map((request, index) => ctx.startChild('fan-out-task', request, { id: childIds[index] })),
    );

    const ranked = [...quotes].sort((a, b) => a.unitPriceCents - b.unitPriceCents);
    const cheapest = ranked[0]!;
    state.best = cheapest.supplier;
    state.stage = 'done';
    const result: FanOutResult = {
      sku: input.sku,
      quantity: input.quantity,
      quotes,
      best: { ...cheapest, totalCents: cheapest.unitPriceCents * input.quantity },
      spreadCents: ranked.at(-1)!.unitPriceCents - cheapest.unitPriceCents,
    };
    return result;
  },
  queries: {
    progress: (state) => ({
      stage: state.stage ?? 'starting',
      children: state.childIds?.length ?? 0,
      best: state.best ?? null,
    }),
  },
});

export default fanOut;
