/**
 * Ownership as one strategy, chosen once. `createOwnership` picks the implementation of the configured mode
 * (`none`, `lease`, `workflow-lease`); the rest of the engine asks it, never the mode:
 *
 * - **fence**: what a write of a workflow (or an engine-scoped write) must add to its conditions, and how a
 *   refused write is classified (an ordinary lost race, or this engine deposed);
 * - **claims folded into enabling writes**: the claim part of `start`, a delayed start and `resume`, and the
 *   rotation part of terminate / suspend / time-out;
 * - **what a run does at its end**: the operations a terminal or suspend commit adds (a release);
 * - **who drives what**: which workflows this engine may drive now, the wake guard, and the background passes
 *   that keep ownership alive (renew) and make sure nothing is stranded (reclaim);
 * - **shutdown**: letting go of everything this engine holds.
 *
 * The design and its guarantees are in docs/ownership.md. Implementations: none.ts, lease.ts,
 * workflow-lease.ts.
 */
import type { Tracing } from '../tracing';
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import type { Committer } from '../committer';
import type { CorruptRecordError } from '../errors';
import type { EngineEvent, EngineWarning, WakeKind } from '../events';
import type { MetricsCounters } from '../metrics';
import type { OwnershipMode } from '../options';
import type { Reactions } from '../reactions';
import type { WorkflowRecord } from '../records';
import type { EngineLiveness } from './liveness';
import type { MintedClaim, Transition } from './transitions';

/** How a write ended. `deposed`: this engine may no longer write for that workflow (or at all, in `lease`). */
export type WriteOutcome =
  | { ok: true }
  | { ok: false; reason: 'lost-race' }
  | { ok: false; reason: 'deposed'; heldEpoch: number; currentEpoch: number | null };

/** The fence of one write: conditions to add, and the epoch they name (0 when the mode has none). */
export type Fence = { conditions: Condition[]; heldEpoch: number };

/** What happened to a workflow this engine does not drive: the kinds of work that may need an owner now. */
export type WorkflowChange = 'record' | 'holder' | 'timer' | 'message';

/** How an engine came to hold a workflow. */
export type ClaimHow = 'start' | 'acquire' | 'resume' | 'takeover';

/** What the ownership strategy needs from the engine around it. */
export type OwnershipDeps = {
  storage: Storage;
  committer: Committer;
  engineId: string;
  clock: Clock;
  /** Claim (workflow-lease) or lease (lease) TTL, in ms. */
  ttlMs: number;
  renewIntervalMs: number;
  leaseWaitTimeoutMs: number;
  reclaimBatchSize: number;
  liveness: EngineLiveness | undefined;
  /** False for an observer engine: it never claims or drives a workflow. */
  claimWorkflows: boolean;
  metrics: MetricsCounters;
  emit(event: EngineEvent): void;
  warn(warning: EngineWarning): void;
  /** This engine has a definition for the type (any version) and is not an observer. */
  isEligible(workflowType: string): boolean;
  /**
   * This engine has room for the running workflow `record` now (false: it is at its queue's per-engine limit:
   * it does not claim the workflow, and one with room will).
   */
  hasRoomFor(record: WorkflowRecord): boolean;
  /** This engine may now drive the running workflow: evict any stale local context and load it. */
  drive(workflowId: string, how: ClaimHow | 'recover'): void;
  /** Workflows with work in flight here (a turn, a load or an activity): a successor takes these first. */
  activeWorkflows(): string[];
  /** This engine already drives (or is loading) the workflow. */
  isDriving(workflowId: string): boolean;
  /** This engine may no longer drive the workflow (its claim was lost, or a write found it deposed). */
  stopDriving(workflowId: string, reason: 'claim-lost' | 'deposed'): void;
  /** This engine may no longer drive anything (the store-wide lease was lost). */
  deposeEngine(epoch: number): void;
  /** A stored record is corrupt: fail that workflow closed. */
  markCorrupt(workflowId: string, error: CorruptRecordError): void;
  /** A workflow this engine knows to be corrupt (skipped by recovery). */
  isCorrupt(workflowId: string): boolean;
  /** Runs a reclaim pass soon (another engine's session ended: its workflows are free now). */
  requestReclaim(): void;
  /** True once shutdown has begun: claims that land now are released, not driven. */
  isStopping(): boolean;
  /** Where work started in reaction to a notice (no caller awaits it) is tracked. */
  reactions: Reactions;
  /** Spans for claims and takeovers (tracing.ts); absent: none. */
  tracing?: Tracing;
};

/** What the engine reports about ownership when it shuts down. */
export type ReleaseReport = { claimsReleased: number; leaseReleased: boolean };

/** A workflow's claim holder as `engine.claimHolder` reports it. */
export type ClaimHolder = {
  engineId: string;
  epoch: number;
  claimedAt: number;
  /** When the claim lapses unless renewed (its engine's session expiry), epoch ms. */
  expiresAt: number;
  /** False when a takeover may take it now: expired past the grace, its session ended, or its engine dead. */
  live: boolean;
};

/**
 * What `engine.reclaim(id)` did: `acquired` (it had no holder) or `taken-over` (its holder was not live), at
 * `epoch`; `already-held` by this engine; `held-live` by `holder`; `not-running` (finished, suspended or
 * pending: nothing to drive); `ineligible` (this engine has no definition of its type, or claims nothing);
 * `lost-race` (another engine claimed it meanwhile); `corrupt` (its records cannot be read).
 */
