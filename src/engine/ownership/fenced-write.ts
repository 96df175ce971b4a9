/**
 * The one write function. Every durable write the engine makes — a run's commit, a start, a rotation, a
 * signal, a timer collected — passes through `FencedWriter.write`, which adds the fence of the ownership
 * strategy to the caller's own conditions and, when storage refuses the batch, asks the strategy whether
 * that was an ordinary lost race or whether this engine is deposed (and may no longer write for that
 * workflow, or at all). How each mode fences is said once, in its strategy (none.ts, lease.ts,
 * workflow-lease.ts); this module only guarantees that no write skips it.
 *
 * A run's commit also pins the workflow's checkpoint in its own conditions (its commit record's key is
 * unused exactly while the checkpoint it last wrote is current); strategies fence it like any other write
 * all the same: an anchor can be deleted (a purge deletes a finished run's log), an epoch never is
 * (workflow-lease.ts).
 *
 * Ownership transitions (acquire, takeover, renew, release, rotation, the global lease, the mode marker)
 * carry their own epoch and holder conditions and are committed by the strategy itself, never through here.
 */
import type { Condition, Operation } from '../../storage/types';
import type { Committer } from '../committer';
import type { Ownership, WriteOutcome } from './ownership';

export type { WriteOutcome } from './ownership';

export class FencedWriter {
  readonly #committer: Committer;
  readonly #ownership: Ownership;

  constructor(deps: { committer: Committer; ownership: Ownership }) {
    this.#committer = deps.committer;
    this.#ownership = deps.ownership;
  }

  /**
   * Commits `operations` if `conditions` and the ownership fence hold.
   * @param workflowId the workflow the write belongs to, or null for engine-scoped writes
   * @param what a short description of the write, recorded in fence-rejection diagnostics
   */
  async write(
    workflowId: string | null,
    conditions: readonly Condition[],
    operations: readonly Operation[],
    what: string,
  ): Promise<WriteOutcome> {
    const fence = this.#ownership.fence(workflowId, what);
    if ('ok' in fence) return fence;
    const fenced = fence.conditions.length === 0 ? conditions : [...conditions, ...fence.conditions];
    if (await this.#committer.commit(fenced, operations)) return { ok: true };
    return this.#ownership.classifyRefusal(workflowId, fence, what);
  }
}
