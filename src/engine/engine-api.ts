/**
 * The engine's public surface: the `Engine` interface (every method, with its contract), `WorkflowHandle` and
 * `ShutdownReport`. Types only; `createEngine` (engine.ts) returns the implementation. Re-exported by
 * engine.ts and by index.ts, the public API. The contract in full: docs/engine.md and docs/ownership.md.
 */
import type { ActivityLimitInfo } from './activity-limits';
import type { EngineListener } from './events';
import type {
  ClaimInfo,
  ListFilter,
  ListPage,
  OperationOutcome,
  OutcomeOf,
  RunSummary,
  WorkflowDescription,
} from './inspect';
import type { ForkOptions } from './fork';
import type { RecordedHistory } from './replay-check';
import type { StartOptions } from './lifecycle';
import type { EngineMetrics } from './metrics';
import type { OwnershipMode } from './options';
import type { ClaimHolder, ReclaimOutcome } from './ownership/ownership';
import type { PurgeReport } from './purge';
import type { QueuePosition, QueueView } from './queues/queues';
import type { FenceRejection, TimelineEntry } from './records';
import type { ResultWaiterInfo } from './result-waiters';
import type { ScheduleInfo } from './schedules/records';
import type { ScheduleSpecInput } from './schedules/schedules';
import type { AnyWorkflowDefinition, WorkflowInput, WorkflowOutput } from './workflow';

/** A reference to one workflow, whichever engine owns it. */
export interface WorkflowHandle<O = unknown> {
  readonly workflowId: string;
  /**
   * The run this handle reads (`result`, `describe`, `timeline`): the run `start` created, or the one asked
   * for; undefined for the latest run at each call. Signals, queries, updates and the lifecycle calls always
   * address the workflow id (its latest run).
   */
  readonly run: number | undefined;
  /**
   * Resolves with the result, or rejects with WorkflowFailedError / Cancelled / Terminated / TimedOut; for a
   * pinned run, that run's outcome even after the id was started again.
   */
  result(): Promise<O>;
  describe(): Promise<WorkflowDescription>;
  signal(name: string, payload?: unknown): Promise<void>;
  query<T = unknown>(name: string, arg?: unknown): Promise<T>;
  update<T = unknown>(name: string, arg?: unknown, options?: { timeoutMs?: number }): Promise<T>;
  cancel(reason?: string): Promise<void>;
  terminate(reason?: string): Promise<void>;
  suspend(): Promise<void>;
  resume(): Promise<void>;
  timeline(): Promise<TimelineEntry[]>;
}

export type ShutdownReport = { claimsReleased: number; leaseReleased: boolean };

