import { describe, expect, it } from 'vitest';
import { describeStorageConformance } from './conformance.test-support';
import { seededRandom } from './seeded-random';
import { MemoryStorage } from './memory';

describeStorageConformance('MemoryStorage', async () => {
  const storage = new MemoryStorage();
  return { storage, openPeer: async () => storage };
});

describeStorageConformance('MemoryStorage with a small value limit', async () => {
  const storage = new MemoryStorage({ maxValueBytes: 4096 });
  return { storage, openPeer: async () => storage, maxValueBytes: 4096 };
});

/** A reference model of a scan: the model's keys sorted once, then filtered. */
function modelScan(
  sortedKeys: readonly string[],
  prefix: string,
  options: { after?: string; limit?: number; reverse?: boolean },
): string[] {
  const keys = sortedKeys.filter((key) => key.startsWith(prefix));
  const { after, limit = Infinity, reverse = false } = options;
  const ordered = reverse ? keys.reverse() : keys;
  const past = after === undefined ? ordered : ordered.filter((key) => (reverse ? key < after : key > after));
  return past.slice(0, limit);
}

describe('MemoryStorage', () => {
  it('scans like a sorted map across many inserts and deletes (several internal chunks)', async () => {
    const storage = new MemoryStorage();
    const model = new Map<string, string>();
    const next = seededRandom(7);
    const random = (bound: number) => Math.floor(next() * bound);
    const alphabet = ['a', 'b', ':', '\uffff', 'é'];
    const randomKey = () =>
      Array.from({ length: 1 + random(8) }, () => alphabet[random(alphabet.length)] as string).join('');
    for (let round = 0; round < 40; round++) {
      const operations = Array.from({ length: 200 }, () => {
        const key = randomKey();
        return random(4) === 0
          ? ({ type: 'delete', key } as const)
          : ({ type: 'put', key, value: key } as const);
      });
      await storage.batch(operations);
      for (const operation of operations) {
        if (operation.type === 'put') model.set(operation.key, operation.value);
        else model.delete(operation.key);
      }
      const sortedKeys = [...model.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      for (let probe = 0; probe < 10; probe++) {
        const prefix = randomKey().slice(0, random(3));
        const options = {
          ...(random(2) === 0 ? {} : { after: randomKey() }),
          ...(random(2) === 0 ? {} : { limit: random(50) }),
          reverse: random(2) === 0,
        };
        const keys = (await storage.scan(prefix, options)).map((entry) => entry.key);
        expect(keys, `scan(${JSON.stringify(prefix)}, ${JSON.stringify(options)})`).toEqual(
          modelScan(sortedKeys, prefix, options),
        );
      }
    }
    expect(model.size).toBeGreaterThan(2500); // enough keys to split the sorted key list into several chunks
  });

  it('keeps prefix scans fast with 100,000 keys', async () => {
    const storage = new MemoryStorage();
    for (let start = 0; start < 100_000; start += 1000) {
      await storage.batch(
        Array.from({ length: 1000 }, (_, index) => {
          const id = String(((start + index) * 7919) % 100_000).padStart(6, '0');
          return { type: 'put', key: `wf:${id}`, value: id } as const;
        }),
      );
    }
    const page = await storage.scan('wf:0500', { limit: 5 });
    expect(page.map((entry) => entry.key)).toEqual([
      'wf:050000',
      'wf:050001',
      'wf:050002',
      'wf:050003',
      'wf:050004',
    ]);
    expect((await storage.scan('wf:', { reverse: true, limit: 1 }))[0]?.key).toBe('wf:099999');
  });

  it('lets several users share one instance: a watcher sees commits made by any of them', async () => {
    const shared = new MemoryStorage();
    const seen: string[][] = [];
    shared.watch('k', (keys) => seen.push(keys));
    const committing = shared.batch([{ type: 'put', key: 'k1', value: '1' }]);
    expect(seen).toEqual([]); // delivered on a later microtask, never inside the commit
    await committing;
    expect(seen).toEqual([['k1']]);
  });

  it('rejects a maxValueBytes that is not a positive whole number', () => {
    expect(() => new MemoryStorage({ maxValueBytes: 0 })).toThrow(/maxValueBytes/);
    expect(() => new MemoryStorage({ maxValueBytes: 1.5 })).toThrow(/maxValueBytes/);
  });
});
