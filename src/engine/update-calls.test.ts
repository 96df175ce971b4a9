/**
 * The caller's side of updates when two checks of one call overlap: the change feed reports the response
 * and the workflow's record (it completed in the same commit) at once. Found flaky on PostgreSQL, where the
 * two reads run on different connections: the second read saw the response already collected by the first
 * check and the workflow completed, and failed an update that had been applied.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import type { Storage } from '../storage/types';
import { SimulatedClock } from './clock';
import { keys } from './keys';
import { UpdateCalls } from './update-calls';

const workflowId = 'up';
const updateId = 'u1';

/** A completed workflow whose update response is in the store, as the owner leaves it. */
async function answeredAndCompleted(): Promise<MemoryStorage> {
  const storage = new MemoryStorage();
  await storage.batch([
    {
      type: 'put',
      key: keys.record(workflowId),
      value: JSON.stringify({
        v: 1,
        id: workflowId,
        type: 'counter',
        version: 1,
        run: 1,
        status: 'completed',
        result: 10,
        createdAt: 0,
        createdBy: 'engine-A',
      }),
    },
    {
      type: 'put',
      key: keys.updateResponse(workflowId, updateId),
      value: JSON.stringify({ updateId, ok: true, value: 10 }),
    },
  ]);
  return storage;
}

/**
 * The real store, with one ordering forced: the second `getMany` runs after the first check deleted the
 * response, and that delete reports back only after the second read has returned.
 */
function interleaved(inner: Storage): { storage: Storage; reads: () => number } {
  let reads = 0;
  let deleted!: () => void;
  const deleteApplied = new Promise<void>((resolve) => (deleted = resolve));
  let secondRead!: () => void;
  const secondReadDone = new Promise<void>((resolve) => (secondRead = resolve));
  const storage = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'getMany')
        return async (keyList: readonly string[]) => {
          const index = reads++;
          if (index === 1) await deleteApplied;
          const values = await target.getMany(keyList);
          if (index === 1) setTimeout(secondRead, 0);
          return values;
        };
      if (property === 'batch')
        return async (operations: Parameters<Storage['batch']>[0]) => {
          await target.batch(operations);
          deleted();
          await secondReadDone;
        };
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { storage, reads: () => reads };
}

/** A caller waiting for the update `add` on the store (manual timers: no deadline fires). */
function waitingCaller(storage: Storage) {
  const calls = new UpdateCalls({
    storage,
    clock: new SimulatedClock(),
    manualTimers: true,
    commit: async () => true,
  });
  const result = calls.wait({ workflowId, updateId, name: 'add', timeoutMs: 60_000 });
  return { calls, result };
}

describe('UpdateCalls', () => {
  it('an applied update whose workflow completed in the same commit resolves, even when two checks overlap', async () => {
    const { storage, reads } = interleaved(await answeredAndCompleted());
    const { calls, result } = waitingCaller(storage);
    // the change feed reports both keys of the owner's commit
    await Promise.all([
      calls.responseWritten(keys.updateResponse(workflowId, updateId)),
      calls.workflowChanged(workflowId),
    ]);
    expect(reads()).toBe(2);
    await expect(result).resolves.toBe(10);
    expect(calls.size).toBe(0);
    expect(await storage.get(keys.updateResponse(workflowId, updateId))).toBeNull();
  });

  it('a workflow that ended without answering fails the call', async () => {
    const storage = await answeredAndCompleted();
    await storage.batch([{ type: 'delete', key: keys.updateResponse(workflowId, updateId) }]);
    const { calls, result } = waitingCaller(storage);
    await calls.workflowChanged(workflowId);
    await expect(result).rejects.toThrow(/Cannot apply update 'add' to workflow 'up': it is completed/);
  });
});
