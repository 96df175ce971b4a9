/**
 * Group commit. Conditional batches submitted while a transaction is in flight are queued, and the queue is
 * committed as one storage transaction of independent groups (`storage.commitGroups`), each keeping its own
 * conditions: one group's failed condition never affects another. A lone batch is committed at once, so
 * group commit adds no latency; under load (many workflows of one engine finishing steps together) it
 * turns N transactions into one.
 *
 * Stores without the `groupCommit` capability get one `conditionalBatch` per submission.
 */
import type { Condition, Operation, Storage } from '../storage/types';
import { storageLimits } from '../storage/types';

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
      if (this.#inFlight === 0) this.#flush();
    });
  }

  #flush(): void {
    if (this.#queue.length === 0) return;
    const groups: Pending[] = [];
    let operationCount = 0;
    while (this.#queue.length > 0 && groups.length < this.#maxGroups) {
      const next = this.#queue[0]!;
      const size = next.operations.length + next.conditions.length;
      if (groups.length > 0 && operationCount + size > storageLimits.maxOperationsPerBatch) break;
      groups.push(this.#queue.shift()!);
      operationCount += size;
    }
    this.#inFlight++;
    this.stats.transactions++;
    if (groups.length > 1) {
      this.stats.groupedTransactions++;
      this.stats.groupedBatches += groups.length;
    }
    const done = (settle: (pending: Pending, index: number) => void) => {
      groups.forEach(settle);
      this.#inFlight--;
      this.#flush();
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
