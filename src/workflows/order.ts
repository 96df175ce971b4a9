/**
 * Order fulfilment: the whole programming model in one workflow.
 *
 * 1. reserve the stock (activity);
 * 2. charge the card (activity with a retry policy and exponential backoff: the simulated payment gateway
 *    times out on the first `paymentGatewayFailures` attempts);
 * 3. wait for the `approve` signal, at most `approvalTimeoutMs`: `{ ok: true, by }` approves; `{ ok: false }`
 *    or no answer in time rejects the order, which refunds the charge and releases the stock;
 * 4. pack (a durable sleep);
 * 5. ship: start the `shipment` child workflow and wait for its result.
 *
 * The `stage` query follows along; the `changeAddress` update may change the shipping address until the
 * parcel is handed to the carrier. Every step is durable: close the owning tab anywhere and another engine
 * continues from the last completed step without charging twice.
 */
import {
  delay,
  ActivityFailedError,
  defineWorkflow,
  type ActivityContext,
  type RetryPolicy,
  type WorkflowContext,
} from '../engine';
import type { ShipmentInput, ShipmentResult } from './shipment';

export type OrderItem = { sku: string; quantity: number; unitPriceCents: number };

export type OrderInput = {
  orderId: string;
  customer: string;
  items: OrderItem[];
  shippingAddress: string;
  /** Demo control: how many charge attempts the simulated payment gateway times out on. Default 0. */
  paymentGatewayFailures?: number;
  /** How long to wait for the `approve` signal, in ms. Default 60,000. */
  approvalTimeoutMs?: number;
  /** How long packing takes (a durable sleep), in ms. Default 2,000. */
  packingMs?: number;
  /** How long the parcel is in transit (the shipment's durable sleep), in ms. Default 3,000. */
  transitMs?: number;
};

/** The payload of the `approve` signal. */
export type OrderApproval = { ok: boolean; by?: string; reason?: string };

export type OrderResult =
  | {
      status: 'delivered';
      orderId: string;
      chargeId: string;
      amountCents: number;
      approvedBy: string | null;
      shipment: ShipmentResult;
    }
  | { status: 'rejected'; orderId: string; reason: string; refundId: string };

export type OrderStage =
  | 'reserving'
  | 'charging'
  | 'payment-failed'
  | 'awaiting-approval'
  | 'refunding'
  | 'rejected'
  | 'packing'
  | 'shipping'
  | 'delivered';

type OrderState = {
  stage: OrderStage;
  orderId: string;
  amountCents: number;
  shippingAddress: string;
  reservationId: string | null;
  chargeId: string | null;
  approvedBy: string | null;
  rejection: string | null;
  trackingNumber: string | null;
};

/** Stages from which the shipping address can no longer change: the parcel has left or never will. */
const addressLockedStages: readonly OrderStage[] = [
  'shipping',
  'delivered',
  'payment-failed',
  'refunding',
  'rejected',
];

/** Thrown by the simulated gateway; retryable. */
export class PaymentGatewayError extends Error {
  override name = 'PaymentGatewayError';
}

/**
 * The order's side effects. Workflow code calls them only through `ctx.activity`; tests may spy on them to
 * count invocations.
 */
export const orderActivities = {
  async reserveInventory(
    request: { orderId: string; items: OrderItem[] },
    { signal }: ActivityContext,
  ): Promise<{ reservationId: string; lines: number }> {
    await delay(80, signal);
    return { reservationId: `res-${request.orderId}`, lines: request.items.length };
  },

  async chargePayment(
    request: { orderId: string; customer: string; amountCents: number; gatewayFailures: number },
    { attempt, signal }: ActivityContext,
  ): Promise<{ chargeId: string; amountCents: number }> {
    await delay(120, signal);
    if (attempt <= request.gatewayFailures)
      throw new PaymentGatewayError(
        `Payment gateway timed out charging ${request.customer} (attempt ${attempt}).`,
      );
    // The idempotency key is the order id: a retried charge never charges twice.
    return { chargeId: `ch_${request.orderId}`, amountCents: request.amountCents };
  },

  async refundPayment(
    request: { chargeId: string; amountCents: number },
    { signal }: ActivityContext,
  ): Promise<{ refundId: string }> {
    await delay(100, signal);
    return { refundId: `re_${request.chargeId.replace(/^ch_/, '')}` };
  },

  async releaseInventory(
    request: { reservationId: string },
    { signal }: ActivityContext,
  ): Promise<{ released: string }> {
    await delay(60, signal);
    return { released: request.reservationId };
  },
};

