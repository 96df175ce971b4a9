import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage';
import { builtInQueues, builtInWorkflows } from '../workflows';
import { openTestTab, sharedStorage, type TestTab } from './host.test-support';

/**
 * The queues domain of the protocol, served by the host of a tab: two tabs of one store declare the demos'
 * queue (the host's `queues` option); what one starts, the other's page reads — the queue, its slots and who
 * waits, a workflow's position — and bad input is refused before anything is read, as elsewhere.
 */
const tabs: TestTab[] = [];

function open(storage: MemoryStorage): TestTab {
  const tab = openTestTab({
    workflows: builtInWorkflows,
    storage: sharedStorage(storage),
    host: { queues: builtInQueues },
  });
  tabs.push(tab);
  return tab;
}

afterEach(async () => {
  await Promise.all(tabs.splice(0).map((tab) => tab.close()));
});

describe('the queues domain over the protocol', () => {
  it('lists and describes the queue the tabs declare, and says where a start waits, from any tab', async () => {
    const storage = new MemoryStorage();
    const a = open(storage);
    const b = open(storage);
    await Promise.all([a.client.ready, b.client.ready]);
    // Two long payments hold both slots; a third, with the first one's key, waits.
    for (const [id, key] of [
      ['p1', 'acme'],
      ['p2', 'globex'],
      ['p3', 'acme'],
    ])
      await a.client.start(
        'payment',
        { customer: key, amount: 1, workMs: 60_000 },
        { id, concurrencyKey: key },
      );

    const [queue] = await b.client.api.queues({});
    expect(queue).toMatchObject({
      name: 'payments',
      concurrency: 2,
      perKeyConcurrency: 1,
      rateLimit: { limit: 30, periodMs: 60_000 },
      running: 2,
      waiting: 1,
      next: [{ workflowId: 'p3', type: 'payment', key: 'acme' }],
    });
    expect(queue!.slots.map((slot) => slot.workflowId).sort()).toEqual(['p1', 'p2']);
    expect(await b.client.api.describeQueue({ name: 'payments' })).toMatchObject({ running: 2, waiting: 1 });
    expect(await b.client.api.queuePosition({ workflowId: 'p3' })).toMatchObject({
      queue: 'payments',
      status: 'waiting',
      position: 1,
      key: 'acme',
      priority: 5,
    });
    expect(await b.client.api.queuePosition({ workflowId: 'p1' })).toMatchObject({ status: 'admitted' });

    await a.client.terminate('p1', 'done with it');
    await expect
      .poll(() => b.client.api.queuePosition({ workflowId: 'p3' }), { timeout: 5_000 })
      .toMatchObject({ status: 'admitted' });
    await a.client.terminate('p2');
    await a.client.terminate('p3');
    await expect
      .poll(() => b.client.api.describeQueue({ name: 'payments' }), { timeout: 5_000 })
      .toMatchObject({ running: 0, waiting: 0, slots: [] });
    // A finished workflow is in no queue; one not started onto a queue neither.
    expect(await b.client.api.queuePosition({ workflowId: 'p1' })).toBeNull();
    await a.client.start('countdown', { from: 0 }, { id: 'plain' });
    expect(await b.client.api.queuePosition({ workflowId: 'plain' })).toBeNull();
  });

  it('refuses bad input in the engine’s words, or as a protocol error before the engine', async () => {
    const tab = open(new MemoryStorage());
    await tab.client.ready;
    await expect(tab.client.api.describeQueue({ name: 'nope' })).rejects.toMatchObject({
      name: 'QueueNotFoundError',
      message: expect.stringContaining("Queue 'nope' is not declared"),
    });
    await expect(tab.client.api.describeQueue({ name: 'no spaces allowed' })).rejects.toMatchObject({
      name: 'InvalidOptionsError',
    });
    await expect(
      tab.client.api.describeQueue({ name: 7 } as unknown as { name: string }),
    ).rejects.toMatchObject({ name: 'ProtocolError' });
    await expect(
      tab.client.api.queues({ extra: true } as unknown as Record<string, never>),
    ).rejects.toMatchObject({ name: 'ProtocolError' });
    await expect(tab.client.api.queuePosition({ workflowId: 'missing' })).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
    });
    await expect(
      tab.client.start('payment', { customer: 'a', amount: 1 }, { queue: 'elsewhere' }),
    ).rejects.toMatchObject({ name: 'InvalidOptionsError', message: expect.stringContaining("'elsewhere'") });
  });

  it('runs a definition saved in the studio onto the tabs’ queue; a queue its module exports is not declared', async () => {
    const tab = open(new MemoryStorage());
    await tab.client.ready;
    const source = `import { defineQueue, defineWorkflow } from 'shuttle';
export const own = defineQueue('own', { concurrency: 1 });
export default defineWorkflow({
  name: 'authored-pay',
  version: 1,
  queue: 'payments',
  *run(ctx) {
    yield* ctx.sleep(60_000);
    return 1;
  },
});`;
    expect(await tab.client.saveDefinition(source)).toMatchObject({ ok: true, name: 'authored-pay' });
    await tab.client.start('authored-pay', undefined, { id: 'ap', concurrencyKey: 'k' });
    expect((await tab.client.describe('ap')).queue).toMatchObject({ name: 'payments', key: 'k' });
    expect(await tab.client.api.queuePosition({ workflowId: 'ap' })).toMatchObject({ status: 'admitted' });
    await expect(tab.client.start('authored-pay', undefined, { queue: 'own' })).rejects.toMatchObject({
      name: 'InvalidOptionsError',
      message: expect.stringContaining("Queue 'own' is not declared"),
    });
    expect((await tab.client.api.queues({})).map((queue) => queue.name)).toEqual(['payments']);
  });
});
