/**
 * Group commit: which batches share a storage transaction, and when transactions are sent.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import type { CommitGroup, Condition, Operation, Storage } from '../storage/types';
import { Committer } from './committer';

/** A store whose transactions complete only when the test says so; it records what each one carried. */
function heldStorage() {
  const inner = new MemoryStorage();
  const sent: { groups: number; release: () => void }[] = [];
  const hold = <T>(groups: number, run: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      sent.push({ groups, release: () => void run().then(resolve, reject) });
    });
  const storage: Storage = Object.assign(Object.create(inner) as Storage, {
    capabilities: inner.capabilities,
    conditionalBatch: (conditions: readonly Condition[], operations: readonly Operation[]) =>
      hold(1, () => inner.conditionalBatch(conditions, operations)),
    commitGroups: (groups: readonly CommitGroup[]) => hold(groups.length, () => inner.commitGroups(groups)),
  });
  return { storage, inner, sent };
}

const put = (key: string): Operation[] => [{ type: 'put', key, value: key }];
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('Committer', () => {
  it('sends a lone batch at once, and gathers the batches submitted meanwhile into a second transaction', async () => {
    const { storage, sent } = heldStorage();
    const committer = new Committer(storage);
    const first = committer.commit([], put('a'));
    expect(sent.map((t) => t.groups)).toEqual([1]);
    const rest = [committer.commit([], put('b')), committer.commit([], put('c'))];
    expect(sent).toHaveLength(1);
    await nextTask();
    expect(sent.map((t) => t.groups)).toEqual([1, 2]);
    const late = committer.commit([], put('d'));
    await nextTask();
    expect(sent).toHaveLength(2); // two in flight: it waits for one of them
    sent[0]!.release();
    expect(await first).toBe(true);
    expect(sent.map((t) => t.groups)).toEqual([1, 2, 1]);
    sent[1]!.release();
    sent[2]!.release();
    expect(await Promise.all([...rest, late])).toEqual([true, true, true]);
  });

  it('after a transaction of several batches, gathers the burst that follows into one transaction', async () => {
    const { storage, sent } = heldStorage();
    const committer = new Committer(storage);
    void committer.commit([], put('x'));
    const round = ['a', 'b', 'c'].map((key) => committer.commit([], put(key)));
    await nextTask();
    sent[0]!.release();
    sent[1]!.release(); // three batches
    // Each of the three learns of its commit and submits its next batch, in microtasks of one task.
    const next = (
      await Promise.all(
        round.map(async (done, index) => {
          await done;
          return { result: committer.commit([], put(`n${index}`)) };
        }),
      )
    ).map(({ result }) => result);
    expect(sent).toHaveLength(2); // not sent alone: waiting for the rest of its burst
    await nextTask();
    expect(sent.map((t) => t.groups)).toEqual([1, 3, 3]);
    sent[2]!.release();
    expect(await Promise.all(next)).toEqual([true, true, true]);
  });

  it('splits a large burst found with nothing in flight into two transactions sent back to back', async () => {
    const { storage, sent } = heldStorage();
    const committer = new Committer(storage);
    void committer.commit([], put('x'));
    const round = Array.from({ length: 10 }, (_, index) => committer.commit([], put(`a${index}`)));
    await nextTask();
    sent[0]!.release();
    sent[1]!.release();
    await Promise.all(
      round.map((done, index) => done.then(() => void committer.commit([], put(`b${index}`)))),
    );
    await nextTask();
    expect(sent.map((t) => t.groups)).toEqual([1, 10, 5, 5]);
    const late = committer.commit([], put('late'));
    await nextTask();
    expect(sent).toHaveLength(4);
    sent[2]!.release();
    await nextTask();
    expect(sent.map((t) => t.groups)).toEqual([1, 10, 5, 5, 1]);
    sent[3]!.release();
    sent[4]!.release();
    expect(await late).toBe(true);
  });

  it('decides each group on its own conditions, and rejects every group of a failed transaction', async () => {
    const { storage, inner, sent } = heldStorage();
    await inner.batch(put('taken'));
    const committer = new Committer(storage);
    void committer.commit([], put('first'));
    const refused = committer.commit([{ key: 'taken', expected: null }], put('taken'));
    const applied = committer.commit([{ key: 'free', expected: null }], put('free'));
    await nextTask();
    sent[0]!.release();
    sent[1]!.release();
    expect([await refused, await applied]).toEqual([false, true]);
    expect(await inner.get('taken')).toBe('taken');

    const failing: Storage = Object.assign(Object.create(inner) as Storage, {
      capabilities: inner.capabilities,
      commitGroups: () => Promise.reject(new Error('disk on fire')),
      conditionalBatch: () => Promise.reject(new Error('disk on fire')),
    });
    const broken = new Committer(failing);
    const all = [broken.commit([], put('p')), broken.commit([], put('q')), broken.commit([], put('r'))];
    const outcomes = await Promise.allSettled(all);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});