const paymentRetry: RetryPolicy = {
  maxAttempts: 4,
  initialIntervalMs: 1_000,
  backoffCoefficient: 2,
  maxIntervalMs: 8_000,
};

/** Fails the workflow with a readable message when the input cannot be an order. */
function assertOrderInput(input: OrderInput): void {
  if (typeof input !== 'object' || input === null)
    throw new TypeError('order input must be an object: { orderId, customer, items, shippingAddress }.');
  if (typeof input.orderId !== 'string' || input.orderId.length === 0)
    throw new TypeError('order input: orderId must be a non-empty string.');
  if (typeof input.customer !== 'string' || input.customer.length === 0)
    throw new TypeError('order input: customer must be a non-empty string.');
  if (typeof input.shippingAddress !== 'string' || input.shippingAddress.length === 0)
    throw new TypeError('order input: shippingAddress must be a non-empty string.');
  if (!Array.isArray(input.items) || input.items.length === 0)
    throw new TypeError('order input: items must be a non-empty array of { sku, quantity, unitPriceCents }.');
  for (const item of input.items)
    if (
      typeof item?.sku !== 'string' ||
      !Number.isInteger(item.quantity) ||
      item.quantity < 1 ||
      !Number.isInteger(item.unitPriceCents) ||
      item.unitPriceCents < 0
    )
      throw new TypeError(
        `order input: item ${JSON.stringify(item)} needs a sku, an integer quantity ≥ 1 and integer unitPriceCents ≥ 0.`,
      );
}

function describeRejection(approval: OrderApproval | undefined, timeoutMs: number): string {
  if (approval === undefined) return `no approval within ${timeoutMs} ms`;
  const who = typeof approval.by === 'string' && approval.by ? approval.by : 'a reviewer';
  return typeof approval.reason === 'string' && approval.reason
    ? `rejected by ${who}: ${approval.reason}`
    : `rejected by ${who}`;
}

