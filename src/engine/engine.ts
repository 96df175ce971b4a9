/**
 * `createEngine` and the engine: the composition root that wires storage, ownership, runs, timers, waiters
 * and background work together, and the public API over them.
 *
 * What the engine guarantees (see docs/engine.md and docs/ownership.md for the full contract):
 * - Every durable write goes through one fenced write function (ownership/fenced-write.ts).
 * - A workflow's code runs on an engine only after that engine claimed it (workflow-lease), holds the
 *   store-wide lease (lease), or is the only engine (none).
 * - Each operation boundary commits one atomic batch; recovery resumes from the last committed checkpoint
 *   and never re-runs a recorded operation.
 * - Nothing is stranded while an engine with the workflow's definition is alive (reclaim).
 *
 * Background work: in `automatic` mode one renew-interval timer drives four single-flight passes (renew,
 * reclaim, signal poll, update poll); result polls and the durable timer scheduler run on their own timers.
 * In `manual` mode nothing runs on timers: the host calls `runMaintenance()`.
 */
import type { Storage } from '../storage/types';
import { currentCheckpoint, lastLogRecord } from './checkpoint';
import type { Clock } from './clock';
import { normalizePayload, type Json } from './codec';
import { Committer } from './committer';
import {
  EngineDisposedError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidWorkflowStateError,
  QueryFailedError,
  UpdateRejectedError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  serializeError,
} from './errors';
import { EventHub, type EngineEvent, type EngineListener, type EngineWarning } from './events';
import { assertHandlerName, assertRunNumber, assertWorkflowId, uuidFrom } from './ids';
import {
  describePastRun,
  describeWorkflow,
  listClaims,
  listRuns,
  listWorkflows,
  readFenceRejections,
  readOperationOutcome,
  readTimeline,
  type ClaimInfo,
  type ListFilter,
  type ListPage,
  type OperationOutcome,
  type OutcomeOf,
  type RunSummary,
  type WorkflowDescription,
} from './inspect';
import { keys } from './keys';
import { Lifecycle, type StartOptions } from './lifecycle';
import { Maintenance, type MaintenancePasses } from './maintenance';
import { MetricsCounters, type EngineMetrics } from './metrics';
import { resolveOptions, type EngineOptions, type OwnershipMode, type ResolvedOptions } from './options';
import { createOwnership } from './ownership/create';
import { FencedWriter } from './ownership/fenced-write';
import type { ClaimHolder, ClaimHow, Ownership, ReclaimOutcome } from './ownership/ownership';
import type { MintedClaim } from './ownership/transitions';
import {
  decodePastRun,
  decodeRecord,
  isTerminal,
  type FenceRejection,
  type TimelineEntry,
  type UpdateRequest,
} from './records';
import { settleFromRecord, ResultWaiters, type ResultWaiterInfo } from './result-waiters';
import { Reactions } from './reactions';
import { ExternalActivities } from './external-activities';
import { Purger, type PurgeReport } from './purge';
import { Schedules, type ScheduleSpecInput } from './schedules/schedules';
import type { ScheduleInfo } from './schedules/records';
import { RunSupervisor, describe } from './supervisor';
import { TimerScheduler } from './timer-scheduler';
import { UpdateCalls } from './update-calls';
import { WakeRouter } from './wake-router';
import {
  assertDefinition,
  workflowTypeOf,
  type AnyWorkflowDefinition,
  type WorkflowInput,
  type WorkflowOutput,
} from './workflow';

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

const asyncDispose: typeof Symbol.asyncDispose =
  Symbol.asyncDispose ?? (Symbol.for('Symbol.asyncDispose') as typeof Symbol.asyncDispose);

