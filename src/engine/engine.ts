/**
 * `createEngine` and the engine: the composition root, and the public API over the parts (each method checks
 * that the engine is open, then delegates). The `Engine` interface and its contract: engine-api.ts; the parts
 * and their wiring: engine-wiring.ts; query, update, result and operationOutcome: workflow-calls.ts.
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
import type { ActivityLimitInfo, ActivityLimits } from './activity-limits';
import type { Clock } from './clock';
import type { Committer } from './committer';
import { WorkflowDefinitions } from './definitions';
import type { Engine, ShutdownReport, WorkflowHandle } from './engine-api';
import { wireEngine, type EngineState } from './engine-wiring';
import {
  EngineDisposedError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  QueueNotFoundError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
} from './errors';
import type { EngineListener, EngineWarning, EventHub } from './events';
import type { ExternalActivities } from './external-activities';
import { assertRunNumber, assertWorkflowId, uuidFrom } from './ids';
import {
  describePastRun,
  describeWorkflow,
  listClaims,
  listRuns,
  readRecordedHistory,
  listWorkflows,
  readFenceRejections,
  readTimeline,
  type ClaimInfo,
  type ListFilter,
  type ListPage,
  type OperationOutcome,
  type OutcomeOf,
  type RunSummary,
  type WorkflowDescription,
} from './inspect';
import type { Lifecycle, StartOptions } from './lifecycle';
import type { ForkOptions } from './fork';
import type { RecordedHistory } from './replay-check';
import type { Maintenance } from './maintenance';
import type { EngineMetrics, MetricsCounters } from './metrics';
import { resolveOptions, type EngineOptions, type OwnershipMode, type ResolvedOptions } from './options';
import type { ClaimHolder, ClaimHow, Ownership, ReclaimOutcome } from './ownership/ownership';
import type { MintedClaim } from './ownership/transitions';
import { decodeRecord, type FenceRejection, type TimelineEntry } from './records';
import type { Reactions } from './reactions';
import type { ResultWaiterInfo, ResultWaiters } from './result-waiters';
import type { PurgeReport, Purger } from './purge';
import type { Schedules, ScheduleSpecInput } from './schedules/schedules';
import { assertQueueName } from './queues/queue-options';
import type { Queues, QueuePosition, QueueView } from './queues/queues';
import type { ScheduleInfo } from './schedules/records';
import type { RunSupervisor } from './supervisor';
import type { TimerScheduler } from './timer-scheduler';
import type { UpdateCalls } from './update-calls';
import type { WakeRouter } from './wake-router';
import { checkCodecMarker } from './payload-codec';
import { keys } from './keys';
import {
  operationOutcome,
  queryWorkflow,
  readResult,
  requestUpdate,
  updateWithStart,
  storedRun,
  type WorkflowCallsDeps,
} from './workflow-calls';
import {
  assertDefinition,
  workflowTypeOf,
  type AnyWorkflowDefinition,
  type WorkflowInput,
  type WorkflowOutput,
} from './workflow';

export type { Engine, ShutdownReport, WorkflowHandle } from './engine-api';

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
  readonly #hub: EventHub;
  readonly #metrics: MetricsCounters;
  readonly #committer: Committer;
  readonly #owner: Ownership;
  readonly #lifecycle: Lifecycle;
  readonly #waiters: ResultWaiters;
  readonly #updates: UpdateCalls;
  readonly #timers: TimerScheduler;
  readonly #supervisor: RunSupervisor;
  readonly #router: WakeRouter;
  readonly #maintenance: Maintenance;
  readonly #schedules: Schedules;
  readonly #queues: Queues;
  readonly #purger: Purger;
  readonly #activityLimits: ActivityLimits;
  readonly #external: ExternalActivities;
  readonly #reactions: Reactions;
  /** What workflow-calls.ts needs for `query`, `update`, `result()` and `operationOutcome`. */
  readonly #calls: WorkflowCallsDeps;
  readonly #definitions = new WorkflowDefinitions();
  #state: EngineState = 'opening';
  #unwatch: (() => void) | null = null;
  #releaseLiveness: (() => void) | null = null;
  #shutdown: Promise<ShutdownReport> | null = null;

  /** Plain wiring (engine-wiring.ts): every part gets the narrow functions it needs, nothing decides here. */
  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#storage = options.storage;
    this.#clock = options.clock;
    this.ownership = options.ownership;
    this.id = options.engineId ?? uuidFrom(options.random);
    const parts = wireEngine(options, this.id, {
      state: () => this.#state,
      definitions: this.#definitions,
      mayDrive: (type) => this.#mayDrive(type),
      claimed: (workflowId, workflowType, minted, how) =>
        this.#claimedByEnablingWrite(workflowId, workflowType, minted, how),
      leaseLost: (epoch) => this.#leaseLost(epoch),
      warn: (warning) => this.#warn(warning),
    });
    this.#hub = parts.hub;
    this.#metrics = parts.metrics;
    this.#reactions = parts.reactions;
    this.#committer = parts.committer;
    this.#owner = parts.owner;
    this.#waiters = parts.waiters;
    this.#updates = parts.updates;
    this.#lifecycle = parts.lifecycle;
    this.#supervisor = parts.supervisor;
    this.#router = parts.router;
    this.#timers = parts.timers;
    this.#schedules = parts.schedules;
    this.#queues = parts.queues;
    this.#external = parts.external;
    this.#purger = parts.purger;
    this.#activityLimits = parts.activityLimits;
    this.#maintenance = parts.maintenance;
    this.#calls = {
      engineId: this.id,
      storage: this.#storage,
      writer: parts.writer,
      clock: this.#clock,
      random: options.random,
      maxPayloadBytes: options.maxPayloadBytes,
      mapStack: options.mapStack,
      tracing: parts.tracing,
      workflowInterceptors: options.workflowInterceptors,
      ownership: this.#owner,
      waiters: this.#waiters,
      updates: this.#updates,
      supervisor: this.#supervisor,
      reactions: this.#reactions,
      definition: (type, version) => this.#definitions.get(type, version),
      assertOpen: (allowDeposedReads) => this.#assertOpen(allowDeposedReads),
    };
    for (const definition of options.workflows) this.register(definition);
    if (options.onEvent) this.#hub.subscribe(options.onEvent);
  }

  async open(): Promise<void> {
    await checkCodecMarker(this.#storage, this.#options.codec ?? null, this.#clock.now());
    await this.#owner.open();
    if (this.#options.liveness) this.#releaseLiveness = await this.#options.liveness.hold(this.id);
    if (this.#storage.capabilities.changeFeed && this.#storage.watch)
      this.#unwatch = this.#storage.watch('', (changed) => this.#router.changed(changed));
    this.#state = 'open';
    if (this.#options.backgroundTasks === 'automatic') this.#maintenance.start();
    if (this.#options.recover) await this.recoverAll();
    if (this.#options.backgroundTasks === 'automatic') void this.#timers.fireDue();
    this.#schedules.open();
    if (this.#options.claimWorkflows) await this.#queues.publish();
    for (const name of this.#queues.declarations.keys()) this.#queues.kick(name);
  }

  // -------------------------------------------------------------------------------------------------------
  // Definitions

  register(definition: AnyWorkflowDefinition): void {
    this.#assertOpen(true);
    this.#definitions.register(definition);
  }

  definitions(): AnyWorkflowDefinition[] {
    return this.#definitions.all();
  }

  /** This engine may run workflows of `type`: it has a definition for it and is not an observer. */
  #mayDrive(type: string): boolean {
    return this.#options.claimWorkflows && this.#definitions.has(type);
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
      if (this.#definitions.get(workflow.name, workflow.version) !== workflow) this.register(workflow);
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
      result: () => readResult(this.#calls, workflowId, run) as Promise<O>,
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
      if (this.#definitions.get(workflow.name, workflow.version) !== workflow) this.register(workflow);
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
      this.#supervisor.get(id)?.signalsArrived();
    }
    return { ...this.handle<WorkflowOutput<D>>(id, { run }), started };
  }

  async updateWithStart<D extends AnyWorkflowDefinition, T = unknown>(
    workflow: D | string,
    input: WorkflowInput<D>,
    updateName: string,
    arg: unknown,
    options: StartOptions & { id: string; timeoutMs?: number },
  ): Promise<{ result: T; started: boolean; handle: WorkflowHandle<WorkflowOutput<D>> }> {
    this.#assertOpen();
    if (typeof workflow !== 'string') {
      assertDefinition(workflow);
      if (this.#definitions.get(workflow.name, workflow.version) !== workflow) this.register(workflow);
    }
    const type = typeof workflow === 'string' ? workflow : workflow.name;
    const definition = typeof type === 'string' ? this.#definitions.get(type) : undefined;
    if (!definition) throw new WorkflowNotRegisteredError(String(type));
    if (typeof options !== 'object' || options === null || options.id === undefined)
      throw new InvalidOptionsError(
        'updateWithStart needs { id }: the update goes to the workflow of that id, started if it is not running.',
      );
    const { timeoutMs = 60_000, ...startOptions } = options;
    const { run, started, result } = await updateWithStart<T>(
      this.#calls,
      async (request) => {
        const outcome = await this.#lifecycle.startWithUpdate(type, input, request, startOptions);
        if (outcome.started) this.#metrics.workflowsStarted++;
        return outcome;
      },
      options.id,
      definition,
      updateName,
      arg,
      timeoutMs,
    );
    return { result, started, handle: this.handle<WorkflowOutput<D>>(options.id, { run }) };
  }

  async fork<O = unknown>(workflowId: string, options: ForkOptions = {}): Promise<WorkflowHandle<O>> {
    this.#assertOpen();
    const { id, run } = await this.#lifecycle.fork(workflowId, options);
    this.#metrics.workflowsStarted++;
    return this.handle<O>(id, { run });
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
    this.#supervisor.get(workflowId)?.signalsArrived();
  }

  query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T> {
    return queryWorkflow<T>(this.#calls, workflowId, name, arg);
  }

  update<T = unknown>(
    workflowId: string,
    name: string,
    arg?: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    return requestUpdate<T>(this.#calls, workflowId, name, arg, options);
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
    const page = await listWorkflows(this.#storage, filter, (name) => this.#definitions.attributeType(name));
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

  async history(workflowId: string, options: { run?: number } = {}): Promise<RecordedHistory> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    if (options.run !== undefined) assertRunNumber(options.run);
    return readRecordedHistory(this.#storage, workflowId, options.run);
  }

  async timeline(
    workflowId: string,
    options: { run?: number; after?: number; limit?: number } = {},
  ): Promise<TimelineEntry[]> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    if (options.run !== undefined) assertRunNumber(options.run);
    const run = await storedRun(this.#storage, workflowId, options.run);
    return readTimeline(this.#storage, workflowId, { ...options, run });
  }

  operationOutcome(workflowId: string, of: OutcomeOf & { run?: number }): Promise<OperationOutcome | null> {
    return operationOutcome(this.#calls, workflowId, of);
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
      activityWaits: m.activityWaits,
      storageTransactions: this.#committer.stats.transactions,
      groupedTransactions: this.#committer.stats.groupedTransactions,
      groupedBatches: this.#committer.stats.groupedBatches,
      scheduleStarts: m.scheduleStarts,
      scheduleSlotConflicts: m.scheduleSlotConflicts,
      runsPurged: m.runsPurged,
      runsContinued: m.runsContinued,
    };
  }

  activityLimits(): Promise<ActivityLimitInfo[]> {
    this.#assertOpen(true);
    return this.#activityLimits.view();
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
      const busy = [
        ...this.#supervisor.busy(activities),
        ...this.#maintenance.inFlight,
        ...this.#queues.inFlight,
      ];
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
  // Queues (src/engine/queues): read-only views

  queues(): Promise<QueueView[]> {
    this.#assertOpen(true);
    return this.#queues.list();
  }

  async describeQueue(name: string): Promise<QueueView> {
    this.#assertOpen(true);
    assertQueueName(name, 'describeQueue: the queue name');
    const view = await this.#queues.describe(name);
    if (!view) throw new QueueNotFoundError(name);
    return view;
  }

  async queuePosition(workflowId: string): Promise<QueuePosition | null> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    const raw = await this.#storage.get(keys.record(workflowId));
    if (!raw) throw new WorkflowNotFoundError(workflowId);
    return this.#queues.position(decodeRecord(keys.record(workflowId), raw));
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
    this.#queues.shutdown();
    // Wait for in-flight turns, passes and reactions (a claim may be landing), at most 5 s; the timer is cleared so that it never keeps a
    // process (or a test) alive after the engine stopped.
    let patience: unknown;
    await Promise.race([
      Promise.all([
        // Stopping the runs aborts their attempts, which give their activity slots back.
        this.#supervisor.stopAll('shutdown').then(() => this.#activityLimits.drained()),
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

export type { ClaimHow };
export { workflowTypeOf };