export const order = defineWorkflow({
  name: 'order',
  version: 1,
  description:
    'Order fulfilment: reserve stock, charge the card (retries with backoff), wait for the "approve" signal ' +
    '({ "ok": true, "by": "you" }; rejected on { "ok": false } or timeout, with a refund), pack (durable ' +
    'sleep), then ship through the "shipment" child workflow. Query "stage"; update "changeAddress". ' +
    'Search attributes: customer, amount (in currency units), orderId.',
  // Listed and filtered by these (the studio's attribute filters, `shuttle workflow list --where`).
  attributes: { customer: 'string', amount: 'number', orderId: 'string' },
  sampleInput: {
    orderId: 'A-1001',
    customer: 'ada@example.com',
    items: [
      { sku: 'TEA-GREEN-250G', quantity: 2, unitPriceCents: 850 },
      { sku: 'MUG-STONEWARE', quantity: 1, unitPriceCents: 1_800 },
    ],
    shippingAddress: '12 Analytical Row, London',
    paymentGatewayFailures: 1,
    approvalTimeoutMs: 60_000,
    packingMs: 2_000,
    transitMs: 3_000,
  },
  *run(ctx: WorkflowContext<OrderState>, input: OrderInput) {
    assertOrderInput(input);
    const approvalTimeoutMs = input.approvalTimeoutMs ?? 60_000;
    const amountCents = input.items.reduce((sum, item) => sum + item.quantity * item.unitPriceCents, 0);
    const state = ctx.state;
    const initial: OrderState = {
      stage: 'reserving',
      orderId: input.orderId,
      amountCents,
      shippingAddress: input.shippingAddress,
      reservationId: null,
      chargeId: null,
      approvedBy: null,
      rejection: null,
      trackingNumber: null,
    };
    Object.assign(state, initial);
    // Added after histories were recorded without it: behind a patch, so those still replay.
    if (yield* ctx.patched('search-attributes'))
      yield* ctx.setAttributes({
        customer: input.customer,
        amount: amountCents / 100,
        orderId: input.orderId,
      });

    const reservation = yield* ctx.activity(
      'reserve-inventory',
      (activity) =>
        orderActivities.reserveInventory({ orderId: input.orderId, items: input.items }, activity),
      { retry: { maxAttempts: 3, initialIntervalMs: 500 }, timeoutMs: 5_000 },
    );
    state.reservationId = reservation.reservationId;

    state.stage = 'charging';
    let charge: { chargeId: string; amountCents: number };
    try {
      charge = yield* ctx.activity(
        'charge-payment',
        (activity) =>
          orderActivities.chargePayment(
            {
              orderId: input.orderId,
              customer: input.customer,
              amountCents,
              gatewayFailures: input.paymentGatewayFailures ?? 0,
            },
            activity,
          ),
        { retry: paymentRetry, timeoutMs: 5_000 },
      );
    } catch (error) {
      if (!(error instanceof ActivityFailedError)) throw error;
      // The card was never charged: give the stock back, then fail the order with the gateway's error.
      state.stage = 'payment-failed';
      yield* ctx.activity('release-inventory', (activity) =>
        orderActivities.releaseInventory({ reservationId: reservation.reservationId }, activity),
      );
      throw error;
    }
    state.chargeId = charge.chargeId;

    state.stage = 'awaiting-approval';
    const approval = yield* ctx.waitForSignal<OrderApproval>('approve', { timeoutMs: approvalTimeoutMs });
    if (approval?.ok !== true) {
      state.rejection = describeRejection(approval, approvalTimeoutMs);
      state.stage = 'refunding';
      const refund = yield* ctx.activity(
        'refund-payment',
        (activity) =>
          orderActivities.refundPayment(
            { chargeId: charge.chargeId, amountCents: charge.amountCents },
            activity,
          ),
        { retry: { maxAttempts: 10, initialIntervalMs: 1_000, maxIntervalMs: 30_000 } },
      );
      yield* ctx.activity('release-inventory', (activity) =>
        orderActivities.releaseInventory({ reservationId: reservation.reservationId }, activity),
      );
      state.stage = 'rejected';
      const rejected: OrderResult = {
        status: 'rejected',
        orderId: input.orderId,
        reason: state.rejection,
        refundId: refund.refundId,
      };
      return rejected;
    }
    state.approvedBy = typeof approval.by === 'string' ? approval.by : null;

    state.stage = 'packing';
    yield* ctx.sleep(input.packingMs ?? 2_000);

    state.stage = 'shipping';
    const shipmentInput: ShipmentInput = {
      orderId: input.orderId,
      address: state.shippingAddress,
      items: input.items.map(({ sku, quantity }) => ({ sku, quantity })),
      ...(input.transitMs === undefined ? {} : { transitMs: input.transitMs }),
    };
    // The child is named by its type, so this module stands alone (it is also an editor template).
    const shipped: ShipmentResult = yield* ctx.startChild('shipment', shipmentInput, {
      id: `${ctx.workflowId}.shipment`,
    });
    state.trackingNumber = shipped.trackingNumber;
    state.stage = 'delivered';
    const delivered: OrderResult = {
      status: 'delivered',
      orderId: input.orderId,
      chargeId: charge.chargeId,
      amountCents: charge.amountCents,
      approvedBy: state.approvedBy,
      shipment: shipped,
    };
    return delivered;
  },
  queries: {
    stage: (state) => state.stage ?? 'starting',
    summary: (state) => state,
  },
  updates: {
    changeAddress: {
      validate: (address) => {
        if (typeof address !== 'string' || address.trim().length < 5 || address.length > 200)
          throw new TypeError('changeAddress takes the new shipping address: a string of 5–200 characters.');
      },
      handle: (state, address) => {
        if (addressLockedStages.includes(state.stage))
          throw new Error(`The shipping address can no longer change: the order is ${state.stage}.`);
        state.shippingAddress = (address as string).trim();
        return { shippingAddress: state.shippingAddress };
      },
    },
  },
});

export default order;
