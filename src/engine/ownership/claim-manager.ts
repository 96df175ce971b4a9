/**
 * Per-workflow claims (`ownership: 'workflow-lease'`): acquire, takeover, release, the engine's session that
 * keeps every claim live, the reclaim pass and the wake guard. The pure rules live in transitions.ts and
 * session.ts; this module reads current values, commits the transitions together with their timeline entry,
 * and keeps the in-memory registry (claims.ts) in step.
 *
 * Guarantees (docs/ownership.md):
 * - A claim is taken before any of the workflow's code runs here; a lost race runs no code.
 * - Holding costs nothing per workflow: the renewal pass writes the engine's session record once, however
 *   many workflows it holds (active or parked). A storage error is not a loss: the session is renewed again
 *   next pass. When this engine finds its session lapsed (it was frozen past the TTL) or its record changed
 *   underneath, it re-creates it and re-validates every claim it believes it holds before going on: claims
 *   taken meanwhile are dropped (their runs stopped), the rest are kept.
 * - Nothing is stranded: the reclaim pass takes over claims whose holder is no longer live (its session
 *   ended, expired past TTL + grace, or its engine is dead to the liveness oracle; an undecodable holder),
 *   and acquires running workflows that have no holder, for every workflow whose type this engine has
 *   registered. A dead session's active workflows, and workflows whose timers fall due within the grace, move
 *   first; the sweep over holders is bounded per pass in steady state and runs on while it keeps finding
 *   claims to take. A parked workflow also moves the moment it has work (a due timer, a message) through
 *   `reclaimOne`.
 * - After losing a workflow, this engine waits out a cooldown before trying to take it back.
 */
import { storedTrace, type Tracing } from '../tracing';
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import { CorruptRecordError, WorkflowClaimUnavailableError } from '../errors';
import type { EngineEvent, EngineWarning, WakeKind } from '../events';
import { keys, parseTimerKey, unescapeId, workflowIdOf } from '../keys';
import type { MetricsCounters } from '../metrics';
import { lastLogRecord, workflowView } from '../checkpoint';
import type { WorkflowRecord } from '../records';
import { appendTimeline, type TimelineNote } from '../workflow-writes';
import type { ClaimRegistry } from './claims';
import { decodeEpoch, decodeHolder, readHolder, type Holder } from './holder';
import type { EngineLiveness } from './liveness';
import { decodeNotice, describeDisplacement, displacementNotice } from './notices';
import type { ClaimHow } from './ownership';
import {
  decodeSession,
  encodeSession,
  isHolderLive,
  isSessionLive,
  maxActiveIds,
  sessionKey,
  takeoverReason,
  type Session,
  type TakeoverReason,
} from './session';
import { buildAcquire, buildRelease, buildTakeover, type ClaimKeys, type MintedClaim } from './transitions';

