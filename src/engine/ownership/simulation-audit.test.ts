/**
 * The simulation's audited store (simulation-audit.test-support.ts) must judge writes in the order the store
 * applied them, not in the order their answers came back: over PostgreSQL the answer to an earlier commit can
 * reach the process after a later commit that read what the earlier one wrote (seed 22 of scenario 28 once
 * reported a checkpoint "replaced without appending <its commit record>" that way on a loaded machine).
 * These tests hold a commit's answer back on purpose over MemoryStorage, deterministically.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory';
import type { CommitGroup, Condition, Operation, Storage } from '../../storage/types';
import { keys } from '../keys';
import type { Checkpoint } from '../records';
import { commitRecordKey, encodeCommitRecord, newCheckpoint, nextLogCounters } from '../workflow-writes';
import { AuditedStorage } from './simulation-audit.test-support';

/**
 * A MemoryStorage whose writes apply when they are made but, after `holdNextAnswer()`, the next write's
 * answer waits until `releaseAnswer()`: a commit that landed whose answer is late.
 */
class LateAnswers implements Storage {
  readonly inner = new MemoryStorage();
  readonly capabilities = this.inner.capabilities;
  #hold = false;
  #release: (() => void) | null = null;

  holdNextAnswer() {
    this.#hold = true;
  }
  releaseAnswer() {
    this.#release?.();
    this.#release = null;
  }
  async #answer<T>(applied: Promise<T>): Promise<T> {
    const result = await applied;
    if (this.#hold) {
      this.#hold = false;
      await new Promise<void>((resolve) => (this.#release = resolve));
    }
    return result;
  }
  get(key: string) {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.inner.getMany(keys);
  }
  scan(prefix: string) {
    return this.inner.scan(prefix);
  }
  batch(operations: readonly Operation[]) {
    return this.#answer(this.inner.batch(operations));
  }
  conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    return this.#answer(this.inner.conditionalBatch(conditions, operations));
  }
  commitGroups(groups: readonly CommitGroup[]) {
    return this.#answer(this.inner.commitGroups(groups));
  }
  close() {
    return this.inner.close();
  }
}

const id = 'wf-a';

/**
 * A run's commit replacing `checkpoint`: its commit record (whose absence is the condition) and the next
 * checkpoint, rewritten in `wf-ckpt:`, or with `carry` carried in the record instead (checkpoint.ts). `key`
 * appends the record elsewhere than where `checkpoint` names it.
 */
function runCommit(
  checkpoint: Checkpoint,
  {
    carry = false,
    key = commitRecordKey(id, checkpoint.run, checkpoint),
  }: { carry?: boolean; key?: string } = {},
) {
  const next: Checkpoint = {
    ...checkpoint,
    timelineLength: checkpoint.timelineLength + 1,
    ...nextLogCounters(checkpoint),
  };
  const checkpointRaw = JSON.stringify(next);
  const operations: Operation[] = [
    { type: 'put', key, value: encodeCommitRecord([], [], carry ? { checkpointRaw, epoch: 1 } : undefined) },
  ];
  if (!carry) operations.push({ type: 'put', key: keys.checkpoint(id), value: checkpointRaw });
  return { next, conditions: [{ key, expected: null }], operations };
}

