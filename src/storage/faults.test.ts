import { describe, expect, it } from 'vitest';
import { isStorageError, type StorageError } from './errors';
import { FaultInjectingStorage, FaultInjector, type FaultOptions } from './faults.test-support';
import { MemoryStorage } from './memory';
import type { Operation } from './types';

const put = (key: string, value: string): Operation => ({ type: 'put', key, value });

async function settle(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return isStorageError(error)
      ? `${error.code}${error.applied === undefined ? '' : `:${error.applied}`}`
      : 'other';
  }
}

/** A fixed sequence of reads and writes; returns how each call settled. */
async function runScript(options: FaultOptions): Promise<string[]> {
  const storage = new FaultInjectingStorage(new MemoryStorage(), options);
  const outcomes: string[] = [];
  for (let index = 0; index < 200; index++) {
    const call =
      index % 3 === 0
        ? storage.get(`k${index % 7}`)
        : index % 3 === 1
          ? storage.batch([put(`k${index % 7}`, String(index))])
          : storage.conditionalBatch([], [put('c', String(index))]);
    outcomes.push(await settle(call));
  }
  await storage.close();
  return outcomes;
}

async function rejection(promise: Promise<unknown>): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    if (isStorageError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to reject');
}

/** Lets queued promise callbacks run. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 10; turn++) await Promise.resolve();
}

describe('FaultInjectingStorage', () => {
  const rates = { readFailureRate: 0.2, writeFailureRate: 0.2, writeFailureAfterApplyRate: 0.2 };

  it('injects the same faults for the same seed, and different ones for another seed', async () => {
    const first = await runScript({ seed: 42, ...rates });
    const again = await runScript({ seed: 42, ...rates });
    const other = await runScript({ seed: 43, ...rates });
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    // Every kind of fault occurred, at roughly the configured rates.
    expect(first.filter((outcome) => outcome === 'injected-fault').length).toBeGreaterThan(5); // reads
    expect(first.filter((outcome) => outcome === 'injected-fault:false').length).toBeGreaterThan(10);
    expect(first.filter((outcome) => outcome === 'injected-fault:true').length).toBeGreaterThan(10);
    expect(first.filter((outcome) => outcome === 'ok').length).toBeGreaterThan(60);
  });

  it('draws one number per call, so changing rates midway does not shift later decisions', async () => {
    const draws = async (changeRatesAt: number | undefined) => {
      const injector = new FaultInjector({ seed: 9, readFailureRate: 0.5 });
      const outcomes: string[] = [];
      for (let index = 0; index < 40; index++) {
        if (index === changeRatesAt) injector.setFaults({ writeFailureRate: 1 });
        outcomes.push(await settle(injector.run('get', () => 'value')));
      }
      return outcomes;
    };
    expect(await draws(10)).toEqual(await draws(undefined));
  });

  it('fails a write before applying it: nothing is written and applied is false', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { writeFailureRate: 1 });
    const error = await rejection(storage.batch([put('k', 'v')]));
    expect(error.code).toBe('injected-fault');
    expect(error.operation).toBe('batch');
    expect(error.applied).toBe(false);
    expect(error.message).toMatch(/injected on purpose/);
    expect(await inner.get('k')).toBeNull();
    expect(storage.counts.writeFailures).toBe(1);
  });

  it('fails a write after applying it: the store changed and applied is true', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { writeFailureAfterApplyRate: 1 });
    const error = await rejection(storage.conditionalBatch([{ key: 'k', expected: null }], [put('k', 'v')]));
    expect(error.code).toBe('injected-fault');
    expect(error.applied).toBe(true);
    expect(await inner.get('k')).toBe('v');
    // A conditional batch whose condition failed applied nothing, and says so.
    const refused = await rejection(
      storage.conditionalBatch([{ key: 'k', expected: null }], [put('k', 'w')]),
    );
    expect(refused.applied).toBe(false);
    expect(await inner.get('k')).toBe('v');
    const groups = await rejection(storage.commitGroups!([{ conditions: [], operations: [put('g', '1')] }]));
    expect(groups.applied).toBe(true);
    expect(await inner.get('g')).toBe('1');
    expect(storage.counts.writeFailuresAfterApply).toBe(3);
  });

  it('fails reads without touching writes', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { readFailureRate: 1 });
    await storage.batch([put('k', 'v')]);
    expect((await rejection(storage.get('k'))).code).toBe('injected-fault');
    expect((await rejection(storage.getMany(['k']))).operation).toBe('getMany');
    expect((await rejection(storage.scan(''))).operation).toBe('scan');
    expect(storage.counts).toMatchObject({ calls: 4, readFailures: 3, writeFailures: 0 });
  });

  it('holds a hung call until released, then runs it against the store as it is then', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { hangRate: 1 });
    let settled = false;
    const writing = storage.batch([put('k', 'v')]).then(() => {
      settled = true;
    });
    await flush();
    expect(settled).toBe(false);
    expect(storage.faults.hungCalls).toBe(1);
    expect(await inner.get('k')).toBeNull();
    storage.setFaults({ hangRate: 0 });
    expect(storage.releaseHung()).toBe(1);
    await writing;
    expect(settled).toBe(true);
    expect(await inner.get('k')).toBe('v');
    expect(storage.counts.hangs).toBe(1);
  });

  it('rejects hung calls with closed when closed, and every later call too', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { hangRate: 1, closeInner: false });
    const hung = rejection(storage.get('k'));
    await flush();
    await storage.close();
    const error = await hung;
    expect(error.code).toBe('closed');
    expect(error.operation).toBe('get');
    expect((await rejection(storage.batch([]))).code).toBe('closed');
    // closeInner: false leaves the shared store open.
    await inner.batch([put('still', 'open')]);
    expect(await inner.get('still')).toBe('open');
  });

  it('closes the inner store by default', async () => {
    const inner = new MemoryStorage();
    await new FaultInjectingStorage(inner).close();
    expect((await rejection(inner.get('k'))).code).toBe('closed');
  });

  it('waits for the delay hook before each call, without timers of its own', async () => {
    const inner = new MemoryStorage();
    const pending: { operation: string; resume: () => void }[] = [];
    const storage = new FaultInjectingStorage(inner, {
      delay: (operation) => new Promise<void>((resume) => pending.push({ operation, resume })),
    });
    const writing = storage.batch([put('k', 'v')]);
    await flush();
    expect(pending.map((call) => call.operation)).toEqual(['batch']);
    expect(await inner.get('k')).toBeNull();
    pending[0]?.resume();
    await writing;
    expect(await inner.get('k')).toBe('v');
    storage.setFaults({ delay: undefined });
    expect(await storage.get('k')).toBe('v');
    expect(pending).toHaveLength(1);
  });

  it('passes everything through while disabled, drawing nothing', async () => {
    const storage = new FaultInjectingStorage(new MemoryStorage(), { writeFailureRate: 1, enabled: false });
    await storage.batch([put('k', 'v')]);
    expect(storage.counts.calls).toBe(0);
    storage.enabled = true;
    expect((await rejection(storage.batch([put('k', 'w')]))).code).toBe('injected-fault');
    expect(await storage.inner.get('k')).toBe('v');
  });

  it('forwards capabilities and watch of the inner store, and drops its watchers on close', async () => {
    const inner = new MemoryStorage();
    const storage = new FaultInjectingStorage(inner, { closeInner: false });
    expect(storage.capabilities).toEqual(inner.capabilities);
    const seen: string[][] = [];
    storage.watch!('k', (keys) => seen.push(keys));
    await inner.batch([put('k1', '1')]);
    expect(seen).toEqual([['k1']]);
    await storage.close();
    await inner.batch([put('k2', '1')]);
    expect(seen).toEqual([['k1']]);
  });

  it('does not offer commitGroups or watch when the inner store lacks them', () => {
    const inner = new MemoryStorage();
    const minimal = {
      capabilities: { conditionalBatch: true, durable: false, changeFeed: false, groupCommit: false },
      get: inner.get.bind(inner),
      getMany: inner.getMany.bind(inner),
      scan: inner.scan.bind(inner),
      batch: inner.batch.bind(inner),
      conditionalBatch: inner.conditionalBatch.bind(inner),
      close: inner.close.bind(inner),
    };
    const storage = new FaultInjectingStorage(minimal);
    expect(storage.commitGroups).toBeUndefined();
    expect(storage.watch).toBeUndefined();
  });

  it('rejects rates outside 0 to 1', () => {
    expect(() => new FaultInjector({ hangRate: 1.5 })).toThrow(/hangRate/);
    expect(() => new FaultInjector({ readFailureRate: -0.1 })).toThrow(/readFailureRate/);
    expect(() => new FaultInjector({ seed: 1.5 })).toThrow(/seed/);
  });
});
