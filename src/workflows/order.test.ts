import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpdateRejectedError, WorkflowFailedError, WorkflowNotFoundError } from '../engine';
import { order, orderActivities, type OrderInput, type OrderResult } from './order';
import { shipment, shipmentActivities } from './shipment';
import { TestWorld, entriesOf, timelineKinds } from './workflows.test-support';

const input: OrderInput = {
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
};
const id = 'order-A-1001';
const shipmentId = `${id}.shipment`;

function spyOnActivities() {
  return {
    reserve: vi.spyOn(orderActivities, 'reserveInventory'),
    charge: vi.spyOn(orderActivities, 'chargePayment'),
    refund: vi.spyOn(orderActivities, 'refundPayment'),
    release: vi.spyOn(orderActivities, 'releaseInventory'),
    book: vi.spyOn(shipmentActivities, 'bookCarrier'),
    confirm: vi.spyOn(shipmentActivities, 'confirmDelivery'),
  };
}

/** Starts the order and runs it through the payment retry to the approval wait. */
async function startUntilApproval(world: TestWorld, orderInput: OrderInput = input) {
  const engine = await world.engine([order, shipment]);
  const handle = await engine.start(order, orderInput, { id });
  await world.idle();
  return { engine, handle };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('order', () => {
  it('charges after a gateway timeout with backoff, waits for approval, packs, and ships through the shipment child', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine, handle } = await startUntilApproval(world);

    // The first charge attempt failed; the retry waits 1,000 ms on a durable timer.
    expect(await engine.query(id, 'stage')).toBe('charging');
    let timeline = await engine.timeline(id);
    expect(entriesOf(timeline, 'activity-failed', 'charge-payment')).toHaveLength(1);
    expect(entriesOf(timeline, 'activity-retry-scheduled', 'charge-payment')[0]?.detail).toMatchObject({
      nextAttempt: 2,
      waitMs: 1_000,
    });

    await world.advance(999);
    await world.idle();
    expect(calls.charge).toHaveBeenCalledTimes(1);
    await world.advance(1);
    await world.idle();
    expect(calls.charge).toHaveBeenCalledTimes(2);
    expect(await engine.query(id, 'stage')).toBe('awaiting-approval');

    await engine.signal(id, 'approve', { ok: true, by: 'ops' });
    await world.idle();
    expect(await engine.query(id, 'stage')).toBe('packing');

    await world.advance(2_000);
    await world.idle();
    expect(await engine.query(id, 'stage')).toBe('shipping');
    expect((await engine.describe(shipmentId)).status).toBe('running');
    expect(await engine.query(shipmentId, 'stage')).toBe('in-transit');

    await world.advance(3_000);
    await world.idle();
    const result = (await handle.result()) as OrderResult;
    expect(result).toMatchObject({
      status: 'delivered',
      orderId: 'A-1001',
      chargeId: 'ch_A-1001',
      amountCents: 3_500,
      approvedBy: 'ops',
      shipment: { carrier: 'Parcelo', parcels: 3, signedBy: 'front desk' },
    });
    if (result.status !== 'delivered') throw new Error('unreachable');
    expect(result.shipment.trackingNumber).toMatch(/^PCL-[0-9A-F]{8}$/);
    expect(await engine.query(id, 'summary')).toMatchObject({
      stage: 'delivered',
      trackingNumber: result.shipment.trackingNumber,
      reservationId: 'res-A-1001',
    });

    expect(calls.reserve).toHaveBeenCalledTimes(1);
    expect(calls.charge.mock.calls.map(([, activity]) => activity.attempt)).toEqual([1, 2]);
    expect(calls.book).toHaveBeenCalledTimes(1);
    expect(calls.confirm).toHaveBeenCalledTimes(1);
    expect(calls.refund).not.toHaveBeenCalled();

    timeline = await engine.timeline(id);
    const kinds = timeline.map((entry) => entry.kind);
    for (const kind of [
      'activity-retry-scheduled',
      'signal-consumed',
      'timer-armed',
      'timer-fired',
      'child-started',
      'child-completed',
    ] as const)
      expect(kinds).toContain(kind);
    expect(kinds.at(-1)).toBe('completed');
    expect(entriesOf(timeline, 'child-started')[0]?.detail).toMatchObject({
      childId: shipmentId,
      workflowType: 'shipment',
    });
    expect((await timelineKinds(engine, shipmentId)).at(-1)).toBe('completed');
  });

  it('rejects on { ok: false }: refunds the charge, releases the stock and never ships', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine, handle } = await startUntilApproval(world, { ...input, paymentGatewayFailures: 0 });
    expect(await engine.query(id, 'stage')).toBe('awaiting-approval');

    await engine.signal(id, 'approve', { ok: false, by: 'risk', reason: 'address mismatch' });
    await world.idle();

    expect(await handle.result()).toEqual({
      status: 'rejected',
      orderId: 'A-1001',
      reason: 'rejected by risk: address mismatch',
      refundId: 're_A-1001',
    });
    expect(await engine.query(id, 'stage')).toBe('rejected');
    expect(calls.refund).toHaveBeenCalledTimes(1);
    expect(calls.release).toHaveBeenCalledTimes(1);
    await expect(engine.describe(shipmentId)).rejects.toThrow(WorkflowNotFoundError);
    expect(await timelineKinds(engine, id)).not.toContain('child-started');
  });

  it('rejects when no approval arrives before the signal timeout', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine, handle } = await startUntilApproval(world, {
      ...input,
      paymentGatewayFailures: 0,
      approvalTimeoutMs: 30_000,
    });
    expect(await engine.query(id, 'stage')).toBe('awaiting-approval');

    await world.advance(29_999);
    await world.idle();
    expect(await engine.query(id, 'stage')).toBe('awaiting-approval');
    await world.advance(1);
    await world.idle();

    expect(await handle.result()).toMatchObject({
      status: 'rejected',
      reason: 'no approval within 30000 ms',
    });
    expect(calls.refund).toHaveBeenCalledTimes(1);
    const kinds = await timelineKinds(engine, id);
    expect(kinds).toContain('timer-fired');
    expect(kinds).not.toContain('signal-consumed');
  });

  it('fails after the last payment attempt and gives the stock back', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine, handle } = await startUntilApproval(world, { ...input, paymentGatewayFailures: 99 });

    // Backoff: 1,000, 2,000, 4,000 ms between the four attempts.
    for (const wait of [1_000, 2_000, 4_000]) {
      await world.advance(wait);
      await world.idle();
    }

    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toThrow(/charge-payment.*4 attempts.*Payment gateway timed out/);
    expect(calls.charge).toHaveBeenCalledTimes(4);
    expect(calls.release).toHaveBeenCalledTimes(1);
    expect(await engine.query(id, 'stage')).toBe('payment-failed');
    const retries = entriesOf(await engine.timeline(id), 'activity-retry-scheduled', 'charge-payment');
    expect(retries.map((entry) => entry.detail.waitMs)).toEqual([1_000, 2_000, 4_000]);
  });

  it('changeAddress: the validator rejects bad input at the caller, the handler applies before shipping and refuses after', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine, handle } = await startUntilApproval(world, { ...input, paymentGatewayFailures: 0 });
    const before = await engine.timeline(id);

    await expect(engine.update(id, 'changeAddress', 42)).rejects.toThrow(UpdateRejectedError);
    await expect(engine.update(id, 'changeAddress', 'x')).rejects.toThrow(/5–200 characters/);
    // Rejected by the validator: nothing was stored.
    expect(await engine.timeline(id)).toEqual(before);
    expect(await engine.query(id, 'summary')).toMatchObject({ shippingAddress: '12 Analytical Row, London' });

    const updating = engine.update(id, 'changeAddress', ' 1 Difference Engine Way, Cambridge ');
    await world.idle();
    expect(await updating).toEqual({ shippingAddress: '1 Difference Engine Way, Cambridge' });
    expect(entriesOf(await engine.timeline(id), 'update-applied', 'changeAddress')).toHaveLength(1);

    await engine.signal(id, 'approve', { ok: true, by: 'ops' });
    await world.advance(2_000);
    await world.idle();
    expect(await engine.query(id, 'stage')).toBe('shipping');
    expect(calls.book.mock.calls[0]?.[0].address).toBe('1 Difference Engine Way, Cambridge');

    const late = engine.update(id, 'changeAddress', '221B Baker Street, London');
    late.catch(() => undefined);
    await world.idle();
    await expect(late).rejects.toThrow(/can no longer change: the order is shipping/);
    expect(await engine.query(id, 'summary')).toMatchObject({
      shippingAddress: '1 Difference Engine Way, Cambridge',
    });

    await world.advance(3_000);
    await world.idle();
    expect(await handle.result()).toMatchObject({ status: 'delivered' });
  });

  it('recovers on a new engine after a crash at the approval wait without repeating recorded activities or losing an applied update', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const { engine: a } = await startUntilApproval(world);
    await world.advance(1_000);
    await world.idle();
    expect(await a.query(id, 'stage')).toBe('awaiting-approval');
    expect(calls.reserve).toHaveBeenCalledTimes(1);
    expect(calls.charge).toHaveBeenCalledTimes(2);
    const changing = a.update(id, 'changeAddress', '1 Difference Engine Way, Cambridge');
    await world.idle();
    await changing;

    // Ownership 'none': engine A stops (nothing is released or written), engine B recovers from the store.
    await a.shutdown();
    const b = await world.engine([order, shipment], { recover: true });
    await b.signal(id, 'approve', { ok: true, by: 'ops' });
    await world.idle([b]);
    expect(await b.query(id, 'stage')).toBe('packing');
    await world.advance(2_000, { engines: [b] });
    await world.idle([b]);
    await world.advance(3_000, { engines: [b] });
    await world.idle([b]);

    expect(await b.handle(id).result()).toMatchObject({ status: 'delivered', chargeId: 'ch_A-1001' });
    expect(calls.reserve).toHaveBeenCalledTimes(1);
    expect(calls.charge).toHaveBeenCalledTimes(2);
    expect(calls.book).toHaveBeenCalledTimes(1);
    // B replayed the update recorded at the approval wait: the parcel goes to the changed address.
    expect(calls.book.mock.calls[0]?.[0].address).toBe('1 Difference Engine Way, Cambridge');
    const timeline = await b.timeline(id);
    expect(new Set(timeline.filter((e) => e.kind === 'signal-consumed').map((e) => e.engineId))).toEqual(
      new Set([b.id]),
    );
    expect(timeline.filter((e) => e.kind === 'activity-completed').map((e) => e.engineId)).toEqual([
      a.id,
      a.id,
    ]);
  });

  it('continues the packing sleep on another engine after its owner crashes (workflow-lease)', async () => {
    const calls = spyOnActivities();
    const world = new TestWorld();
    const options = { ownership: 'workflow-lease' as const, liveness: world.liveness };
    const a = await world.engine([order, shipment], options);
    const b = await world.engine([order, shipment], options);
    await a.start(order, { ...input, paymentGatewayFailures: 0 }, { id });
    await world.idle();
    await a.signal(id, 'approve', { ok: true, by: 'ops' });
    await world.idle();
    expect(await b.query(id, 'stage')).toBe('packing');
    expect((await b.describe(id)).owner?.engineId).toBe(a.id);

    // A dies while the packing timer is armed; only B runs maintenance from now on.
    world.liveness.kill(a.id);
    await world.advance(2_000, { engines: [b] });
    await world.idle([b]);
    await world.advance(3_000, { engines: [b] });
    await world.idle([b]);

    expect(await b.handle(id).result()).toMatchObject({ status: 'delivered', approvedBy: 'ops' });
    expect(calls.reserve).toHaveBeenCalledTimes(1);
    expect(calls.charge).toHaveBeenCalledTimes(1);
    expect(calls.book).toHaveBeenCalledTimes(1);
    const kinds = await timelineKinds(b, id);
    expect(kinds).toContain('claim-taken-over');
    const fired = entriesOf(await b.timeline(id), 'timer-fired');
    expect(fired.map((entry) => entry.engineId)).toEqual([b.id]);
  });
});