/**
 * Creates an engine over a store. Validates options, runs the construction gates (storage capability,
 * ownership mode marker), waits for the lease in `lease` mode, and recovers unfinished workflows.
 *
 * @example
 * const engine = await createEngine({ storage: new MemoryStorage(), workflows: [orderWorkflow] });
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  const resolved = resolveOptions(options);
  const engine = new ShuttleEngine(resolved);
  await engine.open();
  return engine;
}

class ShuttleEngine implements Engine {
  readonly id: string;
  readonly ownership: OwnershipMode;
  readonly #options: ResolvedOptions;
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #hub = new EventHub();
  readonly #metrics = new MetricsCounters();
  readonly #committer: Committer;
  readonly #owner: Ownership;
  readonly #writer: FencedWriter;
  readonly #lifecycle: Lifecycle;
  readonly #waiters: ResultWaiters;
  readonly #updates: UpdateCalls;
  readonly #timers: TimerScheduler;
  readonly #supervisor: RunSupervisor;
  readonly #router: WakeRouter;
  readonly #maintenance: Maintenance;
  readonly #schedules: Schedules;
  readonly #purger: Purger;
  readonly #external: ExternalActivities;
  readonly #reactions = new Reactions();
  readonly #definitions = new Map<string, Map<number, AnyWorkflowDefinition>>();
  #state: 'opening' | 'open' | 'stopping' | 'stopped' | 'deposed' = 'opening';
  #unwatch: (() => void) | null = null;
  #releaseLiveness: (() => void) | null = null;
  #shutdown: Promise<ShutdownReport> | null = null;

  /** Plain wiring: every collaborator gets the narrow functions it needs, nothing decides anything here. */
  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#storage = options.storage;
    this.#clock = options.clock;
    this.ownership = options.ownership;
    this.id = options.engineId ?? uuidFrom(options.random);
    const emit = (event: EngineEvent) => this.#hub.emit(event);
    const warn = (warning: EngineWarning) => this.#warn(warning);
    const isOpen = () => this.#state === 'open' || this.#state === 'opening';
    this.#committer = new Committer(this.#storage);
    this.#owner = createOwnership(options.ownership, {
      storage: this.#storage,
      committer: this.#committer,
      engineId: this.id,
      clock: this.#clock,
      ttlMs: options.ttlMs,
      renewIntervalMs: options.renewIntervalMs,
      leaseWaitTimeoutMs: options.leaseWaitTimeoutMs,
      reclaimBatchSize: options.reclaimBatchSize,
      liveness: options.liveness,
      claimWorkflows: options.claimWorkflows,
      metrics: this.#metrics,
      emit,
      warn,
      isEligible: (type) => this.#mayDrive(type),
      drive: (workflowId, how) =>
        this.#supervisor.drive(workflowId, how === 'takeover' || how === 'recover' ? null : 'queued-start'),
      isDriving: (workflowId) => this.#supervisor.isDriving(workflowId),
      activeWorkflows: () => this.#supervisor.active(),
      stopDriving: (workflowId, reason) => this.#supervisor.stop(workflowId, reason),
      deposeEngine: (epoch) => this.#leaseLost(epoch),
      markCorrupt: (workflowId, error) => this.#supervisor.markCorrupt(workflowId, error),
      isCorrupt: (workflowId) => this.#supervisor.corruption(workflowId) !== undefined,
      requestReclaim: () => {
        if (this.#state === 'open') void this.#maintenance.single('reclaim');
      },
      isStopping: () => !isOpen(),
      reactions: this.#reactions,
    });
    this.#writer = new FencedWriter({ committer: this.#committer, ownership: this.#owner });
    this.#waiters = new ResultWaiters({
      storage: this.#storage,
      clock: this.#clock,
      metrics: this.#metrics,
      emit,
      keepPendingOnReadError: this.#owner.sharesStore,
    });
    this.#updates = new UpdateCalls({
      storage: this.#storage,
      clock: this.#clock,
      manualTimers: options.backgroundTasks === 'manual',
      commit: (conditions, operations) => this.#committer.commit(conditions, operations),
    });
    this.#lifecycle = new Lifecycle({
      storage: this.#storage,
      writer: this.#writer,
      ownership: this.#owner,
      clock: this.#clock,
      random: options.random,
      engineId: this.id,
      maxPayloadBytes: options.maxPayloadBytes,
      idempotencyWindowMs: options.idempotencyWindowMs,
      definition: (type, version) => this.#definition(type, version),
      claimsOnStart: options.claimWorkflows,
      claimed: (workflowId, workflowType, minted, how) =>
        this.#claimedByEnablingWrite(workflowId, workflowType, minted, how),
      rotated: (workflowId, record) => this.#supervisor.rotated(workflowId, record),
      timerArmed: (dueAt) => this.#timers.notify(dueAt),
    });
    this.#supervisor = new RunSupervisor({
      storage: this.#storage,
      ownership: this.#owner,
      runHost: {
        engineId: this.id,
        storage: this.#storage,
        writer: this.#writer,
        clock: this.#clock,
        random: options.random,
        maxPayloadBytes: options.maxPayloadBytes,
        manualTimers: options.backgroundTasks === 'manual',
        metrics: this.#metrics,
        emit,
        warn,
        heldEpoch: (workflowId) => this.#owner.heldEpoch(workflowId),
        claimLost: (workflowId, heldEpoch, reason) => this.#owner.claimLost(workflowId, heldEpoch, reason),
        releaseOperations: (workflowId) => this.#owner.releaseOperations(workflowId),
        guardWake: (workflowId, kind, parkedEpoch) => this.#owner.guardWake(workflowId, kind, parkedEpoch),
        prepareChild: (request) => this.#lifecycle.prepareChild(request),
        timerArmed: (dueAt) => this.#timers.notify(dueAt),
      },
      hub: this.#hub,
      metrics: this.#metrics,
      waiters: this.#waiters,
      updates: this.#updates,
      lifecycle: () => this.#lifecycle,
      definitions: (type) => [...(this.#definitions.get(type)?.values() ?? [])],
      isOpen,
      warn,
    });
    this.#router = new WakeRouter({
      storage: this.#storage,
      writer: this.#writer,
      ownership: this.#owner,
      supervisor: this.#supervisor,
      waiters: this.#waiters,
      updates: this.#updates,
      lifecycle: this.#lifecycle,
      timers: () => this.#timers,
      updateResponseRetentionMs: options.updateResponseRetentionMs,
      isOpen: () => this.#state === 'open',
      reactions: this.#reactions,
    });
    this.#timers = new TimerScheduler({
      storage: this.#storage,
      clock: this.#clock,
      automatic: options.backgroundTasks === 'automatic',
      fire: (key, timer) => this.#router.timerDue(key, timer),
      onError: (error) =>
        warn({
          name: 'StorageWarning',
          message: `Durable timer scan failed (will retry): ${describe(error)}`,
        }),
    });
    this.#schedules = new Schedules({
      storage: this.#storage,
      writer: this.#writer,
      lifecycle: this.#lifecycle,
      clock: this.#clock,
      engineId: this.id,
      maxPayloadBytes: options.maxPayloadBytes,
      metrics: this.#metrics,
      definition: (type) => this.#definition(type),
      mayDrive: (type) => this.#mayDrive(type),
      automatic: options.backgroundTasks === 'automatic',
      renewIntervalMs: options.renewIntervalMs,
      warn,
    });
    this.#external = new ExternalActivities({
      storage: this.#storage,
      writer: this.#writer,
      engineId: this.id,
      now: () => this.#clock.now(),
      maxPayloadBytes: options.maxPayloadBytes,
      stored: (workflowId) => {
        const run = this.#supervisor.get(workflowId);
        if (run?.waitsOnCompletions) run.deliver({ type: 'completions' });
      },
    });
    this.#purger = new Purger({
      storage: this.#storage,
      writer: this.#writer,
      displaced: (workflowId, holderRaw) => this.#owner.displaced(workflowId, holderRaw, 'purged'),
      engineId: this.id,
      clock: this.#clock,
      metrics: this.#metrics,
      retentionOf: (type) => {
        if (!this.#definitions.has(type)) return undefined;
        return this.#definition(type)?.retentionMs ?? options.retentionMs;
      },
      hasRetention: () =>
        options.retentionMs !== undefined ||
        [...this.#definitions.values()].some((versions) =>
          [...versions.values()].some((definition) => definition.retentionMs !== undefined),
        ),
      idempotencyWindowMs: options.idempotencyWindowMs,
      warn,
    });
    this.#maintenance = new Maintenance({
      passes: this.#maintenancePasses(),
      clock: this.#clock,
      intervalMs: options.renewIntervalMs,
      isOpen: () => this.#state === 'open',
      warn,
    });
    for (const definition of options.workflows) this.register(definition);
    if (options.onEvent) this.#hub.subscribe(options.onEvent);
  }

  async open(): Promise<void> {
    await this.#owner.open();
    if (this.#options.liveness) this.#releaseLiveness = await this.#options.liveness.hold(this.id);
    if (this.#storage.capabilities.changeFeed && this.#storage.watch)
      this.#unwatch = this.#storage.watch('', (changed) => this.#router.changed(changed));
    this.#state = 'open';
    if (this.#options.backgroundTasks === 'automatic') this.#maintenance.start();
    if (this.#options.recover) await this.recoverAll();
    if (this.#options.backgroundTasks === 'automatic') void this.#timers.fireDue();
    this.#schedules.open();
  }

  // -------------------------------------------------------------------------------------------------------
  // Definitions

  register(definition: AnyWorkflowDefinition): void {
    this.#assertOpen(true);
    assertDefinition(definition);
    const versions = this.#definitions.get(definition.name) ?? new Map<number, AnyWorkflowDefinition>();
    versions.set(definition.version, definition);
    this.#definitions.set(definition.name, versions);
  }

  definitions(): AnyWorkflowDefinition[] {
    return [...this.#definitions.values()].flatMap((versions) => [...versions.values()]);
  }

  /** This engine may run workflows of `type`: it has a definition for it and is not an observer. */
  #mayDrive(type: string): boolean {
    return this.#options.claimWorkflows && (this.#definitions.get(type)?.size ?? 0) > 0;
  }

  #definition(type: string, version?: number): AnyWorkflowDefinition | undefined {
    const versions = this.#definitions.get(type);
    if (!versions) return undefined;
    if (version !== undefined) return versions.get(version);
    return versions.get(Math.max(...versions.keys()));
  }

  // -------------------------------------------------------------------------------------------------------
  // Public API

  async start<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input?: WorkflowInput<D>,
    options: StartOptions = {},
  ): Promise<WorkflowHandle<WorkflowOutput<D>> & { started: boolean }> {
    this.#assertOpen();
    if (typeof workflow !== 'string') {
      assertDefinition(workflow);
      if (this.#definition(workflow.name, workflow.version) !== workflow) this.register(workflow);
    }
    const type = typeof workflow === 'string' ? workflow : workflow.name;
    if (typeof type !== 'string' || type.length === 0)
      throw new InvalidArgumentError('start needs a workflow definition or a registered workflow type name.');
    const { id, run, started } = await this.#lifecycle.start(type, input, options ?? {});
    if (started) this.#metrics.workflowsStarted++;
    return { ...this.handle<WorkflowOutput<D>>(id, { run }), started };
  }

  handle<O = unknown>(workflowId: string, options: { run?: number } = {}): WorkflowHandle<O> {
    assertWorkflowId(workflowId);
    const run = options.run;
    if (run !== undefined) assertRunNumber(run);
    return {
      workflowId,
      run,
      result: () => this.#result(workflowId, run) as Promise<O>,
      describe: () => this.describe(workflowId, { run }),
      signal: (name, payload) => this.signal(workflowId, name, payload),
      query: (name, arg) => this.query(workflowId, name, arg),
      update: (name, arg, options) => this.update(workflowId, name, arg, options),
      cancel: (reason) => this.cancel(workflowId, reason),
      terminate: (reason) => this.terminate(workflowId, reason),
      suspend: () => this.suspend(workflowId),
      resume: () => this.resume(workflowId),
      timeline: () => this.timeline(workflowId, { run }),
    };
  }

  async #result(workflowId: string, run: number | undefined): Promise<unknown> {
    this.#assertOpen();
    let raw: string | null;
    try {
      raw = await this.#storage.get(keys.record(workflowId));
    } catch (error) {
      if (!this.#owner.sharesStore) throw error;
      return this.#waitForResult(workflowId, run);
    }
    if (!raw) throw new WorkflowNotFoundError(workflowId, run);
    let record = decodeRecord(keys.record(workflowId), raw);
    if (run !== undefined && run > record.run) throw new WorkflowNotFoundError(workflowId, run);
    if (run !== undefined && run < record.run) {
      const past = await this.#storage.get(keys.pastRun(workflowId, run));
      if (!past) throw new WorkflowNotFoundError(workflowId, run);
      record = decodePastRun(keys.pastRun(workflowId, run), past).record;
    }
    if (isTerminal(record.status)) {
      const outcome = settleFromRecord(record);
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    }
    return this.#waitForResult(workflowId, run);
  }

  #waitForResult(workflowId: string, run: number | undefined): Promise<unknown> {
    const waiting = this.#waiters.wait(workflowId, run);
    // It may have finished between the read and the registration: look once more.
    this.#reactions.run(this.#waiters.recheck(workflowId));
    return waiting;
  }

  async signalWithStart<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input: WorkflowInput<D>,
    signalName: string,
    payload: unknown,
    options: StartOptions & { id: string },
  ): Promise<WorkflowHandle<WorkflowOutput<D>> & { started: boolean }> {
    this.#assertOpen();
    if (typeof workflow !== 'string') {
      assertDefinition(workflow);
      if (this.#definition(workflow.name, workflow.version) !== workflow) this.register(workflow);
    }
    const type = typeof workflow === 'string' ? workflow : workflow.name;
    if (typeof type !== 'string' || type.length === 0)
      throw new InvalidArgumentError(
        'signalWithStart needs a workflow definition or a registered type name.',
      );
    const { id, run, started } = await this.#lifecycle.signalWithStart(
      type,
      input,
      signalName,
      payload,
      options,
    );
    if (started) this.#metrics.workflowsStarted++;
    else {
      const driven = this.#supervisor.get(id);
      if (driven?.waitsOnSignals) driven.deliver({ type: 'signals' });
    }
    return { ...this.handle<WorkflowOutput<D>>(id, { run }), started };
  }

  async completeActivity(token: string, result?: unknown): Promise<void> {
    this.#assertOpen();
    await this.#external.complete(token, result);
  }

  async failActivity(token: string, error: unknown): Promise<void> {
    this.#assertOpen();
    await this.#external.fail(token, error);
  }

  async signal(workflowId: string, name: string, payload?: unknown): Promise<void> {
    this.#assertOpen();
    await this.#lifecycle.signal(workflowId, name, payload);
    const run = this.#supervisor.get(workflowId);
    if (run?.waitsOnSignals) run.deliver({ type: 'signals' });
  }

  async query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T> {
    this.#assertOpen();
    assertWorkflowId(workflowId);
    assertHandlerName(name, 'Query');
    const [[recordRaw, checkpointRaw], last] = await Promise.all([
      this.#storage.getMany([keys.record(workflowId), keys.checkpoint(workflowId)]),
      lastLogRecord(this.#storage, workflowId),
    ]);
    if (!recordRaw) throw new WorkflowNotFoundError(workflowId);
    const record = decodeRecord(keys.record(workflowId), recordRaw);
    const definition = this.#definition(record.type, record.version) ?? this.#definition(record.type);
    if (!definition) throw new WorkflowNotRegisteredError(record.type);
    const handler = definition.queries?.[name];
    if (!handler)
      throw new QueryFailedError(
        workflowId,
        name,
        `workflow type '${record.type}' has no query named '${name}' (it has: ${Object.keys(definition.queries ?? {}).join(', ') || 'none'})`,
      );
    const current = checkpointRaw
      ? await currentCheckpoint(this.#storage, workflowId, checkpointRaw, last)
      : null;
    const state = current?.checkpoint.state ?? {};
    let value: unknown;
    try {
      value = handler(deepFreeze(state), arg);
    } catch (error) {
      throw new QueryFailedError(workflowId, name, describe(error));
    }
    return normalizePayload(value, `Result of query '${name}'`, this.#options.maxPayloadBytes) as T;
  }

  async update<T = unknown>(
    workflowId: string,
    name: string,
    arg?: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    this.#assertOpen();
    assertWorkflowId(workflowId);
    assertHandlerName(name, 'Update');
    const timeoutMs = options?.timeoutMs ?? 60_000;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
      throw new InvalidOptionsError(
        `update timeoutMs must be a positive number of milliseconds; got ${String(timeoutMs)}.`,
      );
    const stored = normalizePayload(
      arg,
      `Argument of update '${name}' to workflow '${workflowId}'`,
      this.#options.maxPayloadBytes,
    ) as Json | undefined;
    const recordRaw = await this.#storage.get(keys.record(workflowId));
    if (!recordRaw) throw new WorkflowNotFoundError(workflowId);
    const record = decodeRecord(keys.record(workflowId), recordRaw);
    if (isTerminal(record.status))
      throw new InvalidWorkflowStateError(workflowId, record.status, `apply update '${name}' to`);
    const definition = this.#definition(record.type, record.version) ?? this.#definition(record.type);
    if (!definition) throw new WorkflowNotRegisteredError(record.type, record.version);
    const update = definition.updates?.[name];
    if (!update)
      throw new UpdateRejectedError(workflowId, name, {
        name: 'Error',
        message: `workflow type '${record.type}' has no update named '${name}' (it has: ${Object.keys(definition.updates ?? {}).join(', ') || 'none'})`,
      });
    try {
      update.validate?.(stored === undefined ? undefined : structuredCloneJson(stored));
    } catch (error) {
      const failure = serializeError(error);
      delete failure.stack;
      throw new UpdateRejectedError(workflowId, name, failure);
    }
    const updateId = uuidFrom(this.#options.random);
    const request: UpdateRequest = {
      updateId,
      name,
      ...(stored === undefined ? {} : { arg: stored }),
      requestedAt: this.#clock.now(),
      requestedBy: this.id,
    };
    const requestKey = keys.updateRequest(workflowId, updateId);
    const waiting = this.#updates.wait({ workflowId, updateId, name, timeoutMs });
    const outcome = await this.#writer.write(
      null,
      [{ key: requestKey, expected: null }],
      [{ type: 'put', key: requestKey, value: JSON.stringify(request) }],
      `request update '${name}'`,
    );
    if (!outcome.ok) throw new EngineLeaseNotHeldError(this.id);
    this.#supervisor.deliver(workflowId, { type: 'updates' });
    return waiting as Promise<T>;
  }

  async cancel(workflowId: string, reason?: string): Promise<void> {
    this.#assertOpen();
    const outcome = await this.#lifecycle.cancel(workflowId, reason);
    if (outcome === 'requested') this.#supervisor.deliver(workflowId, { type: 'cancel' });
  }

  async terminate(workflowId: string, reason?: string): Promise<void> {
    this.#assertOpen();
    await this.#lifecycle.rotate(workflowId, 'terminated', reason);
  }

  async suspend(workflowId: string): Promise<void> {
    this.#assertOpen();
    await this.#lifecycle.rotate(workflowId, 'suspended');
  }

  async resume(workflowId: string): Promise<void> {
    this.#assertOpen();
    await this.#lifecycle.resume(workflowId);
  }

  async describe(workflowId: string, options: { run?: number } = {}): Promise<WorkflowDescription> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    const run = options.run;
    if (run !== undefined) assertRunNumber(run);
    const description = await describeWorkflow(this.#storage, workflowId);
    if (description && run !== undefined && run !== description.run) {
      const past = run < description.run ? await describePastRun(this.#storage, workflowId, run) : null;
      if (!past) throw new WorkflowNotFoundError(workflowId, run);
      return past;
    }
    if (!description) throw new WorkflowNotFoundError(workflowId, run);
    const corrupt = this.#supervisor.corruption(workflowId);
    return corrupt && !description.corrupt ? { ...description, corrupt } : description;
  }

  async list(filter: ListFilter = {}): Promise<ListPage> {
    this.#assertOpen(true);
    const page = await listWorkflows(this.#storage, filter);
    return {
      ...page,
      items: page.items.map((item) => {
        const corrupt = this.#supervisor.corruption(item.workflowId);
        return corrupt && !item.corrupt ? { ...item, corrupt } : item;
      }),
    };
  }

  async purge(workflowId: string, options: { run?: number } = {}): Promise<PurgeReport> {
    this.#assertOpen();
    assertWorkflowId(workflowId);
    if (options.run !== undefined) assertRunNumber(options.run);
    return this.#purger.purge(workflowId, options.run === undefined ? {} : { run: options.run });
  }

  async runs(workflowId: string): Promise<RunSummary[]> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    const runs = await listRuns(this.#storage, workflowId);
    if (runs.length === 0) throw new WorkflowNotFoundError(workflowId);
    return runs;
  }

  async timeline(
    workflowId: string,
    options: { run?: number; after?: number; limit?: number } = {},
  ): Promise<TimelineEntry[]> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    if (options.run !== undefined) assertRunNumber(options.run);
    const run = await this.#storedRun(workflowId, options.run);
    return readTimeline(this.#storage, workflowId, { ...options, run });
  }

  async operationOutcome(
    workflowId: string,
    of: OutcomeOf & { run?: number },
  ): Promise<OperationOutcome | null> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    if (typeof of !== 'object' || of === null)
      throw new InvalidArgumentError(
        `operationOutcome needs { pos, member? } or { updateId }, and optionally a run; got ${JSON.stringify(of)}.`,
      );
    const { run, pos, member, updateId } = of as {
      run?: unknown;
      pos?: unknown;
      member?: unknown;
      updateId?: unknown;
    };
    if (run !== undefined) assertRunNumber(run);
    let at: OutcomeOf;
    if (updateId !== undefined) {
      if (pos !== undefined || member !== undefined)
        throw new InvalidArgumentError(
          'operationOutcome takes either { pos, member? } or { updateId }, not both.',
        );
      assertWorkflowId(updateId, 'An update id');
      at = { updateId };
    } else {
      assertIndex(pos, 'An operation position (pos)');
      if (member !== undefined) assertIndex(member, 'A member index (member)');
      at = member === undefined ? { pos } : { pos, member };
    }
    return readOperationOutcome(this.#storage, workflowId, {
      ...at,
      run: await this.#storedRun(workflowId, run),
    });
  }

  /** The run `run` names (the latest when absent), or `WorkflowNotFoundError` when it is not stored. */
  async #storedRun(workflowId: string, run: number | undefined): Promise<number> {
    const raw = await this.#storage.get(keys.record(workflowId));
    if (raw === null) throw new WorkflowNotFoundError(workflowId);
    const latest = decodeRecord(keys.record(workflowId), raw).run;
    const chosen = run ?? latest;
    if (
      chosen > latest ||
      (chosen < latest && (await this.#storage.get(keys.pastRun(workflowId, chosen))) === null)
    )
      throw new WorkflowNotFoundError(workflowId, chosen);
    return chosen;
  }

  async claimHolder(workflowId: string): Promise<ClaimHolder | null> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    return this.#owner.holderOf(workflowId);
  }

  async recoverAll(): Promise<number> {
    this.#assertOpen();
    await this.#owner.reclaim({ full: true });
    await Promise.all(this.#supervisor.loads());
    return this.ownedWorkflows().length;
  }

  subscribe(listener: EngineListener): () => void {
    return this.#hub.subscribe(listener);
  }

  metrics(): EngineMetrics {
    const m = this.#metrics;
    return {
      claimAttempts: { ...m.claimAttempts },
      claimsHeld: this.#owner.claimsHeld,
      renewals: m.renewals,
      renewalFailures: m.renewalFailures,
      claimsLost: m.claimsLost,
      wakesDiscarded: m.wakesDiscarded,
      writesFencedOut: m.writesFencedOut,
      resultWaitersPending: this.#waiters.pendingCount,
      resultWaitersSettled: m.resultWaitersSettled,
      workflowsStarted: m.workflowsStarted,
      workflowsFinished: m.workflowsFinished,
      operationsCommitted: m.operationsCommitted,
      activitiesRun: m.activitiesRun,
      storageTransactions: this.#committer.stats.transactions,
      groupedTransactions: this.#committer.stats.groupedTransactions,
      groupedBatches: this.#committer.stats.groupedBatches,
      scheduleStarts: m.scheduleStarts,
      scheduleSlotConflicts: m.scheduleSlotConflicts,
      runsPurged: m.runsPurged,
    };
  }

  claims(): Promise<ClaimInfo[]> {
    return listClaims(this.#storage);
  }

  ownedWorkflows(): string[] {
    return this.#owner.owned(() => this.#supervisor.driving());
  }

  resultWaiters(): ResultWaiterInfo[] {
    return this.#waiters.list();
  }

  fenceRejections(workflowId?: string): Promise<FenceRejection[]> {
    return readFenceRejections(this.#storage, workflowId);
  }

  async idle(options: { activities?: boolean } = {}): Promise<void> {
    const activities = options.activities ?? true;
    for (let round = 0; round < 10_000; round++) {
      const busy = [...this.#supervisor.busy(activities), ...this.#maintenance.inFlight];
      const maintenance = this.#maintenance.running;
      if (maintenance) busy.push(maintenance);
      const reactions = this.#reactions.drained;
      if (reactions) busy.push(reactions);
      if (busy.length === 0) return;
      await Promise.race(busy);
    }
  }

  /** An enabling write (start, delayed start, resume) landed: hold the workflow and drive it here. */
  #claimedByEnablingWrite(
    workflowId: string,
    workflowType: string,
    minted: MintedClaim | null,
    how: 'start' | 'resume' | 'acquire',
  ): void {
    this.#owner.claimLanded(workflowId, minted, how);
    if (how === 'resume') this.#hub.emit({ type: 'workflow.resumed', workflowId });
    else this.#hub.emit({ type: 'workflow.started', workflowId, workflowType, status: 'running' });
    if (this.#state !== 'open') {
      if (minted) void this.#owner.letGo(workflowId);
      return;
    }
    this.#supervisor.drive(workflowId, 'queued-start');
  }

  // -------------------------------------------------------------------------------------------------------
  // Schedules (src/engine/schedules): thin delegations

  schedule(name: string, spec: ScheduleSpecInput, options?: { replace?: boolean }): Promise<ScheduleInfo> {
    this.#assertOpen();
    return this.#schedules.create(name, spec, options);
  }

  schedules(): Promise<ScheduleInfo[]> {
    this.#assertOpen(true);
    return this.#schedules.list();
  }

  describeSchedule(name: string): Promise<ScheduleInfo> {
    this.#assertOpen(true);
    return this.#schedules.describe(name);
  }

  pauseSchedule(name: string): Promise<ScheduleInfo> {
    this.#assertOpen();
    return this.#schedules.pause(name);
  }

  resumeSchedule(name: string): Promise<ScheduleInfo> {
    this.#assertOpen();
    return this.#schedules.resume(name);
  }

  async triggerSchedule(name: string): Promise<WorkflowHandle> {
    this.#assertOpen();
    return this.handle(await this.#schedules.trigger(name));
  }

  deleteSchedule(name: string): Promise<void> {
    this.#assertOpen();
    return this.#schedules.delete(name);
  }

  // -------------------------------------------------------------------------------------------------------
  // Background work

  async runMaintenance(now?: number): Promise<void> {
    this.#assertOpen();
    return this.#maintenance.run(now);
  }

  reclaim(): Promise<void>;
  reclaim(workflowId: string): Promise<ReclaimOutcome>;
  async reclaim(workflowId?: string): Promise<void | ReclaimOutcome> {
    this.#assertOpen();
    if (workflowId === undefined) return this.#maintenance.single('reclaim');
    assertWorkflowId(workflowId);
    return this.#owner.claimOne(workflowId);
  }

  /** The passes background work runs (maintenance.ts decides when, and in which order). */
  #maintenancePasses(): MaintenancePasses {
    return {
      gates: () => this.#owner.checkGates(),
      renew: () => this.#owner.renew(),
      reclaim: async () => {
        if (this.#state !== 'open') return;
        this.#supervisor.reloadStopped();
        await this.#owner.reclaim();
      },
      pollSignals: () => this.#router.pollSignals(),
      pollUpdates: () => this.#router.pollUpdates(),
      pollResults: (now) => this.#router.pollResults(now),
      fireTimers: (now) => this.#timers.fireDue(now),
      fireSchedules: (now) => this.#schedules.fireDue(now),
      sweepRetention: (now) => this.#purger.sweep(now),
      expireUpdateResponses: (now) => this.#router.expireUpdateResponses(now),
      checkDeadlines: (now) => {
        for (const run of this.#supervisor.runs()) run.checkActivityDeadlines(now);
      },
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // Shutdown and deposition

  shutdown(): Promise<ShutdownReport> {
    if (!this.#shutdown) this.#shutdown = this.#stop();
    return this.#shutdown;
  }

  async [asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  async #stop(): Promise<ShutdownReport> {
    this.#state = 'stopping';
    this.#maintenance.stop();
    this.#timers.stop();
    this.#schedules.stop();
    // Wait for in-flight turns, passes and reactions (a claim may be landing), at most 5 s; the timer is cleared so that it never keeps a
    // process (or a test) alive after the engine stopped.
    let patience: unknown;
    await Promise.race([
      Promise.all([
        this.#supervisor.stopAll('shutdown'),
        ...this.#maintenance.inFlight,
        this.#reactions.drained,
      ]),
      new Promise((resolve) => (patience = this.#clock.setTimeout(() => resolve(undefined), 5_000))),
    ]);
    this.#clock.clearTimeout(patience);
    const { claimsReleased, leaseReleased } = await this.#owner.release();
    this.#unwatch?.();
    this.#releaseLiveness?.();
    this.#state = 'stopped';
    const disposed = new EngineDisposedError(this.id);
    this.#waiters.rejectEverything(disposed);
    this.#updates.rejectEverything(disposed);
    this.#hub.emit({ type: 'engine.shutdown', claimsReleased });
    return { claimsReleased, leaseReleased };
  }

  #leaseLost(epoch: number): void {
    this.#hub.emit({ type: 'lease.lost', epoch });
    this.#warn({
      name: 'WorkflowClaimLostWarning',
      message: `Engine ${this.id} lost the store-wide lease (epoch ${epoch}); it stops driving every workflow.`,
    });
    this.#state = 'deposed';
    void this.#supervisor.stopAll('deposed');
    this.#maintenance.stop();
    this.#timers.stop();
    this.#schedules.stop();
  }

  #assertOpen(allowDeposedReads = false): void {
    if (this.#state === 'open' || this.#state === 'opening') return;
    if (this.#state === 'deposed') {
      if (allowDeposedReads) return;
      throw new EngineLeaseNotHeldError(this.id);
    }
    throw new EngineDisposedError(this.id);
  }

  #warn(warning: EngineWarning): void {
    try {
      this.#options.onWarning(warning);
    } catch {
      // the host's warning handler failing must not break the engine
    }
  }
}

/** Positions and member indexes: non-negative integers. */
function assertIndex(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(`${what} must be a non-negative integer; got ${JSON.stringify(value)}.`);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export type { ClaimHow };
export { workflowTypeOf };