export interface Engine {
  /** This engine's id (`engineId`). */
  readonly id: string;
  readonly ownership: OwnershipMode;
  /** Adds or replaces a definition (same name and version replaces). */
  register(definition: AnyWorkflowDefinition): void;
  /** The registered definitions. */
  definitions(): AnyWorkflowDefinition[];
  /**
   * Creates a workflow and returns its handle. Under workflow-lease the claim is folded into the create
   * batch. Rejects with WorkflowAlreadyExistsError for an existing unfinished id. `started` is false when
   * the `idempotencyKey` had already started a run within the window: the handle is that run's, and nothing
   * was created.
   *
   * @example
   * const handle = await engine.start(orderWorkflow, { orderId: 'A-1', amount: 42 }, { id: 'order-A-1' });
   * const result = await handle.result();
   */
  start<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input?: WorkflowInput<D>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<WorkflowOutput<D>> & { started: boolean }>;
  /**
   * Runs a workflow again from one of its operations: a new run that replays the recorded outcomes of
   * operations `0 … fromPosition - 1` of run `run` (default the latest) and runs operation `fromPosition`
   * and everything after it anew, on the same input (without `fromPosition`, a run that failed, was
   * cancelled, terminated or timed out is forked from where it stopped) — the next run of the same id, which must have ended
   * (`InvalidWorkflowStateError` otherwise), or a run of `newId`. Positions are the ones timeline entries
   * name (`detail.pos`). `version` runs it on another registered version of the definition; like any
   * replay, the copied operations must be the ones that code yields (else the fork fails with
   * `NonDeterminismError`). The handle is pinned to the new run; its record and first timeline entry say
   * what it was forked from (`forkedFrom`). See fork.ts.
   *
   * @example
   * const failed = (await engine.timeline(id)).find((entry) => entry.kind === 'activity-failed');
   * const again = await engine.fork(id, { fromPosition: failed.detail.pos }); // after the fix is deployed
   */
  fork<O = unknown>(workflowId: string, options?: ForkOptions): Promise<WorkflowHandle<O>>;
  /** A handle on a workflow id; `{ run }` pins it to one run (run history). */
  handle<O = unknown>(workflowId: string, options?: { run?: number }): WorkflowHandle<O>;
  signal(workflowId: string, name: string, payload?: unknown): Promise<void>;
  /**
   * Completes an activity declared `completion: 'external'` with `result`, from any engine, exactly once: a
   * second completion (or failure) of the same activity is refused with `ActivityCompletionRefusedError`.
   * `token` is what the activity's function received as `context.completionToken` (the studio shows it).
   */
  completeActivity(token: string, result?: unknown): Promise<void>;
  /** Fails an external activity (`Error`, `{ name?, message }` or a message); its retry policy applies. */
  failActivity(token: string, error: unknown): Promise<void>;
  /**
   * Delivers signal `name` to workflow `options.id` if it is running; otherwise starts it (a finished id
   * follows `idReuse`) with the signal already buffered, in the same commit. The handle is pinned to the run
   * that got the signal; `started` says whether this call started it.
   */
  signalWithStart<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input: WorkflowInput<D>,
    signalName: string,
    payload: unknown,
    options: StartOptions & { id: string },
  ): Promise<WorkflowHandle<WorkflowOutput<D>> & { started: boolean }>;
  /**
   * Update-with-start: applies update `updateName` to workflow `options.id` if it is running; otherwise
   * starts it (a finished id follows `idReuse`) with the update stored beside it in the same commit, so that
   * its first turn applies it — before any other update, and exactly once, whichever engine runs it.
   * Validated at the caller (the update exists on the definition, its validator accepts `arg`) before
   * anything is written. Resolves with the update's result, the handle (pinned to the run that applied it)
   * and whether this call started it. `timeoutMs` (default 60,000) bounds the wait for the result.
   */
  updateWithStart<D extends AnyWorkflowDefinition, T = unknown>(
    workflow: D | string,
    input: WorkflowInput<D>,
    updateName: string,
    arg: unknown,
    options: StartOptions & { id: string; timeoutMs?: number },
  ): Promise<{ result: T; started: boolean; handle: WorkflowHandle<WorkflowOutput<D>> }>;
  query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T>;
  /** Validated at the caller; applied once by the owner. Default timeout 60,000 ms. */
  update<T = unknown>(
    workflowId: string,
    name: string,
    arg?: unknown,
    options?: { timeoutMs?: number },
  ): Promise<T>;
  cancel(workflowId: string, reason?: string): Promise<void>;
  terminate(workflowId: string, reason?: string): Promise<void>;
  suspend(workflowId: string): Promise<void>;
  resume(workflowId: string): Promise<void>;
  /** The latest run of a workflow, or `{ run }`: an earlier run kept by run history. */
  describe(workflowId: string, options?: { run?: number }): Promise<WorkflowDescription>;
  /** Every stored run of a workflow id, latest first (`WorkflowNotFoundError` when there is none). */
  runs(workflowId: string): Promise<RunSummary[]>;
  /**
   * Deletes every run of a finished workflow (record, checkpoint, timelines, messages), or only the earlier
   * run `{ run }`. A workflow that is not finished is refused (`InvalidWorkflowStateError`); nothing of it is
   * touched. Its id may be started again afterwards: under `workflow-lease` its runs go on numbering after
   * the purged ones (whose logs keep a tombstone per epoch: purge.ts), otherwise at run 1. Retention does the
   * same in the background.
   */
  purge(workflowId: string, options?: { run?: number }): Promise<PurgeReport>;
  list(filter?: ListFilter): Promise<ListPage>;
  /**
   * The recorded history of the latest run (or of `run`), as replay testing takes it: its identity, input,
   * position and history entries, as JSON (`replay(definitions, history)` checks today's code against it;
   * `shuttle replay` does it for a whole store).
   */
  history(workflowId: string, options?: { run?: number }): Promise<RecordedHistory>;
  /** The timeline of the latest run, or of `run`. */
  timeline(
    workflowId: string,
    options?: { run?: number; after?: number; limit?: number },
  ): Promise<TimelineEntry[]>;
  /**
   * What the history of the latest run (or of `run`) recorded for one operation: the result or error of the
   * operation at `pos` (and `member` inside `all` / `race`, default 0) — an activity's or child's result, a
   * signal's payload, … — or, for `{ updateId }`, the workflow's state right after that update. Null while
   * nothing is recorded (the operation has not finished). Timeline entries name the operation (`detail.pos`,
   * `detail.member`) and carry no values: this reads them where the run keeps them for replay, so nothing
   * is stored twice.
   *
   * @example
   * const done = (await engine.timeline(id)).find((entry) => entry.kind === 'activity-completed');
   * await engine.operationOutcome(id, { pos: done.detail.pos, member: done.detail.member }); // { ok: true, value: … }
   */
  operationOutcome(workflowId: string, of: OutcomeOf & { run?: number }): Promise<OperationOutcome | null>;
  /** Resumes every non-terminal workflow this engine can own; resolves with how many it now drives. */
  recoverAll(): Promise<number>;
  /**
   * Who holds the workflow's claim and whether that holder is live now (`workflow-lease`); null when nobody
   * holds it (finished, suspended, pending, or between owners) or the mode has no per-workflow claims.
   */
  claimHolder(workflowId: string): Promise<ClaimHolder | null>;
  /** One host-driven pass of all background work (see docs/ownership.md for the order). */
  runMaintenance(now?: number): Promise<void>;
  /**
   * Only the reclaim pass, now: for a host that has just learnt an engine died and wants its workflows moved
   * without waiting for the next pass (outside workflow-lease it recovers what this engine can drive).
   * Shares a pass already in flight.
   */
  reclaim(): Promise<void>;
  /**
   * Takes one workflow over now when — and only when — it has no holder or its holder is expired or dead,
   * and drives it here; a live holder is left alone (`held-live`). Needs `workflow-lease`.
   */
  reclaim(workflowId: string): Promise<ReclaimOutcome>;
  subscribe(listener: EngineListener): () => void;
  metrics(): EngineMetrics;
  /** Every holder record in the store (workflow-lease). */
  claims(): Promise<ClaimInfo[]>;
  /**
   * Every group of `activityLimits`, read-only: its limits, the attempts holding its slots (across the fleet
   * under `workflow-lease` with `concurrency`, read from the store and judged live as claims are; this
   * engine's otherwise), and how many run and wait here. Reads only the groups' slot keys and their holders'
   * sessions.
   */
  activityLimits(): Promise<ActivityLimitInfo[]>;
  /** Ids of the workflows this engine holds claims on (or drives, outside workflow-lease). */
  ownedWorkflows(): string[];
  /** This engine's result waiters: pending first, then recently settled. */
  resultWaiters(): ResultWaiterInfo[];
  /** Refused writes of deposed engines (for one workflow, or all). */
  fenceRejections(workflowId?: string): Promise<FenceRejection[]>;
  /**
   * Resolves when no turn, load or maintenance pass is in progress on this engine, no reaction to a change
   * it saw is in flight, and (unless `activities: false`) no activity is running.
   */
  idle(options?: { activities?: boolean }): Promise<void>;
  /**
   * Creates a schedule: a cron that starts `workflow` once per slot, on whichever engine that may run it gets
   * there first (each slot starts exactly one workflow, id `<name>@<slot ISO time>`). Returns it unchanged
   * when it exists with the same spec; a different spec is refused with `ScheduleExistsError` unless
   * `{ replace: true }`. Bad specs fail with `InvalidScheduleError` (or the start's own typed errors) before
   * anything is written. Defaults: timezone 'UTC', overlap 'skip', catchUp 'latest'. See schedules/.
   *
   * @example
   * await engine.schedule('nightly-report', { cron: '0 2 * * *', timezone: 'Europe/Paris', workflow: 'report' });
   */
  schedule(name: string, spec: ScheduleSpecInput, options?: { replace?: boolean }): Promise<ScheduleInfo>;
  /** Every schedule of the store. */
  schedules(): Promise<ScheduleInfo[]>;
  /**
   * Every queue declared on this engine or, by another engine, in the store (`queue-def:`): its limits, the
   * workflows holding its slots, how many wait (counted up to 10,000) and the first of them, the rate window,
   * a per-key breakdown, and how many this engine drives. Read-only.
   */
  queues(): Promise<QueueView[]>;
  /** One queue, as `queues()` shows it; `QueueNotFoundError` when no engine declared one of that name. */
  describeQueue(name: string): Promise<QueueView>;
  /**
   * Where a workflow stands in its queue: `waiting` with its position (1 = admitted next; counted up to
   * 10,000), or `admitted` with its slot; null for a workflow not started onto a queue, or finished.
   */
  queuePosition(workflowId: string): Promise<QueuePosition | null>;
  /** One schedule; `ScheduleNotFoundError` when there is none of that name. */
  describeSchedule(name: string): Promise<ScheduleInfo>;
  /** Stops a schedule firing (idempotent); slots missed while paused follow its catch-up on resume. */
  pauseSchedule(name: string): Promise<ScheduleInfo>;
  resumeSchedule(name: string): Promise<ScheduleInfo>;
  /** Starts one run now, outside the slot sequence, with its own id `<name>@trigger-<n>`. */
  triggerSchedule(name: string): Promise<WorkflowHandle>;
  /** Deletes a schedule; the workflows it started are left alone. */
  deleteSchedule(name: string): Promise<void>;
  /** Stops background work and releases every claim (and the lease); resolves when released. */
  shutdown(): Promise<ShutdownReport>;
  [Symbol.asyncDispose](): Promise<void>;
}
