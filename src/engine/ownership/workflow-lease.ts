/**
 * `ownership: 'workflow-lease'`: many engines run at once and every workflow has at most one owner. An engine
 * claims a workflow before any of its code runs here; every write of that workflow is fenced by its epoch;
 * claims are kept alive by the renewal pass and taken over when their holder is gone (claim-manager.ts).
 *
 * The fence: a write of a workflow this engine does not hold fails at once, without a storage call. A write
 * that is not anchored (a start, a rotation, a signal's bookkeeping, …) adds "the epoch key equals my epoch".
 * An anchored write — a run's commit — adds nothing: its own condition is that the commit record named by
 * the checkpoint it last wrote does not exist yet, which holds exactly while that checkpoint is current
 * (workflow-writes.ts), and every transition that mints or rotates an epoch (acquire, takeover, terminate,
 * suspend, time-out, resume) replaces the checkpoint and appends that record in the same batch. So a
 * zombie's commit is refused by storage as surely as by an epoch condition, one storage read cheaper per
 * step (a third of a step's IndexedDB requests).
 *
 * That record must outlive a purge, or a zombie frozen with a commit in flight would land it on nothing (an
 * orphan checkpoint) or inside a new run of the id: purge keeps the records that opened an epoch as
 * tombstones, and a new run of a purged id continues its run numbers past them (purge.ts, lifecycle.ts).
 *
 * When a write is refused, the epoch is re-read: if it differs from the held one, is absent, is undecodable,
 * or the read throws, this engine is *deposed* for that workflow — it stops driving it, emits
 * `write.fenced-out` and `claim.lost`, and appends a fence-rejection diagnostic (unfenced, under its own
 * prefix) that the studio draws as a refused write. Otherwise it was an ordinary lost race on the caller's
 * own conditions. Deposition is internal: it unwinds the turn; workflow code never sees it.
 *
 * This is why a deposed engine can never overwrite its successor: every write of its names either an epoch
 * the successor's claim replaced, or a checkpoint the successor's claim replaced, and storage applies a batch
 * only if every condition holds. The epoch is what says *why* a write was refused.
 */
import type { Operation } from '../../storage/types';
import { WorkflowClaimUnavailableError, WorkflowNotFoundError } from '../errors';
import type { WakeKind } from '../events';
import { keys } from '../keys';
import type { FenceRejection } from '../records';
import { ClaimManager, claimKeysOf } from './claim-manager';
import { ClaimRegistry } from './claims';
import { displacementNotice } from './notices';
import { decodeEpoch, decodeHolder, tryDecodeEpoch } from './holder';
import { checkOwnershipGates, noFence, readFenceEpoch } from './common';
import { claimExpiry, decodeSession, isHolderLive, isSessionLive } from './session';
import type {
  ClaimHolder,
  Fence,
  Ownership,
  OwnershipDeps,
  ReclaimOutcome,
  ReleaseReport,
  WriteOutcome,
} from './ownership';
import { buildRotation, type MintedClaim } from './transitions';

export class WorkflowLeaseOwnership implements Ownership {
  readonly mode = 'workflow-lease' as const;
  readonly sharesStore = true;
  readonly #deps: OwnershipDeps;
  readonly #registry: ClaimRegistry;
  readonly #claims: ClaimManager;
  readonly #pendingHolderChecks = new Set<string>();
  #noticesSoon = false;

