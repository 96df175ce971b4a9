/**
 * Per-workflow claims (`ownership: 'workflow-lease'`): acquire, takeover, renew, release, the reclaim scan
 * and the wake guard. The pure rules live in transitions.ts; this module reads current values, commits the
 * transitions together with their timeline entry, and keeps the in-memory registry (claims.ts) in step.
 *
 * Guarantees (ownership.md):
 * - A claim is taken before any of the workflow's code runs here; a lost race runs no code.
 * - Renewal changes only `expiresAt`, conditioned on the exact holder string this engine last wrote. A
 *   refused renewal means the claim is lost: the run is dropped (its activity aborted). A storage error is
 *   not a loss: the claim is kept and renewed again next pass.
 * - Nothing is stranded: the reclaim scan takes over expired holders (TTL + grace, an undecodable holder,
 *   or a holder the liveness oracle reports dead) and acquires running workflows that have no holder, for
 *   every workflow whose type this engine has registered. It is bounded per pass and resumes where it
 *   stopped.
 * - After losing a workflow, this engine waits out a cooldown before trying to take it back.
 */
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import { CorruptRecordError, WorkflowClaimUnavailableError } from '../errors';
import type { EngineEvent, EngineWarning, WakeKind } from '../events';
import { keys, workflowIdOf } from '../keys';
import type { MetricsCounters } from '../metrics';
import { decodeCheckpoint, decodeRecord, type WorkflowRecord } from '../records';
import { appendTimeline, type TimelineNote } from '../workflow-writes';
import type { ClaimRegistry } from './claims';
import { decodeEpoch, decodeHolder, isClaimExpired, readHolder, type Holder } from './holder';
import type { EngineLiveness } from './liveness';
import type { ClaimHow } from './ownership';
import {
  buildAcquire,
  buildRelease,
  buildRenew,
  buildTakeover,
  type ClaimKeys,
  type MintedClaim,
} from './transitions';

export type ClaimManagerDeps = {
  storage: Storage;
  /** Commits an ownership transition (it carries its own epoch and holder conditions: no added fence). */
  commit: (conditions: readonly Condition[], operations: readonly Operation[]) => Promise<boolean>;
  claims: ClaimRegistry;
  clock: Clock;
  engineId: string;
  ttlMs: number;
  renewIntervalMs: number;
  reclaimBatchSize: number;
  liveness: EngineLiveness | undefined;
  metrics: MetricsCounters;
  emit: (event: EngineEvent) => void;
  warn: (warning: EngineWarning) => void;
  /** This engine has a definition for the type (any version), so it may claim such workflows. */
  isEligible: (workflowType: string) => boolean;
  /** A claim landed for a running workflow: evict any stale local context and drive it from storage. */
  onClaimed: (workflowId: string, how: ClaimHow) => void;
  /** The claim was lost: stop driving the workflow. */
  onLost: (workflowId: string) => void;
  /** A stored record is corrupt: fail that workflow closed. */
  onCorrupt: (workflowId: string, error: CorruptRecordError) => void;
  /** True when shutdown has begun: claims that land now are released, not driven. */
  isStopping: () => boolean;
};

export type AcquireResult =
  | { outcome: 'acquired' | 'taken-over'; epoch: number }
  | { outcome: 'unavailable'; heldBy: Holder | null }
  | { outcome: 'lost-race' | 'ineligible' | 'not-running' | 'missing' | 'cooling-down' | 'corrupt' };

export function claimKeysOf(workflowId: string): ClaimKeys {
  return { epochKey: keys.ownerEpoch(workflowId), holderKey: keys.ownerHolder(workflowId) };
}

const maxTakeoverAttempts = 5;

/** How many claims one reclaim pass attempts at once. */
const reclaimConcurrency = 8;

export class ClaimManager {
  readonly #deps: ClaimManagerDeps;
  #holderCursor: string | undefined;
  #runningCursor: string | undefined;

  constructor(deps: ClaimManagerDeps) {
    this.#deps = deps;
  }

  get graceMs(): number {
    return 2 * this.#deps.renewIntervalMs;
  }

  // -------------------------------------------------------------------------------------------------------
  // Folded acquire (start, delayed start, resume)

