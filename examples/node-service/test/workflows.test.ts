/**
 * The order workflow alone, on Shuttle's test kit (`shuttle/testing`): an engine in memory on a simulated
 * clock, the payment mocked by activity name, and time skipped through the approval timeout — a minute of
 * waiting is no wait at all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestEnvironment } from 'shuttle/testing';
import { order } from '../src/workflows';

test('an approved order is charged once (mocked) and shipped', async () => {
  const env = await createTestEnvironment({
    workflows: [order],
    activities: { charge: () => ({ chargeId: 'ch_mock' }) },
  });
  const started = env.now();
  const handle = await env.engine.start(order, { orderId: 'A-1', amountCents: 4_200 }, { id: 'order-A-1' });
  // Approved before its approval times out; result() then has no time to skip.
  await env.signal('order-A-1', 'approve', { ok: true });
  assert.deepEqual(await env.result(handle), { orderId: 'A-1', status: 'shipped', chargeId: 'ch_mock' });
  assert.equal(env.now(), started);
  assert.deepEqual(
    env.activityCalls.map((call) => call.activity),
    ['charge'],
  );
  await env.close();
});

test('an order nobody approves is rejected when its approval times out, on skipped time', async () => {
  const env = await createTestEnvironment({
    workflows: [order],
    activities: { charge: () => ({ chargeId: 'ch_mock' }) },
  });
  const started = env.now();
  const handle = await env.engine.start(order, {
    orderId: 'A-2',
    amountCents: 100,
    approvalTimeoutMs: 3_600_000,
  });
  assert.deepEqual(await env.result(handle), { orderId: 'A-2', status: 'rejected', chargeId: 'ch_mock' });
  assert.equal(env.now() - started, 3_600_000);
  await env.close();
});
