/**
 * Listing by a search attribute reads the index range, never every workflow: the storage requests of a list
 * by equality and by range are the same at 1,000, 10,000 and 100,000 workflows in the store, while a filter
 * the index does not serve (the workflow type alone) reads more as the store grows.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import type { Operation } from '../storage/types';
import { attributeIndexKey, type SearchAttributes } from './attributes';
import { TestWorld } from './engine.test-support';
import { escapeId, keys } from './keys';
import type { WorkflowRecord } from './records';
import { defineWorkflow } from './workflow';

/** MemoryStorage counting every request made of it (reads and writes), whoever makes it. */
class CountingStorage extends MemoryStorage {
  requests = 0;
  override get(key: string) {
    this.requests++;
    return super.get(key);
  }
  override getMany(keysToRead: readonly string[]) {
    this.requests++;
    return super.getMany(keysToRead);
  }
  override scan(prefix: string, options?: Parameters<MemoryStorage['scan']>[1]) {
    this.requests++;
    return super.scan(prefix, options);
  }
}

const order = defineWorkflow({
  name: 'order',
  version: 1,
  attributes: { customer: 'string', amount: 'number' },
  *run(ctx, input: { customer: string; amount: number }) {
    yield* ctx.setAttributes(input);
    return 'ok';
  },
});

/** `count` finished workflows of another customer each, written straight to the store (as a bulk import). */
async function fill(storage: CountingStorage, from: number, count: number): Promise<void> {
  let operations: Operation[] = [];
  for (let i = from; i < from + count; i++) {
    const id = `filler-${String(i).padStart(6, '0')}`;
    const attributes: SearchAttributes = {
      customer: { type: 'string', value: `customer-${i}` },
      amount: { type: 'number', value: i },
    };
    const record: WorkflowRecord = {
      v: 1,
      id,
      type: 'order',
      version: 1,
      run: 1,
      status: 'completed',
      createdAt: 0,
      endedAt: 1,
      attributes,
      createdBy: 'import',
    };
    operations.push(
      { type: 'put', key: keys.record(id), value: JSON.stringify(record) },
      { type: 'put', key: keys.statusIndex('completed', id), value: 'order' },
      ...Object.entries(attributes).map(([name, attribute]) => ({
        type: 'put' as const,
        key: attributeIndexKey(name, attribute, escapeId(id)),
        value: 'order',
      })),
    );
    if (operations.length >= 996) {
      await storage.batch(operations);
      operations = [];
    }
  }
  if (operations.length > 0) await storage.batch(operations);
}

describe('listing by a search attribute at scale', () => {
  it('makes the same few requests at 1,000, 10,000 and 100,000 workflows; a list the index does not serve makes more', async () => {
    const storage = new CountingStorage();
    const world = new TestWorld({ storage });
    const engine = await world.engine([order]);
    // 20 workflows of customer 'acme', amounts -1000 … -981: what every list below finds.
    for (let i = 0; i < 20; i++)
      await engine.start(order, { customer: 'acme', amount: -1000 + i }, { id: `acme-${i}` });
    expect(world.clock.now()).toBeGreaterThan(1);
    await engine.runMaintenance();
    await world.idle();

    const measure = async (filter: Parameters<typeof engine.list>[0]) => {
      const before = storage.requests;
      const page = await engine.list(filter);
      return { requests: storage.requests - before, rows: page.items.length };
    };
    const sizes = [1_000, 10_000, 100_000];
    const results: Record<string, { requests: number; rows: number }[]> = {
      equality: [],
      range: [],
      byTypeOnly: [],
    };
    let filled = 0;
    for (const size of sizes) {
      await fill(storage, filled, size - filled);
      filled = size;
      results.equality!.push(await measure({ where: ['customer=acme'] }));
      results.range!.push(await measure({ attributes: { amount: { gte: -1000, lt: -990 } } }));
      // The same rows by filters without an index: the list walks every record to fill its page.
      results.byTypeOnly!.push(await measure({ workflowType: 'order', createdFrom: 1 }));
    }
    // Every list finds its rows at every size.
    expect(results.equality!.map(({ rows }) => rows)).toEqual([20, 20, 20]);
    expect(results.range!.map(({ rows }) => rows)).toEqual([10, 10, 10]);
    // By attribute: the same small number of requests whatever the size of the store.
    for (const kind of ['equality', 'range'] as const) {
      const counts = results[kind]!.map(({ requests }) => requests);
      expect(new Set(counts).size, `${kind}: ${counts.join(', ')}`).toBe(1);
      expect(counts[0]).toBeLessThan(30);
    }
    // Without an index the requests grow with the store (what the counting would show of a walk).
    const walked = results.byTypeOnly!.map(({ requests }) => requests);
    expect(results.byTypeOnly!.map(({ rows }) => rows)).toEqual([20, 20, 20]);
    expect(walked[2]!).toBeGreaterThan(walked[1]! * 5);
    expect(walked[1]!).toBeGreaterThan(walked[0]! * 5);
    console.info('storage requests of one list page at 1k / 10k / 100k workflows:', JSON.stringify(results));
    await world.shutdownAll();
  }, 120_000);
});