export type ClaimManagerDeps = {
  storage: Storage;
  /** Commits an ownership transition (it carries its own epoch and holder conditions: no added fence). */
  commit: (conditions: readonly Condition[], operations: readonly Operation[]) => Promise<boolean>;
  /**
   * Commits the session renewal in a transaction of its own, at once: not queued behind the engine's group
   * commits (under a burst of starts that queue holds many transactions, and a renewal waiting there lets
   * the session lapse under a live engine).
   */
  commitAtOnce: (conditions: readonly Condition[], operations: readonly Operation[]) => Promise<boolean>;
  claims: ClaimRegistry;
  clock: Clock;
  engineId: string;
  /** How long a session lives without renewal, in ms. */
  ttlMs: number;
  renewIntervalMs: number;
  reclaimBatchSize: number;
  /** Workflows with work in flight here, listed in the session record for a successor to take first. */
  activeWorkflows: () => string[];
  liveness: EngineLiveness | undefined;
  metrics: MetricsCounters;
  emit: (event: EngineEvent) => void;
  warn: (warning: EngineWarning) => void;
  /** This engine has a definition for the type (any version), so it may claim such workflows. */
  isEligible: (workflowType: string) => boolean;
  /** This engine has room for the workflow now (its queue's per-engine limit): else it claims it not. */
  hasRoomFor: (record: WorkflowRecord) => boolean;
  /** A claim landed for a running workflow: evict any stale local context and drive it from storage. */
  onClaimed: (workflowId: string, how: ClaimHow) => void;
  /** The claim was lost: stop driving the workflow. */
  onLost: (workflowId: string) => void;
  /** A stored record is corrupt: fail that workflow closed. */
  onCorrupt: (workflowId: string, error: CorruptRecordError) => void;
  /** True when shutdown has begun: claims that land now are released, not driven. */
  isStopping: () => boolean;
  /** Spans for claims and takeovers (tracing.ts); absent: none. */
  tracing?: Tracing;
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

/** The first page of timers the reclaim pass reads for those due soon (the rest of a page follows if needed). */
const dueSoonFirstPage = 16;

/** Displacement notices read (or collected) per request. */
const noticePage = 500;

/** Sessions that ended or expired this long ago are deleted (their claims read as dead either way). */
const sessionRetentionMs = 10 * 60_000;

/** The liveness answers and sessions of one reclaim pass (each engine asked once per pass). */
type Judge = {
  sessions: Map<string, Session | null>;
  isDead: (engineId: string) => Promise<boolean>;
  /** When the sessions were read (a judge older than a renew interval is not used to take anything over). */
  readAt: number;
  /**
   * Reads every session again, and forgets the oracle's answers: for a pass that has outlived its snapshot
   * (shared: claims of the pass that find it stale at once wait on one read).
   */
  refresh: () => Promise<void>;
};

export class ClaimManager {
  readonly #deps: ClaimManagerDeps;
  #holderCursor: string | undefined;
  #runningCursor: string | undefined;
  /** This engine's session record, exactly as last written. */
  #session: { raw: string; session: Session } | null = null;
  /** Other engines' sessions as last read (by the reclaim pass, or on demand). */
  readonly #sessions = new Map<string, Session | null>();

  constructor(deps: ClaimManagerDeps) {
    this.#deps = deps;
  }

  get graceMs(): number {
    return 2 * this.#deps.renewIntervalMs;
  }

  // -------------------------------------------------------------------------------------------------------
  // The session

  #nextSession(now: number, previous: Session | null): Session {
    const active = this.#deps.activeWorkflows();
    return {
      engineId: this.#deps.engineId,
      startedAt: previous?.startedAt ?? now,
      renewedAt: now,
      expiresAt: now + this.#deps.ttlMs,
      ...(active.length > 0 ? { active: active.slice(0, maxActiveIds) } : {}),
      ...(active.length > maxActiveIds ? { activeOverflow: true } : {}),
    };
  }

  /** Writes this engine's session record (whatever was stored under its id before). */
  async openSession(): Promise<void> {
    const key = sessionKey(this.#deps.engineId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const storedRaw = await this.#deps.storage.get(key);
      const session = this.#nextSession(this.#deps.clock.now(), null);
      const raw = encodeSession(session);
      if (await this.#deps.commit([{ key, expected: storedRaw }], [{ type: 'put', key, value: raw }])) {
        this.#session = { raw, session };
        return;
      }
    }
    throw new Error(`Could not write the session record of engine ${this.#deps.engineId}: it kept changing.`);
  }

  /**
   * Renews the session: one write, whatever the number of claims. If the session had lapsed (others may
   * have judged this engine dead) or its record changed underneath, the record is re-created and every held
   * claim re-validated. A storage error keeps everything: the next pass renews again.
   */
  renewAll(): Promise<void> {
    // one renewal at a time: a claim that found the renewal overdue and the pass's own may ask together
    return (this.#renewing ??= this.#renew().finally(() => (this.#renewing = null)));
  }

  #renewing: Promise<void> | null = null;

  /**
   * Before a claim: when this engine's renewal is overdue (it was frozen, or its timers ran late, and a
   * change-feed notice woke it first), the session is renewed first. A claim bound to a lapsed session would
   * be taken over by the next engine that looks, and its first step run twice.
   */
  async #ensureFreshSession(): Promise<void> {
    const current = this.#session;
    if (!current || this.#deps.clock.now() - current.session.renewedAt <= this.#deps.renewIntervalMs) return;
    await this.renewAll();
  }

  async #renew(): Promise<void> {
    const { clock, metrics, storage, commitAtOnce: commit, claims } = this.#deps;
    const key = sessionKey(this.#deps.engineId);
    const now = clock.now();
    const current = this.#session;
    const lapsed = !current || now > current.session.expiresAt + this.graceMs;
    const next = this.#nextSession(now, current?.session ?? null);
    const raw = encodeSession(next);
    let lost = false;
    try {
      let landed = await commit(
        [{ key, expected: current?.raw ?? null }],
        [{ type: 'put', key, value: raw }],
      );
      if (!landed) {
        // Changed or deleted underneath (pruned while this engine was frozen, say): take it back.
        lost = true;
        const storedRaw = await storage.get(key);
        landed = await commit([{ key, expected: storedRaw }], [{ type: 'put', key, value: raw }]);
        if (!landed) throw new Error('the session record kept changing');
      }
    } catch {
      metrics.renewalFailures++; // not a loss: keep the claims, renew again next pass
      return;
    }
    this.#session = { raw, session: next };
    metrics.renewals++;
    if (lapsed || lost) {
      metrics.renewalFailures += lost ? 1 : 0;
      await this.revalidate(lapsed ? 'this engine’s session lapsed' : 'its session record changed');
    }
    this.#deps.emit({ type: 'claim.renewed', count: claims.size });
  }

  /**
   * Re-reads the holder of every claim this engine believes it holds, and drops those that name another
   * engine or another epoch now (taken over while this engine could not renew).
   */
  async revalidate(why: string): Promise<void> {
    const { claims, storage } = this.#deps;
    const held = claims.all().filter((claim) => claim.status === 'held');
    if (held.length === 0) return;
    let raws: (string | null)[];
    try {
      raws = await storage.getMany(held.map((claim) => keys.ownerHolder(claim.workflowId)));
    } catch {
      return; // the fence still protects every write; the next lapse check retries
    }
    held.forEach((claim, index) => {
      const current = claims.get(claim.workflowId);
      if (!current || current.holderRaw !== claim.holderRaw) return; // changed meanwhile (released, re-acquired)
      if (raws[index] !== claim.holderRaw)
        this.loseClaim(claim.workflowId, claim.epoch, `another engine took it while ${why}`);
    });
  }

  /**
   * Reads this engine's displacement notices (notices.ts; one scan of its own prefix) and drops every claim a
   * notice says another engine displaced, then deletes the notices read. A workflow that is running with no
   * live holder after it (a new run of a terminated id, a resumed one) is claimed again at once. Runs in
   * every renewal pass, and when the change feed reports a notice.
   */
  async readNotices(): Promise<void> {
    const { storage, claims } = this.#deps;
    const prefix = keys.ownerNoticesOf(this.#deps.engineId);
    for (let page = 0; page < 100; page++) {
      const entries = await storage.scan(prefix, { limit: noticePage });
      if (entries.length === 0) return;
      const again: string[] = [];
      for (const { key, value } of entries) {
        const workflowId = key.slice(prefix.length);
        const notice = decodeNotice(value);
        const claim = claims.get(unescapeId(workflowId));
        if (!notice || !claim || claim.epoch > notice.epoch) continue; // already let go, or claimed again since
        this.loseClaim(claim.workflowId, claim.epoch, describeDisplacement(notice), {
          cooldown: notice.cause === 'taken-over',
        });
        if (notice.cause !== 'taken-over' && notice.cause !== 'purged') again.push(claim.workflowId);
      }
      // Not deleted: read again next pass (dropping a claim twice does nothing).
      const deleted = await this.#deps
        .commit(
          entries.map(({ key, value }) => ({ key, expected: value })),
          entries.map(({ key }) => ({ type: 'delete' as const, key })),
        )
        .catch(() => false);
      await Promise.all(again.map((workflowId) => this.reclaimOne(workflowId).catch(() => undefined)));
      if (!deleted || entries.length < noticePage) return;
    }
  }

  /**
   * Deletes the notices addressed to `engineId` (its session is gone: nobody will read them), a page at a
   * time. Never rejects: what is left is deleted by a later pass.
   */
  async #dropNoticesOf(prefix: string, keep: (engineId: string) => boolean): Promise<void> {
    const { storage } = this.#deps;
    let after: string | undefined;
    for (let page = 0; page < 100; page++) {
      const entries = await storage.scan(prefix, { ...(after ? { after } : {}), limit: noticePage });
      const gone = entries.filter(
        ({ key }) => !keep(unescapeId(key.slice(keys.ownerNoticesPrefix.length).split(':')[0]!)),
      );
      if (gone.length > 0)
        await this.#deps
          .commit(
            gone.map(({ key, value }) => ({ key, expected: value })),
            gone.map(({ key }) => ({ type: 'delete' as const, key })),
          )
          .catch(() => false);
      if (entries.length < noticePage) return;
      after = entries[entries.length - 1]!.key;
    }
  }

  /** Ends the session (graceful shutdown): every claim of this engine is free at once. Never rejects. */
  async endSession(): Promise<boolean> {
    const current = this.#session;
    if (!current) return false;
    const key = sessionKey(this.#deps.engineId);
    const now = this.#deps.clock.now();
    const ended: Session = { ...this.#nextSession(now, current.session), expiresAt: now, endedAt: now };
    const raw = encodeSession(ended);
    try {
      const landed = await this.#deps.commit(
        [{ key, expected: current.raw }],
        [{ type: 'put', key, value: raw }],
      );
      if (landed) this.#session = { raw, session: ended };
      return landed;
    } catch {
      return false;
    }
  }

  /** Reads every engine's session (one scan: the number of engines, not of claims). */
  async #readSessions(): Promise<Map<string, Session | null>> {
    const entries = await this.#deps.storage.scan(keys.sessionsPrefix);
    this.#sessions.clear();
    const byEngine = new Map<string, Session | null>();
    for (const { value } of entries) {
      const session = decodeSession(value);
      if (session) byEngine.set(session.engineId, session);
    }
    for (const [engineId, session] of byEngine) this.#sessions.set(engineId, session);
    return byEngine;
  }

  /**
   * The session of `engineId` as `judge` read it, or read now. An engine the judge has no session for is read
   * now too: it may have opened after the judge read the sessions (its first claims then name an engine the
   * snapshot does not know, and judging it by its absence would take a new engine's workflows away).
   */
  async #sessionOf(engineId: string, judge?: Judge): Promise<Session | null> {
    if (judge?.sessions.has(engineId)) return judge.sessions.get(engineId) ?? null;
    const raw = await this.#deps.storage.get(sessionKey(engineId));
    const session = raw === null ? null : decodeSession(raw);
    this.#sessions.set(engineId, session);
    if (judge && session) judge.sessions.set(engineId, session); // the pass's other claims judge by it too
    return session;
  }

  /**
   * Whether the holder named by `holderRaw` is live as far as the sessions last read tell (no storage call).
   * Unknown engines read as "maybe dead" (false), so the caller looks closer.
   */
  looksLive(holderRaw: string): boolean {
    const holder = decodeHolder(holderRaw);
    if (!holder) return false;
    if (holder.engineId === this.#deps.engineId) return true;
    if (holder.expiresAt !== null) return this.#deps.clock.now() <= holder.expiresAt + this.graceMs;
    const session = this.#sessions.get(holder.engineId);
    return session !== undefined && isSessionLive(session, this.#deps.clock.now(), this.graceMs);
  }

  /** Forgets the cached session of `engineId` (its record changed). */
  sessionChanged(engineId: string): void {
    this.#sessions.delete(engineId);
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
      { engineId: this.#deps.engineId, now: this.#deps.clock.now(), ttlMs: null },
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
   * Claims a running workflow: acquires it when it has no holder, takes it over when its holder is no longer
   * live (and `allowTakeover`). On success the engine is told to drive it (`onClaimed`).
   */
  async claim(
    workflowId: string,
    options: { allowTakeover: boolean; respectCooldown: boolean; judge?: Judge },
  ): Promise<AcquireResult> {
    const { storage, claims, clock, engineId, liveness, metrics } = this.#deps;
    if (claims.has(workflowId)) return { outcome: 'acquired', epoch: claims.get(workflowId)!.epoch };
    if (options.respectCooldown && claims.isCoolingDown(workflowId, clock.now())) {
      metrics.claimAttempts.backoff_skipped++;
      return { outcome: 'cooling-down' };
    }
    await this.#ensureFreshSession();
    for (let attempt = 0; attempt < maxTakeoverAttempts; attempt++) {
      const recordKey = keys.record(workflowId);
      const checkpointKey = keys.checkpoint(workflowId);
      const { epochKey, holderKey } = claimKeysOf(workflowId);
      const [[recordRaw, checkpointRaw, epochRaw, holderRaw], last] = await Promise.all([
        storage.getMany([recordKey, checkpointKey, epochKey, holderKey]),
        lastLogRecord(storage, workflowId),
      ]);
      if (!recordRaw || !checkpointRaw) return { outcome: 'missing' };
      let record: WorkflowRecord;
      let storedEpoch: number | null;
      let view;
      try {
        view = await workflowView(storage, workflowId, recordRaw, checkpointRaw, last);
        if (!view) return { outcome: 'missing' };
        record = view.record;
        storedEpoch = decodeEpoch(epochKey, epochRaw ?? null);
      } catch (error) {
        if (error instanceof CorruptRecordError) {
          this.#deps.onCorrupt(workflowId, error);
          return { outcome: 'corrupt' };
        }
        throw error;
      }
      // An engine at its queue's per-engine limit does not take the workflow (an engine with room will): taking
      // it to let it go again would make engines at their limits pass it back and forth.
      if (!this.#deps.isEligible(record.type) || !this.#deps.hasRoomFor(record))
        return { outcome: 'ineligible' };
      const current = readHolder(holderRaw ?? null);
      let now = clock.now();
      let minted: MintedClaim;
      let takenFrom: Holder | null = null;
      let reason: TakeoverReason | 'orphaned' = 'expired';
      let unaware = false;
      let sessionCondition: Condition | null = null;
      if (!current) {
        if (record.status !== 'running') return { outcome: 'not-running' };
        minted = buildAcquire(
          claimKeysOf(workflowId),
          { epochRaw: epochRaw ?? null, storedEpoch },
          { engineId, now, ttlMs: null },
        );
      } else {
        const holder = current.holder;
        const self = holder !== null && holder.engineId === engineId;
        if (self) {
          // Ours in storage but not in the registry: a release that failed left it behind. Only an old one
          // (a fresh one may belong to an acquire whose continuation has not run yet) is taken back.
          if (!options.allowTakeover || holder.claimedAt > now - this.graceMs)
            return { outcome: 'unavailable', heldBy: holder };
          reason = 'orphaned';
        } else {
          // A pass's judge is shared by its candidates to save reads, but not once it is older than a renew
          // interval at the moment of deciding (the pass was slow, or its engine was frozen in the middle of
          // it): a holder it saw lapsed may have renewed since, and taking it over would depose a live engine.
          // Then the judge reads every session again (once for the whole pass), and this claim decides at the
          // time it has read.
          let judge = options.judge;
          if (judge && now - judge.readAt > this.#deps.renewIntervalMs) {
            await judge.refresh().catch(() => undefined);
            now = clock.now();
            if (now - judge.readAt > this.#deps.renewIntervalMs) judge = undefined; // still stale: ask alone
          }
          const isDead = judge?.isDead ?? ((id: string) => liveness!.isDead(id));
          let dead = holder && liveness ? await isDead(holder.engineId) : false;
          let session =
            holder && holder.expiresAt === null ? await this.#sessionOf(holder.engineId, judge) : null;
          // Decide at the time the answers came back, not before asking: the oracle can take seconds (a
          // database restarting), and a takeover stamped before it would claim a time at which the holder
          // was alive. If the judge grew older than a renew interval meanwhile, the sessions it holds may
          // have renewed since: ask again alone, and decide at the time of those reads.
          now = clock.now();
          if (judge && now - judge.readAt > this.#deps.renewIntervalMs) {
            dead = holder && liveness ? await liveness.isDead(holder.engineId) : false;
            session = holder && holder.expiresAt === null ? await this.#sessionOf(holder.engineId) : null;
            now = clock.now();
          }
          if (!options.allowTakeover || isHolderLive(holder, session, now, this.graceMs, dead))
            return { outcome: 'unavailable', heldBy: holder };
          // Judged by sessions read up to a renew interval ago: read the holder's once more, decide by it, and
          // commit on it (a condition on its exact text), so that a holder whose session renewed meanwhile —
          // even between this read and the commit — keeps its workflow.
          if (holder && holder.expiresAt === null) {
            const key = sessionKey(holder.engineId);
            const raw = await storage.get(key);
            session = raw === null ? null : decodeSession(raw);
            this.#sessions.set(holder.engineId, session);
            now = clock.now();
            if (isHolderLive(holder, session, now, this.graceMs, dead))
              return { outcome: 'unavailable', heldBy: holder };
            sessionCondition = { key, expected: raw };
          }
          reason = takeoverReason(holder, session, now, this.graceMs, dead);
          // The holder's engine may be alive and unaware (frozen past the TTL, or cut off from the oracle):
          // it is told in the same batch (notices.ts) — unless its session ended or is gone, or the oracle
          // says it is dead for good (a closed tab).
          if (holder && session && session.endedAt === undefined && !(dead && liveness?.deathIsFinal))
            unaware = true;
        }
        takenFrom = holder;
        minted = buildTakeover(
          claimKeysOf(workflowId),
          { epochRaw: epochRaw ?? null, storedEpoch, holderRaw: current.raw },
          { engineId, now, ttlMs: null },
        );
        if (unaware)
          minted.operations.push(
            ...displacementNotice(workflowId, current.raw, {
              cause: 'taken-over',
              by: engineId,
              at: now,
              newEpoch: minted.epoch,
            }),
          );
      }
      const note: TimelineNote = current
        ? {
            kind: 'claim-taken-over' as const,
            detail: {
              fromEngineId: takenFrom?.engineId ?? null,
              fromEpoch: takenFrom?.epoch ?? storedEpoch ?? 0,
              toEngineId: engineId,
              toEpoch: minted.epoch,
              reason,
            },
          }
        : { kind: 'claim-acquired' as const, detail: { engineId, epoch: minted.epoch, how: 'acquire' } };
      const write = appendTimeline(view, [note], { engineId, epoch: minted.epoch, now });
      // In the workflow's trace: which engine took it, how, at which epoch, from whom.
      const span = this.#deps.tracing?.start('shuttle.claim', storedTrace(record.trace), {
        'shuttle.workflow.id': workflowId,
        'shuttle.workflow.type': record.type,
        'shuttle.workflow.run': record.run,
        'shuttle.engine.id': engineId,
        'shuttle.claim.how': current ? 'takeover' : 'acquire',
        'shuttle.claim.epoch': minted.epoch,
        ...(current
          ? {
              'shuttle.claim.reason': reason,
              'shuttle.claim.from_engine': takenFrom?.engineId ?? 'unknown',
              'shuttle.claim.from_epoch': takenFrom?.epoch ?? storedEpoch ?? 0,
            }
          : {}),
      });
      const landed = await this.#deps
        .commit(
          [...minted.conditions, ...write.conditions, ...(sessionCondition ? [sessionCondition] : [])],
          [...minted.operations, ...write.operations],
        )
        .catch((error: unknown) => {
          span?.recordError(error);
          span?.end();
          throw error;
        });
      span?.setAttributes({ 'shuttle.claim.outcome': landed ? 'claimed' : 'lost-race' });
      span?.end();
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
  // Losing, releasing

  /**
   * Forgets a claim this engine no longer holds, stops the run, and (unless `cooldown: false`: the workflow
   * was rotated or purged, not taken by a rival engine) starts the takeover cooldown.
   */
  loseClaim(workflowId: string, epoch: number, reason: string, options: { cooldown?: boolean } = {}): void {
    const { claims, clock, metrics, engineId } = this.#deps;
    if (!claims.has(workflowId)) return;
    claims.dispatch(workflowId, { type: 'lost' }, options.cooldown === false ? undefined : clock.now());
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
        const [[recordRaw, checkpointRaw], last] = await Promise.all([
          storage.getMany([keys.record(workflowId), keys.checkpoint(workflowId)]),
          lastLogRecord(storage, workflowId),
        ]);
        const release = buildRelease(claimKeysOf(workflowId), claim);
        let conditions = release.conditions;
        let operations = release.operations;
        if (recordRaw && checkpointRaw) {
          try {
            const view = await workflowView(storage, workflowId, recordRaw, checkpointRaw, last);
            if (!view) return false; // purged meanwhile
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
        if (epochNow !== claim.epochRaw) {
          // Not a release: another engine took or rotated the workflow while this one believed it held it.
          // Said as every other loss is, so that a zombie never lets a workflow go in silence.
          this.loseClaim(
            workflowId,
            claim.epoch,
            `its release found the epoch at ${epochNow ?? 'none'}: another engine took or rotated it`,
            { cooldown: false },
          );
          return false;
        }
      }
      return false;
    } finally {
      claims.dispatch(workflowId, { type: 'released' });
    }
  }

  /**
   * Lets every claim go at shutdown: ends the session (one write), which makes each of them
   * takeover-eligible at once, and forgets them here. Never rejects; returns how many claims were handed over
   * (0 when the session could not be ended: the claims then expire with it).
   */
  async releaseAll(): Promise<number> {
    const { claims } = this.#deps;
    const held = claims.all();
    const ended = await this.endSession();
    for (const claim of held) claims.dispatch(claim.workflowId, { type: 'released' });
    return ended ? held.length : 0;
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

  /** The sessions and liveness answers one pass judges by (each engine asked once per pass). */
  async #judge(): Promise<Judge> {
    const { liveness, clock } = this.#deps;
    const readAt = clock.now();
    const sessions = await this.#readSessions();
    const answers = new Map<string, Promise<boolean>>();
    let refreshing: Promise<void> | null = null;
    const judge: Judge = {
      readAt,
      sessions,
      isDead: (engineId) => {
        if (!liveness) return Promise.resolve(false);
        let answer = answers.get(engineId);
        if (!answer) answers.set(engineId, (answer = this.#deathWithSession(liveness, engineId, sessions)));
        return answer;
      },
      refresh: () =>
        (refreshing ??= (async () => {
          const at = clock.now();
          const fresh = await this.#readSessions();
          sessions.clear();
          for (const [engineId, session] of fresh) sessions.set(engineId, session);
          answers.clear();
          judge.readAt = at;
        })().finally(() => (refreshing = null))),
    };
    return judge;
  }

  /**
   * Asks the oracle whether `engineId` is dead; if it is, reads its session again into `sessions`. The pass
   * read the sessions before it asked: an engine that ended its session and then exited in between (a
   * graceful stop, then the process gone) would otherwise be judged by the session it had before, and its
   * takeover said `holder-dead` where it stopped first (`holder-stopped`). One read per dead engine.
   */
  async #deathWithSession(
    liveness: EngineLiveness,
    engineId: string,
    sessions: Map<string, Session | null>,
  ): Promise<boolean> {
    const dead = await liveness.isDead(engineId);
    if (dead) {
      try {
        const raw = await this.#deps.storage.get(sessionKey(engineId));
        const session = raw === null ? null : decodeSession(raw);
        if (session) {
          sessions.set(engineId, session);
          this.#sessions.set(engineId, session);
        }
      } catch {
        // judged by the session read at the start of the pass
      }
    }
    return dead;
  }

  /** Whether `holderRaw` (not this engine's current claim) may be taken over, judged without storage calls. */
  async #isTakeoverCandidate(holderRaw: string, judge: Judge, now: number): Promise<boolean> {
    const holder = decodeHolder(holderRaw);
    if (!holder) return true;
    if (holder.engineId === this.#deps.engineId) return holder.claimedAt <= now - this.graceMs; // orphaned
    const dead = await judge.isDead(holder.engineId);
    return !isHolderLive(holder, judge.sessions.get(holder.engineId), now, this.graceMs, dead);
  }

  /**
   * One reclaim pass:
   * 0. when some other engine's session is no longer live: the active workflows its session lists, and the
   *    workflows whose timers fall due within the grace (a page of the timer index, soonest first) whose
   *    holder is not live — claimed first, before the sweep reads a holder page, so that a dead engine's
   *    imminent work does not wait behind the takeover of everything it parked;
   * 1. holder records whose holder is no longer live (or undecodable) are taken over — a page per pass in
   *    steady state, more pages while the sweep keeps finding claims to take (unless `full`: every page);
   * 2. running workflows with no holder are acquired (a page per pass unless `full`);
   * 3. sessions that ended or expired long ago are deleted.
   * Holder records of workflows this engine believes it holds but that name someone else now are dropped
   * on the way (the claim was taken while this engine was not looking).
   */
  async reclaim(options: { full?: boolean } = {}): Promise<void> {
    const { storage, claims, engineId, clock } = this.#deps;
    const limit = this.#deps.reclaimBatchSize;
    const judge = await this.#judge();
    const first: string[] = [];
    const candidates = new Set<string>();
    const now = clock.now();

    // 0. active workflows of sessions that are gone, and workflows with timers due soon, claimed first
    let someoneGone = false;
    for (const [id, session] of judge.sessions) {
      if (id === engineId || !session) continue;
      if (isSessionLive(session, now, this.graceMs) && !(await judge.isDead(id))) continue;
      someoneGone = true;
      for (const workflowId of session.active ?? []) if (!claims.has(workflowId)) first.push(workflowId);
    }
    if (someoneGone) first.push(...(await this.#dueSoonUnheld(judge, now, limit)));
    const claimAll = async (queue: string[]): Promise<void> => {
      const claimNext = async (): Promise<void> => {
        for (let workflowId = queue.shift(); workflowId !== undefined; workflowId = queue.shift()) {
          if (this.#deps.isStopping()) return;
          try {
            await this.claim(workflowId, { allowTakeover: true, respectCooldown: true, judge });
          } catch {
            // a storage error on one candidate does not stop the pass
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(reclaimConcurrency, queue.length) }, claimNext));
    };
    await claimAll([...new Set(first)]);

    // 1. holders (a full pass remembers which workflows have one, so that step 2 need not read them again)
    const haveHolder = options.full ? new Set<string>() : null;
    for (;;) {
      const page = await storage.scan(keys.ownerHoldersPrefix, {
        ...(this.#holderCursor ? { after: this.#holderCursor } : {}),
        limit,
      });
      this.#holderCursor = page.length < limit ? undefined : page[page.length - 1]!.key;
      let found = 0;
      for (const { key, value } of page) {
        const workflowId = workflowIdOf(key, keys.ownerHoldersPrefix);
        if (!workflowId) continue;
        haveHolder?.add(workflowId);
        const mine = claims.get(workflowId);
        if (mine) {
          if (mine.status === 'held' && value !== mine.holderRaw)
            this.loseClaim(workflowId, mine.epoch, 'another engine holds it now');
          continue;
        }
        if (await this.#isTakeoverCandidate(value, judge, now)) {
          candidates.add(workflowId);
          found++;
        }
      }
      if (!this.#holderCursor || (!options.full && found === 0)) break;
    }

    // 2. running without a holder
    const runningPrefix = keys.statusIndexPrefix('running');
    for (;;) {
      const after = this.#runningCursor;
      const page = await storage.scan(runningPrefix, { ...(after ? { after } : {}), limit });
      this.#runningCursor = page.length < limit ? undefined : page[page.length - 1]!.key;
      const ids = page
        .map(({ key }) => workflowIdOf(key, runningPrefix))
        .filter((id): id is string => id !== null && !claims.has(id));
      const types = new Map(page.map(({ key, value }) => [workflowIdOf(key, runningPrefix), value]));
      const eligible = ids.filter((id) => this.#deps.isEligible(types.get(id) ?? '') && !haveHolder?.has(id));
      if (eligible.length > 0) {
        const afterId = after ? workflowIdOf(after, runningPrefix) : null;
        for (const id of await idsWithoutHolder(storage, eligible, afterId, page.length)) candidates.add(id);
      }
      if (!options.full || !this.#runningCursor) break;
    }

    // Candidates are claimed concurrently, a few at a time, so their reads and claim commits share
    // transactions (group commit): a dead engine's workflows move in a handful of transactions.
    await claimAll([...candidates].filter((workflowId) => !claims.has(workflowId)));

    // 3. sessions long gone, and the notices nobody will read
    await this.#pruneSessions(judge, now);
    if (options.full)
      await this.#dropNoticesOf(keys.ownerNoticesPrefix, (id) => id === engineId || judge.sessions.has(id));
  }

  /**
   * The workflows of the first `limit` timers due by `now + grace` that this engine does not hold and whose
   * holder is not live (judged without storage calls; one scan and one read of their holders).
   */
  async #dueSoonUnheld(judge: Judge, now: number, limit: number): Promise<string[]> {
    const { storage, claims } = this.#deps;
    const bound = keys.timersDueAfter(now + this.graceMs);
    const ids = new Set<string>();
    // Small pages first: in the common case the first timer is already past the bound.
    let after: string | undefined;
    for (let read = 0, size = dueSoonFirstPage; read < limit; read += size, size = limit - read) {
      const page = await storage.scan(keys.timersPrefix, { ...(after ? { after } : {}), limit: size });
      const due = page.filter(({ key }) => key < bound);
      for (const { key } of due) {
        const workflowId = parseTimerKey(key)?.workflowId;
        if (workflowId !== undefined && !claims.has(workflowId)) ids.add(workflowId);
      }
      if (due.length < size) break;
      after = page[page.length - 1]!.key;
    }
    if (ids.size === 0) return [];
    const listed = [...ids];
    const holders = await storage.getMany(listed.map((workflowId) => keys.ownerHolder(workflowId)));
    const unheld: string[] = [];
    for (const [index, workflowId] of listed.entries()) {
      const raw = holders[index] ?? null;
      if (raw !== null && (await this.#isTakeoverCandidate(raw, judge, now))) unheld.push(workflowId);
    }
    return unheld;
  }

  async #pruneSessions(judge: Judge, now: number): Promise<void> {
    const stale = [...judge.sessions.values()].filter(
      (session): session is Session =>
        session !== null &&
        session.engineId !== this.#deps.engineId &&
        (session.endedAt ?? session.expiresAt) < now - sessionRetentionMs,
    );
    if (stale.length === 0) return;
    const raws = await this.#deps.storage.getMany(stale.map((session) => sessionKey(session.engineId)));
    await Promise.all(
      stale.map(async (session, index) => {
        const raw = raws[index];
        if (raw === null || raw === undefined) return;
        const key = sessionKey(session.engineId);
        if (await this.#deps.commit([{ key, expected: raw }], [{ type: 'delete', key }]).catch(() => false))
          await this.#dropNoticesOf(keys.ownerNoticesOf(session.engineId), () => false);
      }),
    );
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

/**
 * Which of `ids` (in key order, all after `afterId`) have no holder record. The holders of the same range of
 * ids are read in one scan of `count` records (a workflow running somewhere almost always has a holder, so
 * they reach about as far as the ids do); only ids beyond what the scan reached are read by key. Every idle
 * engine runs this each reclaim pass: one request instead of one per running workflow of the page.
 */
export async function idsWithoutHolder(
  storage: Pick<Storage, 'scan' | 'getMany'>,
  ids: readonly string[],
  afterId: string | null,
  count: number,
): Promise<string[]> {
  const holders = await storage.scan(keys.ownerHoldersPrefix, {
    ...(afterId !== null ? { after: keys.ownerHolder(afterId) } : {}),
    limit: count,
  });
  const present = new Set(holders.map(({ key }) => key));
  // Holder keys sort as the index keys do (one escaped id after a fixed prefix): a full page covers the ids
  // up to its last key; a short page ran to the end of the holders, so it covers every id.
  const reached = holders.length < count ? null : holders[holders.length - 1]!.key;
  const missing: string[] = [];
  const unknown: string[] = [];
  for (const id of ids) {
    const key = keys.ownerHolder(id);
    if (reached !== null && key > reached) unknown.push(id);
    else if (!present.has(key)) missing.push(id);
  }
  if (unknown.length > 0) {
    const values = await storage.getMany(unknown.map((id) => keys.ownerHolder(id)));
    unknown.forEach((id, index) => {
      if (values[index] === null) missing.push(id);
    });
  }
  return missing;
}
