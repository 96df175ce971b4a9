import { describe, expect, it, vi } from 'vitest';
import { builtInQueues } from './index';
import { payment, paymentsQueue, type PaymentInput } from './payment';
import { TestWorld, entriesOf } from './workflows.test-support';

const input = (customer: string): PaymentInput => ({ customer, amount: 10, workMs: 200 });

describe('payment (the queue demo)', () => {
  it('goes onto the payments queue by default and is admitted, then authorizes and captures', async () => {
    expect(builtInQueues).toContain(paymentsQueue);
    const world = new TestWorld();
    const engine = await world.engine([payment], { queues: builtInQueues });
    const handle = await engine.start(payment, input('acme'), { id: 'pay-1', concurrencyKey: 'acme' });
    await expect(handle.result()).resolves.toEqual({
      customer: 'acme',
      amount: 10,
      authorization: 'auth-pay-1-10',
      captured: true,
    });
    const timeline = await engine.timeline('pay-1');
    expect(entriesOf(timeline, 'scheduled')[0]?.detail).toMatchObject({
      queue: { name: 'payments', key: 'acme', priority: 5 },
    });
    expect(entriesOf(timeline, 'started')[0]?.detail).toMatchObject({ queue: { name: 'payments' } });
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
});