  /** The claim part of an enabling write, from the epoch and holder just read. Throws if the claim is live. */
  foldedClaim(workflowId: string, read: { epochRaw: string | null; holderRaw: string | null }): MintedClaim {
    const current = readHolder(read.holderRaw);
    if (current)
      throw new WorkflowClaimUnavailableError(
        workflowId,
        current.holder && {
          engineId: current.holder.engineId,
          epoch: current.holder.epoch,
          expiresAt: current.holder.expiresAt,
        },
      );
    const storedEpoch = decodeEpoch(keys.ownerEpoch(workflowId), read.epochRaw);
    return buildAcquire(
      claimKeysOf(workflowId),
      { epochRaw: read.epochRaw, storedEpoch },
      { engineId: this.#deps.engineId, now: this.#deps.clock.now(), ttlMs: this.#deps.ttlMs },
    );
  }

  /** Records a claim whose batch landed. */
  registerClaim(
    workflowId: string,
    minted: MintedClaim,
    how: 'start' | 'acquire' | 'resume' | 'takeover',
  ): void {
    this.#deps.claims.dispatch(workflowId, {
      type: 'acquired',
      claim: {
        workflowId,
        epoch: minted.epoch,
        epochRaw: minted.epochRaw,
        holder: minted.holder,
        holderRaw: minted.holderRaw,
      },
    });
    this.#deps.metrics.claimAttempts[how === 'takeover' ? 'takeover' : 'acquired']++;
    if (how !== 'takeover') this.#deps.emit({ type: 'claim.acquired', workflowId, epoch: minted.epoch, how });
  }

  // -------------------------------------------------------------------------------------------------------
  // Standalone acquire / takeover

  /**
   * Claims a running workflow: acquires it when it has no holder, takes it over when its holder is expired
   * (and `allowTakeover`). On success the engine is told to drive it (`onClaimed`).
   */
  async claim(
    workflowId: string,
    options: {
      allowTakeover: boolean;
      respectCooldown: boolean;
      /** The liveness answers of the reclaim pass this claim belongs to (asked once per engine per pass). */
      isDead?: (engineId: string) => Promise<boolean>;
    },
  ): Promise<AcquireResult> {
    const { storage, claims, clock, engineId, liveness, metrics } = this.#deps;
    const isDead = options.isDead ?? ((id: string) => liveness!.isDead(id));
    if (claims.has(workflowId)) return { outcome: 'acquired', epoch: claims.get(workflowId)!.epoch };
    if (options.respectCooldown && claims.isCoolingDown(workflowId, clock.now())) {
      metrics.claimAttempts.backoff_skipped++;
      return { outcome: 'cooling-down' };
    }
    for (let attempt = 0; attempt < maxTakeoverAttempts; attempt++) {
      const recordKey = keys.record(workflowId);
      const checkpointKey = keys.checkpoint(workflowId);
      const { epochKey, holderKey } = claimKeysOf(workflowId);
      const [recordRaw, checkpointRaw, epochRaw, holderRaw] = await storage.getMany([
        recordKey,
        checkpointKey,
        epochKey,
        holderKey,
      ]);
      if (!recordRaw || !checkpointRaw) return { outcome: 'missing' };
      let record: WorkflowRecord;
      let storedEpoch: number | null;
      let view;
      try {
        record = decodeRecord(recordKey, recordRaw);
        view = { record, checkpoint: decodeCheckpoint(checkpointKey, checkpointRaw), checkpointRaw };
        storedEpoch = decodeEpoch(epochKey, epochRaw ?? null);
      } catch (error) {
        if (error instanceof CorruptRecordError) {
          this.#deps.onCorrupt(workflowId, error);
          return { outcome: 'corrupt' };
        }
        throw error;
      }
      if (!this.#deps.isEligible(record.type)) return { outcome: 'ineligible' };
      const current = readHolder(holderRaw ?? null);
      const now = clock.now();
      const who = { engineId, now, ttlMs: this.#deps.ttlMs };
      let minted: MintedClaim;
      let takenFrom: Holder | null = null;
      let holderDead = false;
      if (!current) {
        if (record.status !== 'running') return { outcome: 'not-running' };
        minted = buildAcquire(claimKeysOf(workflowId), { epochRaw: epochRaw ?? null, storedEpoch }, who);
      } else {
        const dead =
          current.holder && liveness && current.holder.engineId !== engineId
            ? await isDead(current.holder.engineId)
            : false;
        if (!options.allowTakeover || !isClaimExpired(current.holder, now, this.graceMs, dead))
          return { outcome: 'unavailable', heldBy: current.holder };
        takenFrom = current.holder;
        holderDead = dead && current.holder !== null && now <= current.holder.expiresAt + this.graceMs;
        minted = buildTakeover(
          claimKeysOf(workflowId),
          { epochRaw: epochRaw ?? null, storedEpoch, holderRaw: current.raw },
          who,
        );
      }
      const note: TimelineNote =
        takenFrom !== null || current
          ? {
              kind: 'claim-taken-over' as const,
              detail: {
                fromEngineId: takenFrom?.engineId ?? null,
                fromEpoch: takenFrom?.epoch ?? storedEpoch ?? 0,
                toEngineId: engineId,
                toEpoch: minted.epoch,
                reason: !takenFrom ? 'undecodable-holder' : holderDead ? 'holder-dead' : 'expired',
              },
            }
          : { kind: 'claim-acquired' as const, detail: { engineId, epoch: minted.epoch, how: 'acquire' } };
      const write = appendTimeline(view, [note], { engineId, epoch: minted.epoch, now });
      const landed = await this.#deps.commit(
        [...minted.conditions, ...write.conditions],
        [...minted.operations, ...write.operations],
      );
      if (!landed) {
        metrics.claimAttempts.lost_race++;
        continue;
      }
      const how = current ? 'takeover' : 'acquire';
      this.registerClaim(workflowId, minted, how);
      if (current)
        this.#deps.emit({
          type: 'claim.taken-over',
          workflowId,
          epoch: minted.epoch,
          fromEngineId: takenFrom?.engineId ?? 'unknown',
          fromEpoch: takenFrom?.epoch ?? storedEpoch ?? 0,
        });
      if (record.status !== 'running' || this.#deps.isStopping()) {
        // Found finished (or suspended) right after takeover, or shutting down: release, do not drive.
        await this.release(workflowId);
      } else {
        this.#deps.onClaimed(workflowId, how);
      }
      return { outcome: current ? 'taken-over' : 'acquired', epoch: minted.epoch };
    }
    return { outcome: 'lost-race' };
  }

  // -------------------------------------------------------------------------------------------------------
  // Renew, release

  /** Renews every held claim (active or parked). Concurrent renewals share one transaction (group commit). */
  async renewAll(): Promise<void> {
    const { claims, clock, metrics } = this.#deps;
    const held = claims.all().filter((claim) => claim.status === 'held');
    if (held.length === 0) return;
    const now = clock.now();
    let renewed = 0;
    await Promise.all(
      held.map(async (claim) => {
        const renewal = buildRenew(claimKeysOf(claim.workflowId), claim, now, this.#deps.ttlMs);
        let landed: boolean;
        try {
          landed = await this.#deps.commit(renewal.conditions, renewal.operations);
        } catch {
          metrics.renewalFailures++; // a storage error is not a loss: keep the claim, retry next pass
          return;
        }
        const current = claims.get(claim.workflowId);
        if (landed) {
          renewed++;
          metrics.renewals++;
          claims.dispatch(claim.workflowId, {
            type: 'renewed',
            holder: renewal.holder,
            holderRaw: renewal.holderRaw,
          });
          return;
        }
        // Refused. If the claim was released or replaced meanwhile (a release racing the renewal), that is
        // not a failure.
        if (!current || current.status !== 'held' || current.holderRaw !== claim.holderRaw) return;
        metrics.renewalFailures++;
        this.loseClaim(
          claim.workflowId,
          claim.epoch,
          'renewal refused: another engine took the workflow, or it was terminated or suspended',
        );
      }),
    );
    if (renewed > 0) this.#deps.emit({ type: 'claim.renewed', count: renewed });
  }

  /** Forgets a claim this engine no longer holds, stops the run, and starts the takeover cooldown. */
  loseClaim(workflowId: string, epoch: number, reason: string): void {
    const { claims, clock, metrics, engineId } = this.#deps;
    if (!claims.has(workflowId)) return;
    claims.dispatch(workflowId, { type: 'lost' }, clock.now());
    metrics.claimsLost++;
    this.#deps.emit({ type: 'claim.lost', workflowId, epoch, reason });
    this.#deps.warn({
      name: 'WorkflowClaimLostWarning',
      workflowId,
      message: `Engine ${engineId} lost workflow '${workflowId}' (epoch ${epoch}): ${reason}.`,
    });
    this.#deps.onLost(workflowId);
  }

  /** Releases one claim: deletes the holder (if the epoch is still ours) and notes it on the timeline. */
  async release(workflowId: string): Promise<boolean> {
    const { claims, storage, clock, engineId } = this.#deps;
    const claim = claims.get(workflowId);
    if (!claim) return false;
    claims.dispatch(workflowId, { type: 'release-started' });
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const [recordRaw, checkpointRaw] = await storage.getMany([
          keys.record(workflowId),
          keys.checkpoint(workflowId),
        ]);
        const release = buildRelease(claimKeysOf(workflowId), claim);
        let conditions = release.conditions;
        let operations = release.operations;
        if (recordRaw && checkpointRaw) {
          try {
            const view = {
              record: decodeRecord(keys.record(workflowId), recordRaw),
              checkpoint: decodeCheckpoint(keys.checkpoint(workflowId), checkpointRaw),
              checkpointRaw,
            };
            const write = appendTimeline(
              view,
              [{ kind: 'claim-released', detail: { engineId, epoch: claim.epoch } }],
              { engineId, epoch: claim.epoch, now: clock.now() },
            );
            conditions = [...conditions, ...write.conditions];
            operations = [...operations, ...write.operations];
          } catch {
            // corrupt workflow: release without a timeline entry
          }
        }
        if (await this.#deps.commit(conditions, operations)) {
          this.#deps.emit({ type: 'claim.released', workflowId, epoch: claim.epoch });
          return true;
        }
        const epochNow = await storage.get(claimKeysOf(workflowId).epochKey);
        if (epochNow !== claim.epochRaw) return false; // already gone
      }
      return false;
    } finally {
      claims.dispatch(workflowId, { type: 'released' });
    }
  }

  /** Releases every held claim (shutdown). Never rejects; returns how many holders it deleted. */
  async releaseAll(): Promise<number> {
    const results = await Promise.all(
      this.#deps.claims.all().map((claim) => this.release(claim.workflowId).catch(() => false)),
    );
    return results.filter(Boolean).length;
  }

  /** Forgets a claim that a commit of this engine released (terminal or suspend commit). */
  forget(workflowId: string): void {
    const claim = this.#deps.claims.get(workflowId);
    if (!claim) return;
    this.#deps.claims.dispatch(workflowId, { type: 'released' });
    this.#deps.emit({ type: 'claim.released', workflowId, epoch: claim.epoch });
  }

  // -------------------------------------------------------------------------------------------------------
  // Reclaim

  /**
   * One reclaim pass: (a) holder records whose holder is expired, undecodable or dead are taken over;
   * (b) running workflows with no holder are acquired. Bounded by `reclaimBatchSize` per part unless
   * `full`; resumes where it stopped.
   */
  async reclaim(options: { full?: boolean } = {}): Promise<void> {
    const { storage, claims, engineId, clock, liveness } = this.#deps;
    const limit = this.#deps.reclaimBatchSize;
    const candidates = new Set<string>();
    // One liveness question per engine per pass, however many of its claims the pass looks at (the browser
    // oracle answers each with a lock-manager query).
    const answers = new Map<string, Promise<boolean>>();
    const isDead = (id: string): Promise<boolean> => {
      let answer = answers.get(id);
      if (!answer) answers.set(id, (answer = liveness!.isDead(id)));
      return answer;
    };

    // (a) holders
    for (;;) {
      const page = await storage.scan(keys.ownerHoldersPrefix, {
        ...(this.#holderCursor ? { after: this.#holderCursor } : {}),
        limit,
      });
      this.#holderCursor = page.length < limit ? undefined : page[page.length - 1]!.key;
      const now = clock.now();
      for (const { key, value } of page) {
        const workflowId = workflowIdOf(key, keys.ownerHoldersPrefix);
        if (!workflowId || claims.has(workflowId)) continue;
        const holder = decodeHolder(value);
        const dead =
          holder && liveness && holder.engineId !== engineId ? await isDead(holder.engineId) : false;
        if (isClaimExpired(holder, now, this.graceMs, dead)) candidates.add(workflowId);
      }
      if (!options.full || !this.#holderCursor) break;
    }

    // (b) running without a holder
    for (;;) {
      const page = await storage.scan(keys.statusIndexPrefix('running'), {
        ...(this.#runningCursor ? { after: this.#runningCursor } : {}),
        limit,
      });
      this.#runningCursor = page.length < limit ? undefined : page[page.length - 1]!.key;
      const ids = page
        .map(({ key }) => workflowIdOf(key, keys.statusIndexPrefix('running')))
        .filter((id): id is string => id !== null && !claims.has(id));
      const types = new Map(
        page.map(({ key, value }) => [workflowIdOf(key, keys.statusIndexPrefix('running')), value]),
      );
      const eligible = ids.filter((id) => this.#deps.isEligible(types.get(id) ?? ''));
      const holders = await storage.getMany(eligible.map((id) => keys.ownerHolder(id)));
      eligible.forEach((id, index) => {
        if (holders[index] === null) candidates.add(id);
      });
      if (!options.full || !this.#runningCursor) break;
    }

    // Candidates are claimed concurrently, a few at a time, so their reads and claim commits share
    // transactions (group commit): a dead engine's twenty workflows move in a handful of transactions.
    const queue = [...candidates];
    const claimNext = async (): Promise<void> => {
      for (let workflowId = queue.shift(); workflowId !== undefined; workflowId = queue.shift()) {
        if (this.#deps.isStopping()) return;
        try {
          await this.claim(workflowId, { allowTakeover: true, respectCooldown: true, isDead });
        } catch {
          // a storage error on one candidate does not stop the pass
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(reclaimConcurrency, queue.length) }, claimNext));
  }

  /** A targeted reclaim of one workflow, e.g. when the change feed reports its holder deleted. */
  async reclaimOne(workflowId: string): Promise<void> {
    if (this.#deps.claims.has(workflowId) || this.#deps.isStopping()) return;
    await this.claim(workflowId, { allowTakeover: true, respectCooldown: true });
  }

  // -------------------------------------------------------------------------------------------------------
  // Wake guard

  /**
   * Before an in-memory wake drives a parked workflow: proceed only if the holder names this engine and the
   * epoch it parked under. A failing read proceeds (the fenced write is the backstop; dropping the wake
   * could strand the workflow).
   */
  async guardWake(workflowId: string, kind: WakeKind, parkedEpoch: number): Promise<boolean> {
    const { claims, storage, engineId, metrics } = this.#deps;
    const claim = claims.get(workflowId);
    let reason: string;
    if (!claim) reason = 'this engine no longer holds the claim';
    else {
      let raw: string | null;
      try {
        raw = await storage.get(keys.ownerHolder(workflowId));
      } catch {
        return true;
      }
      const holder = raw === null ? null : decodeHolder(raw);
      if (holder && holder.engineId === engineId && holder.epoch === parkedEpoch) return true;
      reason = !holder
        ? 'the claim has no holder any more (released, terminated or suspended)'
        : holder.engineId !== engineId
          ? `engine ${holder.engineId} now holds it at epoch ${holder.epoch}`
          : `the epoch moved from ${parkedEpoch} to ${holder.epoch}`;
    }
    metrics.wakesDiscarded++;
    this.#deps.emit({ type: 'wake.discarded', workflowId, wakeKind: kind, reason });
    this.#deps.warn({
      name: 'WorkflowWakeDiscardedWarning',
      workflowId,
      message: `A ${kind} wake of workflow '${workflowId}' was discarded on engine ${engineId}: ${reason}.`,
    });
    if (claim) this.loseClaim(workflowId, claim.epoch, `wake guard: ${reason}`);
    return false;
  }
}
