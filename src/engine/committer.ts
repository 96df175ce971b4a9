/**
 * Group commit. Conditional batches submitted while transactions are in flight are queued, and the queue is
 * committed as one storage transaction of independent groups (`storage.commitGroups`), each keeping its own
 * conditions: one group's failed condition never affects another. A lone batch is committed at once, so
 * group commit adds no latency to one workflow on its own; under load (many workflows of one engine
 * finishing steps together) it turns N transactions into a few.
 *
 * - **Bursts**: after a transaction that carried several groups, the next batch waits for the rest of its
 *   burst: the workflows of that transaction learn of it in one event-loop task and submit their next
 *   batches in the microtasks that follow, so the queue is flushed one task later (otherwise the first of
 *   them would go alone and every round would cost an extra transaction).
 * - **Two in flight**: a burst found with nothing in flight is split into two transactions sent back to
 *   back, and from then on a burst is sent while the other half's transaction is still in flight. The
 *   store runs them one after the other (IndexedDB orders overlapping read-write transactions by creation),
 *   but the engine prepares one half's next steps while the store commits the other half, instead of the
 *   two waiting on each other. Groups of two transactions in flight are concurrent submissions, so either
 *   order is one of theirs.
 *
 * Stores without the `groupCommit` capability get one `conditionalBatch` per submission.
 */
import type { Condition, Operation, Storage } from '../storage/types';
import { storageLimits } from '../storage/types';

/** Transactions in flight at once. */
const maxInFlight = 2;
/** A burst is split in two only if each half carries at least this many batches. */
const minSplitGroups = 4;

type Pending = {
  conditions: readonly Condition[];
  operations: readonly Operation[];
  resolve: (ok: boolean) => void;
  reject: (error: unknown) => void;
};

export class Committer {
  readonly #storage: Storage;
  readonly #maxGroups: number;
  #queue: Pending[] = [];
  #inFlight = 0;
  /** The most groups a transaction carried among those that completed since the last one was sent. */
  #completedGroups = 0;
  #gathering = false;
  /** How many storage transactions carried more than one group, and how many groups they carried. */
  readonly stats = { transactions: 0, groupedTransactions: 0, groupedBatches: 0 };

  constructor(storage: Storage, options?: { maxGroupsPerTransaction?: number }) {
    this.#storage = storage;
    this.#maxGroups = options?.maxGroupsPerTransaction ?? 64;
  }

  commit(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean> {
    if (!this.#storage.capabilities.groupCommit || !this.#storage.commitGroups) {
      this.stats.transactions++;
      return this.#storage.conditionalBatch(conditions, operations);
    }
    return new Promise<boolean>((resolve, reject) => {
      this.#queue.push({ conditions, operations, resolve, reject });
      if (this.#inFlight >= maxInFlight || this.#gathering) return;
      if (this.#inFlight === 0 && this.#completedGroups <= 1) {
        this.#flush();
        return;
      }
      this.#gathering = true;
      afterThisTask(() => {
        this.#gathering = false;
        this.#flush();
      });
    });
  }

  /**
   * Commits one batch in a transaction of its own, now: not queued behind the batches waiting here (for a
   * write that must not wait for a burst of others, like an engine's session renewal).
   */
  commitAlone(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean> {
    this.stats.transactions++;
    return this.#storage.conditionalBatch(conditions, operations);
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < maxInFlight) {
      const split = this.#inFlight === 0 && this.#queue.length >= 2 * minSplitGroups;
      this.#send(split ? Math.ceil(this.#queue.length / 2) : this.#queue.length);
    }
  }

  /** Sends up to `count` queued batches as one transaction. */
  #send(count: number): void {
    const groups: Pending[] = [];
    let operationCount = 0;
    while (this.#queue.length > 0 && groups.length < Math.min(count, this.#maxGroups)) {
      const next = this.#queue[0]!;
      const size = next.operations.length + next.conditions.length;
      if (groups.length > 0 && operationCount + size > storageLimits.maxOperationsPerBatch) break;
      groups.push(this.#queue.shift()!);
      operationCount += size;
    }
    this.#inFlight++;
    this.#completedGroups = 0;
    this.stats.transactions++;
    if (groups.length > 1) {
      this.stats.groupedTransactions++;
      this.stats.groupedBatches += groups.length;
    }
    const done = (settle: (pending: Pending, index: number) => void) => {
      groups.forEach(settle);
      this.#inFlight--;
      this.#completedGroups = Math.max(this.#completedGroups, groups.length);
      if (!this.#gathering) this.#flush(); // a burst being gathered is flushed whole, by its own task
    };
    const commit =
      groups.length === 1
        ? this.#storage.conditionalBatch(groups[0]!.conditions, groups[0]!.operations).then((ok) => [ok])
        : this.#storage.commitGroups!(
            groups.map(({ conditions, operations }) => ({ conditions, operations })),
          );
    commit.then(
      (results) => done((pending, index) => pending.resolve(results[index] === true)),
      (error: unknown) => done((pending) => pending.reject(error)),
    );
  }
}

type Scheduler = { setImmediate?: (run: () => void) => unknown; setTimeout?: (run: () => void) => unknown };

/**
 * Runs `run` in a later event-loop task, after the microtasks of this one: `setImmediate` where there is one
 * (Node: no timer clamping), else a zero-delay `setTimeout`.
 */
function afterThisTask(run: () => void): void {
  const scheduler = globalThis as Scheduler;
  if (scheduler.setImmediate) scheduler.setImmediate(run);
  else scheduler.setTimeout!(run);
}
