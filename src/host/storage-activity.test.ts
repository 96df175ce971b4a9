import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage';
import { StorageActivity } from './storage-activity';

describe('StorageActivity', () => {
  it('counts calls in flight and behaves like the storage it wraps', async () => {
    const activity = new StorageActivity(new MemoryStorage());
    const write = activity.storage.batch([{ type: 'put', key: 'k', value: 'v' }]);
    expect(activity.inFlight).toBe(1);
    await write;
    expect(activity.inFlight).toBe(0);
    await expect(activity.storage.get('k')).resolves.toBe('v');
    expect(activity.storage.capabilities.conditionalBatch).toBe(true);
  });

  it('runs a quiet-time callback only in a task that starts with no call in flight', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const storage = new MemoryStorage();
    const slow = new Proxy(storage, {
      get: (target, property, receiver) =>
        property === 'get'
          ? async (key: string) => {
              await gate;
              return target.get(key);
            }
          : (Reflect.get(target, property, receiver) as unknown),
    });
    const activity = new StorageActivity(slow);
    const read = activity.storage.get('k');
    const seen: number[] = [];
    activity.whenQuiet(() => seen.push(activity.inFlight));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([]);
    release();
    await read;
    expect(seen).toEqual([]); // not in the same task as the call settling
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual([0]);
  });
});