/** Does not settle while nothing releases what `promise` waits for. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  const winner = await Promise.race([
    promise,
    new Promise((resolve) => setTimeout(() => resolve(marker), 20)),
  ]);
  return winner === marker;
}

describe('the simulation audit', () => {
  it('judges a checkpoint replaced twice in store order when the first answer comes back last', async () => {
    const store = new LateAnswers();
    const audited = new AuditedStorage(store);
    const first = newCheckpoint(1, 0);
    await audited.batch([{ type: 'put', key: keys.checkpoint(id), value: JSON.stringify(first) }]);

    // Engine A commits; its answer is late. Engine B reads A's checkpoint and commits on top of it.
    const a = runCommit(first);
    store.holdNextAnswer();
    const committedByA = audited.conditionalBatch(a.conditions, a.operations);
    const read = JSON.parse((await audited.get(keys.checkpoint(id)))!) as Checkpoint;
    expect(read).toEqual(a.next);
    const b = runCommit(read);
    const committedByB = audited.conditionalBatch(b.conditions, b.operations);
    const waitedForA = await pending(committedByB);

    store.releaseAnswer();
    expect(await committedByA).toBe(true);
    expect(await committedByB).toBe(true);
    expect(JSON.parse((await store.get(keys.checkpoint(id)))!)).toEqual(b.next);
    expect(audited.violations).toEqual([]);
    // How: B shares A's keys, so it waited for A's answer (unrelated writes do not: the next test).
    expect(waitedForA).toBe(true);
  });

  it('judges an epoch raised twice in store order when the first answer comes back last', async () => {
    const store = new LateAnswers();
    const audited = new AuditedStorage(store);
    const epoch = keys.ownerEpoch(id);
    await audited.batch([{ type: 'put', key: epoch, value: '1' }]);
    store.holdNextAnswer();
    const toTwo = audited.conditionalBatch(
      [{ key: epoch, expected: '1' }],
      [{ type: 'put', key: epoch, value: '2' }],
    );
    const toThree = audited.conditionalBatch(
      [{ key: epoch, expected: '2' }],
      [{ type: 'put', key: epoch, value: '3' }],
    );
    // An unrelated write goes at once.
    await audited.batch([{ type: 'put', key: keys.ownerEpoch('wf-b'), value: '1' }]);
    store.releaseAnswer();
    expect(await Promise.all([toTwo, toThree])).toEqual([true, true]);
    expect(audited.violations).toEqual([]);
  });

  it('judges checkpoints carried by records in store order when the first answer comes back last', async () => {
    const store = new LateAnswers();
    const audited = new AuditedStorage(store);
    const first = newCheckpoint(1, 0);
    await audited.batch([{ type: 'put', key: keys.checkpoint(id), value: JSON.stringify(first) }]);
    // A's commit carries its checkpoint (no key shared with B's, which appends the next record); late answer.
    const a = runCommit(first, { carry: true });
    store.holdNextAnswer();
    const committedByA = audited.conditionalBatch(a.conditions, a.operations);
    const b = runCommit(a.next, { carry: true });
    const committedByB = audited.conditionalBatch(b.conditions, b.operations);
    const waitedForA = await pending(committedByB);
    store.releaseAnswer();
    expect(await Promise.all([committedByA, committedByB])).toEqual([true, true]);
    expect(audited.violations).toEqual([]);
    expect(waitedForA).toBe(true);
  });

  it('still reports a checkpoint replaced without its commit record, stored or carried', async () => {
    const audited = new AuditedStorage(new MemoryStorage());
    const first = newCheckpoint(1, 0);
    await audited.batch([{ type: 'put', key: keys.checkpoint(id), value: JSON.stringify(first) }]);
    const { next } = runCommit(first);
    await audited.batch([{ type: 'put', key: keys.checkpoint(id), value: JSON.stringify(next) }]);
    expect(audited.violations).toEqual([
      `the checkpoint of ${id} was replaced without appending ${commitRecordKey(id, 1, first)}`,
    ]);
    // A record that carries a checkpoint but is not the record the current one names.
    const skipping = runCommit(next, {
      carry: true,
      key: keys.commitRecord(id, 1, next.timelineLength + 1, next.commits! + 1),
    });
    await audited.batch(skipping.operations);
    expect(audited.violations).toEqual([
      `the checkpoint of ${id} was replaced without appending ${commitRecordKey(id, 1, first)}`,
      `the checkpoint of ${id} was replaced without appending ${commitRecordKey(id, 1, next)}`,
    ]);
  });

  it('allows a purge of a run to make its records tombstones, and reports a tombstone made elsewhere or deleted', async () => {
    const audited = new AuditedStorage(new MemoryStorage());
    const first = newCheckpoint(1, 0);
    const { operations } = runCommit(first);
    await audited.batch(operations);
    const record = commitRecordKey(id, 1, first);
    const tombstone = { type: 'put', key: record, value: '{"purged":2}' } as const;
    // Outside a purge of run 1: reported.
    await audited.batch([tombstone]);
    expect(audited.violations).toEqual([
      `${record} was made a tombstone outside a purge of its run, or twice`,
    ]);
    audited.violations.length = 0;
    // Within it (the marker lists run 1): allowed, but never deleted afterwards.
    await audited.batch([
      { type: 'put', key: keys.purge(id), value: JSON.stringify({ v: 1, runs: [1], all: true }) },
    ]);
    const other = commitRecordKey(id, 1, runCommit(first).next);
    await audited.batch([{ type: 'put', key: other, value: encodeCommitRecord([], []) }]);
    await audited.batch([{ ...tombstone, key: other }]);
    expect(audited.violations).toEqual([]);
    await audited.batch([{ type: 'delete', key: other }]);
    expect(audited.violations).toEqual([`the tombstone ${other} was deleted`]);
  });
});