  constructor(deps: OwnershipDeps) {
    this.#deps = deps;
    this.#registry = new ClaimRegistry({ renewIntervalMs: deps.renewIntervalMs, ttlMs: deps.ttlMs });
    this.#claims = new ClaimManager({
      storage: deps.storage,
      commit: (conditions, operations) => deps.committer.commit(conditions, operations),
      commitAtOnce: (conditions, operations) => deps.committer.commitAlone(conditions, operations),
      claims: this.#registry,
      clock: deps.clock,
      activeWorkflows: () => deps.activeWorkflows(),
      engineId: deps.engineId,
      ttlMs: deps.ttlMs,
      renewIntervalMs: deps.renewIntervalMs,
      reclaimBatchSize: deps.reclaimBatchSize,
      liveness: deps.liveness,
      metrics: deps.metrics,
      emit: (event) => deps.emit(event),
      warn: (warning) => deps.warn(warning),
      isEligible: (type) => deps.isEligible(type),
      hasRoomFor: (record) => deps.hasRoomFor(record),
      onClaimed: (workflowId, how) => deps.drive(workflowId, how),
      onLost: (workflowId) => deps.stopDriving(workflowId, 'claim-lost'),
      onCorrupt: (workflowId, error) => deps.markCorrupt(workflowId, error),
      isStopping: () => deps.isStopping(),
      tracing: deps.tracing,
    });
  }

  get claimsHeld(): number {
    return this.#registry.size;
  }

  checkGates(): Promise<void> {
    return checkOwnershipGates(this.#deps, this.mode);
  }

  async open(): Promise<void> {
    await this.checkGates();
    if (this.#deps.claimWorkflows) await this.#claims.openSession();
  }

  // -------------------------------------------------------------------------------------------------------
  // Fencing

  fence(workflowId: string | null, what: string, anchored: boolean): Fence | WriteOutcome {
    if (workflowId === null) return noFence;
    const claim = this.#registry.get(workflowId);
    if (!claim) {
      this.#deps.emit({
        type: 'claim.lost',
        workflowId,
        epoch: 0,
        reason: `write '${what}' attempted without holding the claim`,
      });
      return { ok: false, reason: 'deposed', heldEpoch: 0, currentEpoch: null };
    }
    return {
      conditions: anchored ? [] : [{ key: keys.ownerEpoch(workflowId), expected: claim.epochRaw }],
      heldEpoch: claim.epoch,
    };
  }

  async classifyRefusal(workflowId: string | null, fence: Fence, what: string): Promise<WriteOutcome> {
    if (workflowId === null) return { ok: false, reason: 'lost-race' };
    const claim = this.#registry.get(workflowId);
    const currentRaw = await readFenceEpoch(this.#deps.storage, keys.ownerEpoch(workflowId));
    if (claim && currentRaw === claim.epochRaw) return { ok: false, reason: 'lost-race' };
    const currentEpoch = currentRaw === undefined ? null : (tryDecodeEpoch(currentRaw) ?? null);
    await this.#recordDeposition(workflowId, fence.heldEpoch, currentEpoch, what);
    return { ok: false, reason: 'deposed', heldEpoch: fence.heldEpoch, currentEpoch };
  }

  async #recordDeposition(
    workflowId: string,
    heldEpoch: number,
    currentEpoch: number | null,
    what: string,
  ): Promise<void> {
    const { clock, engineId, metrics } = this.#deps;
    const now = clock.now();
    if (this.#registry.has(workflowId)) this.#registry.dispatch(workflowId, { type: 'lost' }, now);
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
    this.#deps.stopDriving(workflowId, 'deposed');
  }

  // -------------------------------------------------------------------------------------------------------
  // Enabling writes and rotations

  foldClaim(
    workflowId: string,
    read: { epochRaw: string | null; holderRaw: string | null },
  ): MintedClaim | null {
    if (!this.#deps.claimWorkflows) return null;
    return this.#claims.foldedClaim(workflowId, read);
  }

  claimLanded(workflowId: string, minted: MintedClaim | null, how: 'start' | 'resume' | 'acquire'): void {
    if (minted) this.#claims.registerClaim(workflowId, minted, how);
  }

  rotation(
    workflowId: string,
    read: { epochRaw: string | null; holderRaw: string | null },
    cause: 'terminated' | 'suspended' | 'timed-out',
  ) {
    const rotation = buildRotation(claimKeysOf(workflowId), {
      epochRaw: read.epochRaw,
      storedEpoch: decodeEpoch(keys.ownerEpoch(workflowId), read.epochRaw),
    });
    rotation.operations.push(...this.displaced(workflowId, read.holderRaw, cause, rotation.epoch));
    return rotation;
  }

  displaced(
    workflowId: string,
    holderRaw: string | null,
    cause: 'terminated' | 'suspended' | 'timed-out' | 'purged',
    newEpoch: number | null = null,
  ): Operation[] {
    const { engineId, clock } = this.#deps;
    return displacementNotice(workflowId, holderRaw, { cause, by: engineId, at: clock.now(), newEpoch });
  }

  rotated(workflowId: string): void {
    if (this.#registry.has(workflowId)) this.#registry.dispatch(workflowId, { type: 'released' });
  }

  async claimForResume(workflowId: string): Promise<void> {
    for (;;) {
      const result = await this.#claims.claim(workflowId, { allowTakeover: true, respectCooldown: false });
      if (result.outcome === 'acquired' || result.outcome === 'taken-over') return;
      if (result.outcome === 'unavailable')
        throw new WorkflowClaimUnavailableError(
          workflowId,
          result.heldBy && {
            engineId: result.heldBy.engineId,
            epoch: result.heldBy.epoch,
            expiresAt: result.heldBy.expiresAt,
          },
        );
      if (result.outcome !== 'lost-race') return; // not running, missing, corrupt, ineligible: nothing to claim
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Runs

  drives(workflowId: string): boolean {
    return this.#registry.has(workflowId);
  }

  heldEpoch(workflowId: string): number | undefined {
    return this.#registry.get(workflowId)?.epoch;
  }

  releaseOperations(workflowId: string): Operation[] {
    return [{ type: 'delete', key: keys.ownerHolder(workflowId) }];
  }

  runEnded(workflowId: string): void {
    this.#claims.forget(workflowId);
  }

  guardWake(workflowId: string, kind: WakeKind, parkedEpoch: number): Promise<boolean> {
    return this.#claims.guardWake(workflowId, kind, parkedEpoch);
  }

  /**
   * Work may have appeared for a workflow this engine does not hold: claim it if nobody live holds it. (A
   * change to a workflow this engine holds is not looked at here: another engine that displaces its claim
   * leaves it a notice in the same batch, `noticeDisplacement`.)
   */
  noticeChange(workflowId: string): void {
    if (!this.#deps.claimWorkflows || this.#deps.isStopping() || this.#registry.has(workflowId)) return;
    this.#checkHolderSoon(workflowId);
  }

  /** The change feed reported a displacement notice addressed to `engineId` (notices.ts). */
  noticeDisplacement(engineId: string): void {
    if (engineId !== this.#deps.engineId || !this.#deps.claimWorkflows || this.#noticesSoon) return;
    this.#noticesSoon = true;
    this.#deps.reactions.soon(() => {
      this.#noticesSoon = false;
      return this.#readNotices();
    });
  }

  #readNotices(): Promise<void> {
    return this.#claims.readNotices().catch(() => undefined); // read again next pass
  }

  noticeSession(engineId: string): void {
    if (engineId === this.#deps.engineId || !this.#deps.claimWorkflows) return;
    this.#claims.sessionChanged(engineId);
    this.#deps.reactions.run(
      this.#deps.storage.get(keys.session(engineId)).then((raw) => {
        const session = raw === null ? null : decodeSession(raw);
        if (!isSessionLive(session, this.#deps.clock.now(), this.#claims.graceMs))
          this.#deps.requestReclaim();
      }),
    );
  }

  /**
   * Something happened to workflows this engine does not hold: read their holders in one batch, a microtask
   * later; those whose holder is gone, undecodable, or not live (its session lapsed or ended, or the liveness
   * oracle says its engine is dead: asked once per engine) are claimed now — the claim judges afresh.
   */
  #checkHolderSoon(workflowId: string): void {
    this.#pendingHolderChecks.add(workflowId);
    if (this.#pendingHolderChecks.size > 1) return;
    this.#deps.reactions.soon(() => {
      const ids = [...this.#pendingHolderChecks];
      this.#pendingHolderChecks.clear();
      return this.#claimIfFree(ids);
    });
  }

  async #claimIfFree(ids: readonly string[]): Promise<void> {
    const { storage, liveness, engineId } = this.#deps;
    const holders = await storage.getMany(ids.map((id) => keys.ownerHolder(id)));
    const answers = new Map<string, Promise<boolean>>();
    const isDead = (id: string) => {
      let answer = answers.get(id);
      if (!answer)
        answers.set(
          id,
          (answer = liveness ? liveness.isDead(id).catch(() => false) : Promise.resolve(false)),
        );
      return answer;
    };
    await Promise.all(
      ids.map(async (id, index) => {
        const raw = holders[index] ?? null;
        if (this.#registry.has(id)) return;
        const holder = raw === null ? null : decodeHolder(raw);
        const free =
          raw === null ||
          !holder ||
          (holder.engineId !== engineId && (!this.#claims.looksLive(raw) || (await isDead(holder.engineId))));
        if (free) await this.#claims.reclaimOne(id);
      }),
    );
  }

  async letGo(workflowId: string): Promise<void> {
    await this.#claims.release(workflowId).catch(() => false);
  }

  // -------------------------------------------------------------------------------------------------------
  // Background passes, views, shutdown

  async renew(): Promise<void> {
    if (!this.#deps.claimWorkflows) return;
    await this.#claims.renewAll();
    await this.#readNotices();
  }

  async reclaim(options: { full?: boolean } = {}): Promise<void> {
    if (this.#deps.claimWorkflows) await this.#claims.reclaim(options);
  }

  claimLost(workflowId: string, epoch: number, reason: string): void {
    this.#claims.loseClaim(workflowId, epoch, reason);
  }

  async holderOf(workflowId: string): Promise<ClaimHolder | null> {
    const { storage, liveness, clock } = this.#deps;
    const raw = await storage.get(keys.ownerHolder(workflowId));
    const holder = raw === null ? null : decodeHolder(raw);
    if (!holder) return null;
    const sessionRaw = holder.expiresAt === null ? await storage.get(keys.session(holder.engineId)) : null;
    const session = sessionRaw === null ? null : decodeSession(sessionRaw);
    const dead =
      holder.engineId !== this.#deps.engineId && liveness
        ? await liveness.isDead(holder.engineId).catch(() => false)
        : false;
    return {
      engineId: holder.engineId,
      epoch: holder.epoch,
      claimedAt: holder.claimedAt,
      expiresAt: claimExpiry(holder, session),
      live: isHolderLive(holder, session, clock.now(), this.#claims.graceMs, dead),
    };
  }

  async claimOne(workflowId: string): Promise<ReclaimOutcome> {
    const held = this.#registry.get(workflowId);
    if (held) return { outcome: 'already-held', epoch: held.epoch };
    if (!this.#deps.claimWorkflows) return { outcome: 'ineligible' };
    const result = await this.#claims.claim(workflowId, { allowTakeover: true, respectCooldown: false });
    switch (result.outcome) {
      case 'acquired':
      case 'taken-over':
        return result;
      case 'unavailable': {
        const holder = await this.holderOf(workflowId);
        if (holder?.engineId === this.#deps.engineId) return { outcome: 'already-held', epoch: holder.epoch };
        return holder ? { outcome: 'held-live', holder } : { outcome: 'lost-race' };
      }
      case 'missing':
        throw new WorkflowNotFoundError(workflowId);
      case 'cooling-down':
      case 'lost-race':
        return { outcome: 'lost-race' };
      default:
        return { outcome: result.outcome };
    }
  }

  owned(): string[] {
    return this.#registry.all().map((claim) => claim.workflowId);
  }

  async release(): Promise<ReleaseReport> {
    const claimsReleased = await this.#claims.releaseAll().catch(() => 0);
    return { claimsReleased, leaseReleased: false };
  }
}