export type ReclaimOutcome =
  | { outcome: 'acquired' | 'taken-over' | 'already-held'; epoch: number }
  | { outcome: 'held-live'; holder: ClaimHolder }
  | { outcome: 'not-running' | 'ineligible' | 'lost-race' | 'corrupt' };

export interface Ownership {
  readonly mode: OwnershipMode;

  // -- Gates and start-up
  /** Construction gates (storage capability, mode marker); idempotent, re-run by every maintenance pass. */
  checkGates(): Promise<void>;
  /** Everything before the engine may run a workflow: the gates, then the lease (lease mode). */
  open(): Promise<void>;

  // -- Fencing
  /**
   * The fence of a write of `workflowId` (`null`: an engine-scoped write), or a refusal without any storage
   * call when this engine may not write for it at all. An `anchored` write (a run's commit) already pins the
   * workflow's checkpoint in its own conditions; a strategy whose every epoch change replaces that checkpoint
   * may add nothing to it (workflow-lease.ts).
   */
  fence(workflowId: string | null, what: string, anchored: boolean): Fence | WriteOutcome;
  /** A fenced write was refused: was it an ordinary lost race, or is this engine deposed? */
  classifyRefusal(workflowId: string | null, fence: Fence, what: string): Promise<WriteOutcome>;

  // -- Enabling writes and rotations
  /**
   * The claim folded into an enabling write (start, delayed start, resume) from the epoch and holder just
   * read, or null when this mode folds none. Throws `WorkflowClaimUnavailableError` when a live claim exists.
   */
  foldClaim(
    workflowId: string,
    read: { epochRaw: string | null; holderRaw: string | null },
  ): MintedClaim | null;
  /** The enabling write carrying `minted` landed: this engine now holds the workflow. */
  claimLanded(workflowId: string, minted: MintedClaim | null, how: 'start' | 'resume' | 'acquire'): void;
  /**
   * The rotation part of terminate, suspend or time-out (deposes whoever holds the workflow), or null when
   * this mode has no per-workflow epoch.
   */
  rotation(
    workflowId: string,
    read: { epochRaw: string | null; holderRaw: string | null },
    cause: 'terminated' | 'suspended' | 'timed-out',
  ): (Transition & { epoch: number }) | null;
  /**
   * The operations that tell the engine named by `holderRaw` that this engine's transition (a rotation, a
   * purge) deletes its holder: a displacement notice (notices.ts), or none (no other engine, or no claims).
   */
  displaced(
    workflowId: string,
    holderRaw: string | null,
    cause: 'terminated' | 'suspended' | 'timed-out' | 'purged',
  ): Operation[];
  /** A rotation landed: this engine no longer holds the workflow (if it did). */
  rotated(workflowId: string): void;
  /** Claims a running workflow for an explicit `resume` call (throws when someone else holds it live). */
  claimForResume(workflowId: string): Promise<void>;

  // -- Runs
  /** Whether this engine may drive `workflowId` now. */
  drives(workflowId: string): boolean;
  /** The epoch this engine holds for the workflow (0 when the mode has none; undefined when not held). */
  heldEpoch(workflowId: string): number | undefined;
  /** Operations a run's terminal or suspend commit adds (the release of its claim). */
  releaseOperations(workflowId: string): Operation[];
  /** A run's terminal or suspend commit landed (its claim went with it). */
  runEnded(workflowId: string): void;
  /** This engine learnt it no longer holds `workflowId` at `epoch` (it read another epoch): forget it. */
  claimLost(workflowId: string, epoch: number, reason: string): void;
  /** The wake guard: true when this engine may drive a wake-up of a workflow parked at `parkedEpoch`. */
  guardWake(workflowId: string, kind: WakeKind, parkedEpoch: number): Promise<boolean>;
  /**
   * Something happened to a workflow this engine does not drive (its record or holder changed, or a timer of
   * it fell due; `workflowType` when known): take it on now if this engine may.
   */
  noticeChange(workflowId: string, what: WorkflowChange, workflowType?: string): void;
  /** An engine's session record changed (renewed, ended, created or pruned). */
  noticeSession(engineId: string): void;
  /** A displacement notice addressed to `engineId` was written (notices.ts). */
  noticeDisplacement(engineId: string): void;
  /** A workflow loaded for driving turned out not to need it (finished, missing): let it go. */
  letGo(workflowId: string): Promise<void>;

  // -- Background passes
  /** Keeps this engine's ownership alive (claims or lease). */
  renew(): Promise<void>;
  /** Finds workflows nobody drives that this engine may run, and drives them; `full` scans everything. */
  reclaim(options?: { full?: boolean }): Promise<void>;

  // -- One workflow's claim, on request (engine.claimHolder / engine.reclaim)
  /**
   * Who holds `workflowId` and whether that holder is live now (its claim, session and the liveness oracle,
   * judged as a takeover would judge them); null when nobody holds it, or this mode has no per-workflow claims.
   */
  holderOf(workflowId: string): Promise<ClaimHolder | null>;
  /**
   * Claims `workflowId` now if it has no holder (acquire) or its holder is not live (takeover), and drives it.
   * Throws `InvalidOptionsError` in a mode without per-workflow claims.
   */
  claimOne(workflowId: string): Promise<ReclaimOutcome>;

  // -- Views
  /** Ids of the workflows this engine holds (or drives, outside workflow-lease). */
  owned(driving: () => string[]): string[];
  readonly claimsHeld: number;
  /** Result waiters stay pending on a read error when other engines may finish the workflow. */
  readonly sharesStore: boolean;

  // -- Shutdown
  /** Lets go of everything this engine holds; never rejects. */
  release(): Promise<ReleaseReport>;
}
