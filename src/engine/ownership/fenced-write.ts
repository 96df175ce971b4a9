/**
 * The one write function. Every durable write the engine makes — a run's commit, a start, a rotation, a
 * signal, a timer collected — passes through `FencedWriter.write`, which adds the fence of the ownership
 * strategy to the caller's own conditions and, when storage refuses the batch, asks the strategy whether
 * that was an ordinary lost race or whether this engine is deposed (and may no longer write for that
 * workflow, or at all). How each mode fences is said once, in its strategy (none.ts, lease.ts,
 * workflow-lease.ts); this module only guarantees that no write skips it.
 *
 * An `anchored` write is one whose own conditions already pin the workflow's checkpoint (a run's commit:
 * its commit record's key is unused exactly while the checkpoint it last wrote is current). A strategy whose
 * every epoch transition replaces the checkpoint (workflow-lease) needs no further condition for it: it
 * still refuses it without a storage call when no claim is held, and still classifies its refusal. (Purge
 * keeps the records that opened an epoch, so an anchor outlives its run: purge.ts.)
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
   * @param options.anchored the conditions pin the workflow's checkpoint through a commit record's key
   */
  async write(
    workflowId: string | null,
    conditions: readonly Condition[],
    operations: readonly Operation[],
    what: string,
    options: { anchored?: boolean } = {},
  ): Promise<WriteOutcome> {
    const fence = this.#ownership.fence(workflowId, what, options.anchored === true);
    if ('ok' in fence) return fence;
    const fenced = fence.conditions.length === 0 ? conditions : [...conditions, ...fence.conditions];
    if (await this.#committer.commit(fenced, operations)) return { ok: true };
    return this.#ownership.classifyRefusal(workflowId, fence, what);
  }
}
