/**
 * Shipment: the child workflow that `order` starts once an order is approved and packed. It books a carrier
 * (an activity keyed by a deterministic `ctx.uuid()`, so a retried booking is idempotent), waits out the
 * transit time with a durable sleep, confirms the delivery and returns the tracking details to its parent.
 *
 * It is registered with the other built-ins so any engine can run it, but it is not offered as a demo of its
 * own: it is started by `order` through `ctx.startChild`.
 */
import { delay, defineWorkflow, type ActivityContext, type WorkflowContext } from '../engine';

export type ShipmentInput = {
  orderId: string;
  address: string;
  items: { sku: string; quantity: number }[];
  /** How long the parcel is in transit (a durable sleep), in ms. Default 3,000. */
  transitMs?: number;
};

export type ShipmentResult = {
  carrier: string;
  trackingNumber: string;
  parcels: number;
  signedBy: string;
  deliveredAt: number;
};

type ShipmentStage = 'booking-carrier' | 'in-transit' | 'confirming-delivery' | 'delivered';

type ShipmentState = {
  stage: ShipmentStage;
  orderId: string;
  carrier: string | null;
  trackingNumber: string | null;
};

export type CarrierBooking = { carrier: string; trackingNumber: string; parcels: number };

/**
 * The shipment's side effects. Workflow code calls them only through `ctx.activity`; tests may spy on them
 * to count invocations.
 */
export const shipmentActivities = {
  async bookCarrier(
    request: { orderId: string; address: string; parcels: number; bookingKey: string },
    { signal }: ActivityContext,
  ): Promise<CarrierBooking> {
    await delay(100, signal);
    return {
      carrier: 'Parcelo',
      trackingNumber: `PCL-${request.bookingKey.slice(0, 8).toUpperCase()}`,
      parcels: request.parcels,
    };
  },

  async confirmDelivery(
    request: { trackingNumber: string },
    { signal }: ActivityContext,
  ): Promise<{ trackingNumber: string; signedBy: string }> {
    await delay(60, signal);
    return { trackingNumber: request.trackingNumber, signedBy: 'front desk' };
  },
};

export const shipment = defineWorkflow({
  name: 'shipment',
  version: 1,
  description:
    'Child of order: books a carrier, waits out the transit time (durable sleep) and confirms delivery.',
  sampleInput: {
    orderId: 'A-1001',
    address: '12 Analytical Row, London',
    items: [{ sku: 'TEA-GREEN-250G', quantity: 2 }],
    transitMs: 3_000,
  },
  *run(ctx: WorkflowContext<ShipmentState>, input: ShipmentInput) {
    const state = ctx.state;
    const initial: ShipmentState = {
      stage: 'booking-carrier',
      orderId: input.orderId,
      carrier: null,
      trackingNumber: null,
    };
    Object.assign(state, initial);

    const bookingKey = yield* ctx.uuid();
    const parcels = input.items.reduce((sum, item) => sum + item.quantity, 0);
    const booking = yield* ctx.activity(
      'book-carrier',
      (activity) =>
        shipmentActivities.bookCarrier(
          { orderId: input.orderId, address: input.address, parcels, bookingKey },
          activity,
        ),
      { retry: { maxAttempts: 5, initialIntervalMs: 500, maxIntervalMs: 5_000 }, timeoutMs: 5_000 },
    );
    state.carrier = booking.carrier;
    state.trackingNumber = booking.trackingNumber;

    state.stage = 'in-transit';
    yield* ctx.sleep(input.transitMs ?? 3_000);

    state.stage = 'confirming-delivery';
    const proof = yield* ctx.activity(
      'confirm-delivery',
      (activity) => shipmentActivities.confirmDelivery({ trackingNumber: booking.trackingNumber }, activity),
      { retry: { maxAttempts: 5, initialIntervalMs: 500 }, timeoutMs: 5_000 },
    );
    const deliveredAt = yield* ctx.now();
    state.stage = 'delivered';
    return {
      carrier: booking.carrier,
      trackingNumber: booking.trackingNumber,
      parcels: booking.parcels,
      signedBy: proof.signedBy,
      deliveredAt,
    } satisfies ShipmentResult;
  },
  queries: {
    stage: (state) => state.stage ?? 'starting',
    tracking: (state) => ({ carrier: state.carrier ?? null, trackingNumber: state.trackingNumber ?? null }),
  },
});

export default shipment;
