/**
 * The one write function. Every durable write the engine makes passes through `FencedWriter.write`, which
 * adds the fence of the ownership mode to the caller's own conditions:
 *
 * - `workflow-lease` and a workflow id: if this engine holds no epoch for the workflow, fail closed at once
 *   (no storage call). Otherwise add "epoch key equals my cached epoch string".
 * - `lease`: add "`lease:epoch` equals my lease epoch"; once deposed, every write fails at once.
 * - `none`, or an engine-scoped write (`null`): only the caller's conditions.
 *
 * When a fenced batch fails, the epoch is re-read. If it differs, is absent, is undecodable, or the read
 * throws, this engine is *deposed* for that workflow: it stops driving it, emits `write.fenced-out` and
 * `claim.lost`, and appends a fence-rejection diagnostic (unfenced, under its own prefix) that the studio
 * draws as a rejected write. Otherwise it was an ordinary lost race on the caller's own conditions.
 * Deposition is internal: it unwinds the turn; workflow code never sees it.
 *
 * This is why a deposed engine can never overwrite its successor: its condition names an epoch that the
 * successor's claim replaced, and storage applies a batch only if every condition holds.
 *
 * Defence in depth: a run's commit also conditions on the exact checkpoint it last wrote (workflow-run.ts),
 * and every transition that mints or rotates an epoch rewrites the checkpoint (it appends the timeline
 * entry that tells the story). So under `workflow-lease` a zombie's commit fails two independent
 * conditions; the epoch is the one that says *why* (deposed, not a lost race), and it alone protects any
 * write that does not carry the checkpoint. Removing either condition leaves the acceptance scenarios
 * green; removing both turns the zombie scenarios red; fenced-write.test.ts fails without the epoch.
 */
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import type { Committer } from '../committer';
import type { EngineEvent, EngineWarning } from '../events';
import { keys } from '../keys';
import type { MetricsCounters } from '../metrics';
import type { OwnershipMode } from '../options';
import type { FenceRejection } from '../records';
import type { ClaimRegistry } from './claims';
import type { GlobalLease } from './global-lease';
import { tryDecodeEpoch } from './holder';

export type WriteOutcome =
  | { ok: true }
  | { ok: false; reason: 'lost-race' }
  | { ok: false; reason: 'deposed'; heldEpoch: number; currentEpoch: number | null };

export type FencedWriterDeps = {
  storage: Storage;
  committer: Committer;
  mode: OwnershipMode;
  engineId: string;
  clock: Clock;
  claims: ClaimRegistry | null;
  lease: GlobalLease | null;
  metrics: MetricsCounters;
  emit: (event: EngineEvent) => void;
  warn: (warning: EngineWarning) => void;
  /** Called once per deposition, after the claim was dropped: stop driving the workflow. */
  onDeposed: (workflowId: string) => void;
};

export class FencedWriter {
  readonly #deps: FencedWriterDeps;

  constructor(deps: FencedWriterDeps) {
    this.#deps = deps;
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
    const { mode, claims, lease, committer } = this.#deps;
    const fenced = [...conditions];
    let heldEpoch = 0;
    if (mode === 'workflow-lease' && workflowId !== null) {
      const claim = claims!.get(workflowId);
      if (!claim) {
        this.#deps.emit({
          type: 'claim.lost',
          workflowId,
          epoch: 0,
          reason: `write '${what}' attempted without holding the claim`,
        });
        return { ok: false, reason: 'deposed', heldEpoch: 0, currentEpoch: null };
      }
      heldEpoch = claim.epoch;
      fenced.push({ key: keys.ownerEpoch(workflowId), expected: claim.epochRaw });
    } else if (mode === 'lease') {
      const held = lease!.current();
      if (!held) return { ok: false, reason: 'deposed', heldEpoch: 0, currentEpoch: null };
      heldEpoch = held.epoch;
      fenced.push({ key: keys.leaseEpoch, expected: held.epochRaw });
    }

    if (await committer.commit(fenced, operations)) return { ok: true };

    if (mode === 'workflow-lease' && workflowId !== null) {
      const claim = claims!.get(workflowId);
      let currentRaw: string | null | undefined;
      try {
        currentRaw = await this.#deps.storage.get(keys.ownerEpoch(workflowId));
      } catch {
        currentRaw = undefined; // a failing read counts as deposed: fail closed
      }
      if (claim && currentRaw === claim.epochRaw) return { ok: false, reason: 'lost-race' };
      const currentEpoch = currentRaw === undefined ? null : (tryDecodeEpoch(currentRaw) ?? null);
      await this.#recordDeposition(workflowId, heldEpoch, currentEpoch, what);
      return { ok: false, reason: 'deposed', heldEpoch, currentEpoch };
    }
    if (mode === 'lease') {
      const held = lease!.current();
      let currentRaw: string | null | undefined;
      try {
        currentRaw = await this.#deps.storage.get(keys.leaseEpoch);
      } catch {
        currentRaw = undefined;
      }
      if (held && currentRaw === held.epochRaw) return { ok: false, reason: 'lost-race' };
      lease!.markDeposed();
      return {
        ok: false,
        reason: 'deposed',
        heldEpoch,
        currentEpoch: currentRaw ? (tryDecodeEpoch(currentRaw) ?? null) : null,
      };
    }
    return { ok: false, reason: 'lost-race' };
  }

  /**
   * Ownership transitions (acquire, takeover, renew, release, rotation, the global lease) carry their own
   * epoch and holder conditions, built in transitions.ts; they are committed here without an added fence.
   * In lease mode a deposed engine may still not make them.
   */
  async writeOwnership(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean> {
    return this.#deps.committer.commit(conditions, operations);
  }

  async #recordDeposition(
    workflowId: string,
    heldEpoch: number,
    currentEpoch: number | null,
    what: string,
  ): Promise<void> {
    const { claims, clock, engineId, metrics } = this.#deps;
    const now = clock.now();
    if (claims!.has(workflowId)) claims!.dispatch(workflowId, { type: 'lost' }, now);
    metrics.writesFencedOut++;
    metrics.claimsLost++;
    metrics.claimAttempts.deposed++;
    this.#deps.emit({ type: 'write.fenced-out', workflowId, heldEpoch, currentEpoch });
    this.#deps.emit({
      type: 'claim.lost',
      workflowId,
      epoch: heldEpoch,
      reason: 'deposed: a write was refused by the epoch fence',
    });
    this.#deps.warn({
      name: 'WorkflowClaimLostWarning',
      workflowId,
      message: `Engine ${engineId} lost workflow '${workflowId}': its write (${what}) at epoch ${heldEpoch} was refused; the epoch is now ${currentEpoch ?? 'unreadable'}. Another engine owns it.`,
    });
    const rejection: FenceRejection = { workflowId, engineId, heldEpoch, currentEpoch, at: now, what };
    try {
      await this.#deps.storage.batch([
        {
          type: 'put',
          key: keys.fenceRejection(workflowId, now, engineId),
          value: JSON.stringify(rejection),
        },
      ]);
    } catch {
      // diagnostics are best effort
    }
    this.#deps.onDeposed(workflowId);
  }
}
