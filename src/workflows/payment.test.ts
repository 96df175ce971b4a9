import { describe, expect, it, vi } from 'vitest';
import type { ActivityInterceptor } from '../engine';
import { builtInActivityLimits, builtInQueues } from './index';
import { payment, paymentActivityLimits, paymentsQueue, type PaymentInput } from './payment';
import { TestWorld, entriesOf } from './workflows.test-support';

const input = (customer: string): PaymentInput => ({ customer, amount: 10, workMs: 200 });

describe('payment (the queue demo)', () => {
  it('goes onto the payments queue by default: admitted at once while it has room, else enqueued until then', async () => {
    expect(builtInQueues).toContain(paymentsQueue);
    const world = new TestWorld();
    const engine = await world.engine([payment], { queues: builtInQueues });
    const first = await engine.start(payment, input('acme'), { id: 'pay-1', concurrencyKey: 'acme' });
    const second = await engine.start(payment, input('acme'), { id: 'pay-2', concurrencyKey: 'acme' });
    await expect(first.result()).resolves.toEqual({
      customer: 'acme',
      amount: 10,
      authorization: 'auth-pay-1-10',
      captured: true,
    });
    await expect(second.result()).resolves.toMatchObject({ authorization: 'auth-pay-2-10' });
    // The first found room: started and admitted in one step, nothing scheduled.
    const admitted = await engine.timeline('pay-1');
    expect(entriesOf(admitted, 'scheduled')).toEqual([]);
    expect(entriesOf(admitted, 'started')[0]?.detail).toMatchObject({
      queue: { name: 'payments', waitedMs: 0, slot: 0 },
    });
    // The second waited for acme's only key slot.
    const waited = await engine.timeline('pay-2');
    expect(entriesOf(waited, 'scheduled')[0]?.detail).toMatchObject({
      queue: { name: 'payments', key: 'acme', priority: 5 },
    });
    expect(entriesOf(waited, 'started')[0]?.detail).toMatchObject({ queue: { name: 'payments' } });
  });

  it('runs one payment per customer at a time and two at once in all', async () => {
    const world = new TestWorld();
    const engine = await world.engine([payment], { queues: builtInQueues });
    const starts = [
      ['a1', 'acme'],
      ['a2', 'acme'],
      ['b1', 'globex'],
      ['c1', 'initech'],
    ] as const;
    for (const [id, key] of starts) await engine.start(payment, input(key), { id, concurrencyKey: key });
    // acme's second waits behind its first although the queue has room for two; globex takes the other slot.
    await vi.waitFor(async () => {
      const view = await engine.describeQueue('payments');
      expect(view.slots.map((slot) => slot.workflowId).sort()).toEqual(['a1', 'b1']);
    });
    expect(await engine.queuePosition('a2')).toMatchObject({ status: 'waiting', position: 1, key: 'acme' });
    expect(await engine.queuePosition('c1')).toMatchObject({ status: 'waiting', position: 2 });
    await vi.waitFor(
      async () => {
        for (const [id] of starts) expect((await engine.describe(id)).status).toBe('completed');
      },
      { timeout: 10_000 },
    );
    expect((await engine.describeQueue('payments')).running).toBe(0);
  });

  it('captures one at a time through the payment gateway (its activity limit) while the queue runs two payments', async () => {
    expect(builtInActivityLimits).toMatchObject(paymentActivityLimits);
    let capturing = 0;
    let most = 0;
    const captures: ActivityInterceptor = async (call, next) => {
      if (call.activity !== 'capture') return next(call.context);
      most = Math.max(most, ++capturing);
      try {
        return await next(call.context);
      } finally {
        capturing--;
      }
    };
    const world = new TestWorld();
    const engine = await world.engine([payment], {
      queues: builtInQueues,
      activityLimits: builtInActivityLimits,
      interceptors: { activities: [captures] },
    });
    const ids = ['g1', 'g2', 'g3', 'g4'];
    for (const id of ids)
      await engine.start(payment, { customer: id, amount: 5, workMs: 400 }, { id, concurrencyKey: id });
    // Two payments admitted at once: while one captures, the other's capture waits for the gateway's slot.
    await vi.waitFor(
      async () => {
        const [gateway] = await engine.activityLimits();
        expect(gateway).toMatchObject({ name: 'payment-gateway', concurrency: 1, waitingHere: 1 });
        expect(gateway!.running).toHaveLength(1);
      },
      { timeout: 10_000, interval: 5 },
    );
    await vi.waitFor(
      async () => {
        for (const id of ids) expect((await engine.describe(id)).status).toBe('completed');
      },
      { timeout: 10_000 },
    );
    expect(most).toBe(1);
  });
});
