/**
 * `createEngine` and the engine: the composition root that wires storage, ownership, runs, timers, waiters
 * and background work together, and the public API over them.
 *
 * What the engine guarantees (see engine.md and ownership.md for the full contract):
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
import type { Clock } from './clock';
import { normalizePayload, type Json } from './codec';
import { Committer } from './committer';
import {
  CorruptRecordError,
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
import { EventHub, type EngineEvent, type EngineListener, type EngineWarning, type WakeKind } from './events';
import { assertHandlerName, assertWorkflowId, uuidFrom } from './ids';
import {
  describeWorkflow,
  listClaims,
  listWorkflows,
  readFenceRejections,
  readTimeline,
  type ClaimInfo,
  type ListFilter,
  type ListPage,
  type WorkflowDescription,
} from './inspect';
import { keys, workflowIdOf } from './keys';
import { Lifecycle, type StartOptions } from './lifecycle';
import { Maintenance, type MaintenancePasses } from './maintenance';
import { MetricsCounters, type EngineMetrics } from './metrics';
import { resolveOptions, type EngineOptions, type OwnershipMode, type ResolvedOptions } from './options';
import { ClaimManager, type ClaimHow } from './ownership/claim-manager';
import { ClaimRegistry } from './ownership/claims';
import { FencedWriter } from './ownership/fenced-write';
import { GlobalLease } from './ownership/global-lease';
import { checkCapability, checkModeMarker } from './ownership/mode-marker';
import type { MintedClaim } from './ownership/transitions';
import {
  decodeCheckpoint,
  decodeRecord,
  decodeUpdateResponse,
  isTerminal,
  type FenceRejection,
  type TimelineEntry,
  type TimerRecord,
  type UpdateRequest,
  type WorkflowRecord,
} from './records';
import { settleFromRecord, ResultWaiters, type ResultWaiterInfo } from './result-waiters';
import { WorkflowRun, type DropReason, type RunHost } from './run/workflow-run';
import { TimerScheduler } from './timer-scheduler';
import { UpdateCalls } from './update-calls';
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
  /** Resolves with the result, or rejects with WorkflowFailedError / Cancelled / Terminated / TimedOut. */
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
   * batch. Rejects with WorkflowAlreadyExistsError for an existing unfinished id.
   *
   * @example
   * const handle = await engine.start(orderWorkflow, { orderId: 'A-1', amount: 42 }, { id: 'order-A-1' });
   * const result = await handle.result();
   */
  start<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input?: WorkflowInput<D>,
    options?: StartOptions,
  ): Promise<WorkflowHandle<WorkflowOutput<D>>>;
  handle<O = unknown>(workflowId: string): WorkflowHandle<O>;
  signal(workflowId: string, name: string, payload?: unknown): Promise<void>;
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
  describe(workflowId: string): Promise<WorkflowDescription>;
  list(filter?: ListFilter): Promise<ListPage>;
  timeline(workflowId: string, options?: { after?: number; limit?: number }): Promise<TimelineEntry[]>;
  /** Resumes every non-terminal workflow this engine can own; resolves with how many it now drives. */
  recoverAll(): Promise<number>;
  /** One host-driven pass of all background work (see ownership.md for the order). */
  runMaintenance(now?: number): Promise<void>;
  /**
   * Only the reclaim pass, now: for a host that has just learnt an engine died and wants its workflows moved
   * without waiting for the next pass (outside workflow-lease it recovers what this engine can drive).
   * Shares a pass already in flight.
   */
  reclaim(): Promise<void>;
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
   * Resolves when no turn, load or maintenance pass is in progress on this engine, and (unless
   * `activities: false`) no activity is running.
   */
  idle(options?: { activities?: boolean }): Promise<void>;
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
  checkCapability(resolved.storage, resolved.ownership);
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
  readonly #registry: ClaimRegistry | null;
  readonly #lease: GlobalLease | null;
  readonly #writer: FencedWriter;
  readonly #claims: ClaimManager | null;
  readonly #lifecycle: Lifecycle;
  readonly #waiters: ResultWaiters;
  readonly #updates: UpdateCalls;
  readonly #timers: TimerScheduler;
  readonly #definitions = new Map<string, Map<number, AnyWorkflowDefinition>>();
  readonly #runs = new Map<string, WorkflowRun>();
  readonly #loading = new Map<string, Promise<void>>();
  readonly #reloads = new Set<string>();
  readonly #lostRaces = new Map<string, number>();
  readonly #corrupt = new Map<string, { key: string; message: string }>();
  readonly #runHost: RunHost;
  #state: 'opening' | 'open' | 'stopping' | 'stopped' | 'deposed' = 'opening';
  #unwatch: (() => void) | null = null;
  #releaseLiveness: (() => void) | null = null;
  readonly #maintenance: Maintenance;
  #shutdown: Promise<ShutdownReport> | null = null;
  #pendingHolderChecks = new Set<string>();

  constructor(options: ResolvedOptions) {
    this.#options = options;
    this.#storage = options.storage;
    this.#clock = options.clock;
    this.ownership = options.ownership;
    this.id = options.engineId ?? uuidFrom(options.random);
    const emit = (event: EngineEvent) => this.#hub.emit(event);
    const warn = (warning: EngineWarning) => {
      try {
        options.onWarning(warning);
      } catch {
        // the host's warning handler failing must not break the engine
      }
    };
    this.#committer = new Committer(this.#storage);
    this.#registry =
      options.ownership === 'workflow-lease'
        ? new ClaimRegistry({ renewIntervalMs: options.renewIntervalMs, ttlMs: options.ttlMs })
        : null;
    this.#lease =
      options.ownership === 'lease'
        ? new GlobalLease({
            storage: this.#storage,
            commit: (conditions, operations) => this.#committer.commit(conditions, operations),
            engineId: this.id,
            clock: this.#clock,
            ttlMs: options.ttlMs,
            renewIntervalMs: options.renewIntervalMs,
            waitTimeoutMs: options.leaseWaitTimeoutMs,
            liveness: options.liveness,
            onLost: (epoch) => this.#leaseLost(epoch),
          })
        : null;
    this.#writer = new FencedWriter({
      storage: this.#storage,
      committer: this.#committer,
      mode: options.ownership,
      engineId: this.id,
      clock: this.#clock,
      claims: this.#registry,
      lease: this.#lease,
      metrics: this.#metrics,
      emit,
      warn,
      onDeposed: (workflowId) => this.#runs.get(workflowId)?.drop('deposed'),
    });
    this.#claims = this.#registry
      ? new ClaimManager({
          storage: this.#storage,
          writer: this.#writer,
          claims: this.#registry,
          clock: this.#clock,
          engineId: this.id,
          ttlMs: options.ttlMs,
          renewIntervalMs: options.renewIntervalMs,
          reclaimBatchSize: options.reclaimBatchSize,
          liveness: options.liveness,
          metrics: this.#metrics,
          emit,
          warn,
          isEligible: (type) => this.#mayDrive(type),
          onClaimed: (workflowId, how) => this.#drive(workflowId, how === 'takeover' ? null : 'queued-start'),
          onLost: (workflowId) => this.#runs.get(workflowId)?.drop('claim-lost'),
          onCorrupt: (workflowId, error) => this.#markCorrupt(workflowId, error),
          isStopping: () => this.#state !== 'open' && this.#state !== 'opening',
        })
      : null;
    this.#runHost = {
      engineId: this.id,
      storage: this.#storage,
      writer: this.#writer,
      clock: this.#clock,
      random: options.random,
      maxPayloadBytes: options.maxPayloadBytes,
      manualTimers: options.backgroundTasks === 'manual',
      releasesClaims: options.ownership === 'workflow-lease',
      metrics: this.#metrics,
      emit,
      warn,
      heldEpoch: (workflowId) => (this.#registry ? this.#registry.get(workflowId)?.epoch : 0),
      guardWake: (workflowId, kind, parkedEpoch) =>
        this.#claims ? this.#claims.guardWake(workflowId, kind, parkedEpoch) : Promise.resolve(true),
      prepareChild: (request) => this.#lifecycle.prepareChild(request),
      timerArmed: (dueAt) => this.#timers.notify(dueAt),
      runFinished: (run, record) => this.#runFinished(run, record),
      runDropped: (run, reason, error) => this.#runDropped(run, reason, error),
    };
    this.#lifecycle = new Lifecycle({
      storage: this.#storage,
      writer: this.#writer,
      claims: this.#claims,
      clock: this.#clock,
      random: options.random,
      engineId: this.id,
      mode: options.ownership,
      maxPayloadBytes: options.maxPayloadBytes,
      definition: (type, version) => this.#definition(type, version),
      claimed: (workflowId, workflowType, minted, how) =>
        this.#claimedByEnablingWrite(workflowId, workflowType, minted, how),
      claimsOnStart: options.claimWorkflows,
      rotated: (workflowId, record) => this.#rotated(workflowId, record),
      timerArmed: (dueAt) => this.#timers.notify(dueAt),
    });
    this.#waiters = new ResultWaiters({
      storage: this.#storage,
      clock: this.#clock,
      metrics: this.#metrics,
      emit,
      keepPendingOnReadError: options.ownership !== 'none',
    });
    this.#updates = new UpdateCalls({
      storage: this.#storage,
      clock: this.#clock,
      manualTimers: options.backgroundTasks === 'manual',
      commit: (conditions, operations) => this.#committer.commit(conditions, operations),
    });
    this.#timers = new TimerScheduler({
      storage: this.#storage,
      clock: this.#clock,
      automatic: options.backgroundTasks === 'automatic',
      fire: (key, timer) => this.#timerDue(key, timer),
      onError: (error) =>
        warn({
          name: 'StorageWarning',
          message: `Durable timer scan failed (will retry): ${describe(error)}`,
        }),
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
    await checkModeMarker(
      this.#storage,
      (conditions, operations) => this.#writer.writeOwnership(conditions, operations),
      this.ownership,
      this.#clock.now(),
    );
    if (this.#lease) {
      const held = await this.#lease.acquire();
      this.#hub.emit({ type: 'lease.acquired', epoch: held.epoch });
    }
    if (this.#options.liveness) this.#releaseLiveness = await this.#options.liveness.hold(this.id);
    if (this.#storage.capabilities.changeFeed && this.#storage.watch)
      this.#unwatch = this.#storage.watch('', (changed) => this.#changed(changed));
    this.#state = 'open';
    if (this.#options.backgroundTasks === 'automatic') this.#maintenance.start();
    if (this.#options.recover) await this.recoverAll();
    if (this.#options.backgroundTasks === 'automatic') void this.#timers.fireDue();
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
  ): Promise<WorkflowHandle<WorkflowOutput<D>>> {
    this.#assertOpen();
    if (typeof workflow !== 'string') {
      assertDefinition(workflow);
      if (this.#definition(workflow.name, workflow.version) !== workflow) this.register(workflow);
    }
    const type = typeof workflow === 'string' ? workflow : workflow.name;
    if (typeof type !== 'string' || type.length === 0)
      throw new InvalidArgumentError('start needs a workflow definition or a registered workflow type name.');
    const id = await this.#lifecycle.start(type, input, options ?? {});
    this.#metrics.workflowsStarted++;
    return this.handle<WorkflowOutput<D>>(id);
  }

  handle<O = unknown>(workflowId: string): WorkflowHandle<O> {
    assertWorkflowId(workflowId);
    return {
      workflowId,
      result: () => this.#result(workflowId) as Promise<O>,
      describe: () => this.describe(workflowId),
      signal: (name, payload) => this.signal(workflowId, name, payload),
      query: (name, arg) => this.query(workflowId, name, arg),
      update: (name, arg, options) => this.update(workflowId, name, arg, options),
      cancel: (reason) => this.cancel(workflowId, reason),
      terminate: (reason) => this.terminate(workflowId, reason),
      suspend: () => this.suspend(workflowId),
      resume: () => this.resume(workflowId),
      timeline: () => this.timeline(workflowId),
    };
  }

  async #result(workflowId: string): Promise<unknown> {
    this.#assertOpen();
    let raw: string | null;
    try {
      raw = await this.#storage.get(keys.record(workflowId));
    } catch (error) {
      if (this.ownership === 'none') throw error;
      return this.#waitForResult(workflowId);
    }
    if (!raw) throw new WorkflowNotFoundError(workflowId);
    const record = decodeRecord(keys.record(workflowId), raw);
    if (isTerminal(record.status)) {
      const outcome = settleFromRecord(record);
      if (outcome.ok) return outcome.value;
      throw outcome.error;
    }
    return this.#waitForResult(workflowId);
  }

  #waitForResult(workflowId: string): Promise<unknown> {
    const waiting = this.#waiters.wait(workflowId);
    // It may have finished between the read and the registration: look once more.
    void this.#waiters.recheck(workflowId).catch(() => undefined);
    return waiting;
  }

  async signal(workflowId: string, name: string, payload?: unknown): Promise<void> {
    this.#assertOpen();
    await this.#lifecycle.signal(workflowId, name, payload);
    const run = this.#runs.get(workflowId);
    if (run?.waitsOnSignals) run.deliver({ type: 'signals' });
  }

  async query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T> {
    this.#assertOpen();
    assertWorkflowId(workflowId);
    assertHandlerName(name, 'Query');
    const [recordRaw, checkpointRaw] = await this.#storage.getMany([
      keys.record(workflowId),
      keys.checkpoint(workflowId),
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
    const state = checkpointRaw ? decodeCheckpoint(keys.checkpoint(workflowId), checkpointRaw).state : {};
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
    this.#runs.get(workflowId)?.deliver({ type: 'updates' });
    return waiting as Promise<T>;
  }

  async cancel(workflowId: string, reason?: string): Promise<void> {
    this.#assertOpen();
    const outcome = await this.#lifecycle.cancel(workflowId, reason);
    if (outcome === 'requested') this.#runs.get(workflowId)?.deliver({ type: 'cancel' });
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

  async describe(workflowId: string): Promise<WorkflowDescription> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    const description = await describeWorkflow(this.#storage, workflowId);
    if (!description) throw new WorkflowNotFoundError(workflowId);
    const corrupt = this.#corrupt.get(workflowId);
    return corrupt && !description.corrupt ? { ...description, corrupt } : description;
  }

  async list(filter: ListFilter = {}): Promise<ListPage> {
    this.#assertOpen(true);
    const page = await listWorkflows(this.#storage, filter);
    return {
      ...page,
      items: page.items.map((item) =>
        this.#corrupt.has(item.workflowId) && !item.corrupt
          ? { ...item, corrupt: this.#corrupt.get(item.workflowId)! }
          : item,
      ),
    };
  }

  async timeline(
    workflowId: string,
    options: { after?: number; limit?: number } = {},
  ): Promise<TimelineEntry[]> {
    this.#assertOpen(true);
    assertWorkflowId(workflowId);
    if ((await this.#storage.get(keys.record(workflowId))) === null)
      throw new WorkflowNotFoundError(workflowId);
    return readTimeline(this.#storage, workflowId, options);
  }

  async recoverAll(): Promise<number> {
    this.#assertOpen();
    if (this.#claims) {
      await this.#claims.reclaim({ full: true });
    } else {
      let after: string | undefined;
      for (;;) {
        const page = await this.#storage.scan(keys.statusIndexPrefix('running'), {
          ...(after ? { after } : {}),
          limit: 500,
        });
        for (const { key, value } of page) {
          const workflowId = workflowIdOf(key, keys.statusIndexPrefix('running'));
          if (
            !workflowId ||
            this.#runs.has(workflowId) ||
            this.#loading.has(workflowId) ||
            this.#corrupt.has(workflowId)
          )
            continue;
          if (!this.#mayDrive(value)) continue;
          this.#drive(workflowId, null);
        }
        if (page.length < 500) break;
        after = page[page.length - 1]!.key;
      }
    }
    await Promise.all(this.#loading.values());
    return this.ownedWorkflows().length;
  }

  subscribe(listener: EngineListener): () => void {
    return this.#hub.subscribe(listener);
  }

  metrics(): EngineMetrics {
    const m = this.#metrics;
    return {
      claimAttempts: { ...m.claimAttempts },
      claimsHeld: this.#registry?.size ?? 0,
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
    };
  }

  claims(): Promise<ClaimInfo[]> {
    return listClaims(this.#storage);
  }

  ownedWorkflows(): string[] {
    if (this.#registry) return this.#registry.all().map((claim) => claim.workflowId);
    return [...this.#runs.keys()];
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
      const busy = [...this.#runs.values()].filter((run) => (activities ? run.hasWork : run.isTurning));
      const loads = [...this.#loading.values()];
      const maintenance = this.#maintenance.running;
      if (busy.length === 0 && loads.length === 0 && !maintenance) return;
      await Promise.race([
        ...busy.map((run) => (activities ? run.whenIdle() : run.whenQuiet())),
        ...loads,
        ...(maintenance ? [maintenance] : []),
      ]);
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Runs

  /** Drives a workflow here from storage: evicts any stale local context, loads and replays it. */
  #drive(workflowId: string, wake: WakeKind | null): void {
    if (this.#state !== 'open' && this.#state !== 'opening') return;
    // One run per workflow per engine: a stale run is dropped and its in-flight turn (a commit may be under
    // way) finishes before the workflow is loaded again, so two runs of one workflow never commit at once.
    const stale = this.#runs.get(workflowId);
    stale?.drop('evicted');
    const previous = Promise.all([this.#loading.get(workflowId), stale?.whenQuiet()]);
    const loading = previous
      .then(() => this.#load(workflowId, wake))
      .finally(() => {
        if (this.#loading.get(workflowId) === loading) this.#loading.delete(workflowId);
      });
    this.#loading.set(workflowId, loading);
  }

  async #load(workflowId: string, wake: WakeKind | null): Promise<void> {
    if (this.#state !== 'open' && this.#state !== 'opening') return;
    if (this.#registry && !this.#registry.has(workflowId)) return;
    try {
      const run = await WorkflowRun.load(this.#runHost, workflowId, (type) => [
        ...(this.#definitions.get(type)?.values() ?? []),
      ]);
      if (!run) {
        await this.#claims?.release(workflowId);
        return;
      }
      if (this.#state !== 'open' && this.#state !== 'opening') return;
      if (this.#registry && !this.#registry.has(workflowId)) return;
      this.#runs.get(workflowId)?.drop('evicted');
      this.#runs.set(workflowId, run);
      run.deliver({ type: 'resync', wake });
    } catch (error) {
      if (error instanceof CorruptRecordError) {
        this.#markCorrupt(workflowId, error);
        await this.#claims?.release(workflowId).catch(() => false);
      } else {
        this.#reloads.add(workflowId);
        this.#warn({
          name: 'StorageWarning',
          workflowId,
          message: `Loading workflow '${workflowId}' failed (will retry): ${describe(error)}`,
        });
      }
    }
  }

  #markCorrupt(workflowId: string, error: CorruptRecordError): void {
    if (this.#corrupt.has(workflowId)) return;
    this.#corrupt.set(workflowId, { key: error.key, message: error.message });
    this.#hub.emit({ type: 'workflow.corrupt', workflowId, key: error.key, message: error.message });
    this.#warn({ name: 'WorkflowCorruptWarning', workflowId, message: error.message });
  }

  #claimedByEnablingWrite(
    workflowId: string,
    workflowType: string,
    minted: MintedClaim | null,
    how: 'start' | 'resume' | 'acquire',
  ): void {
    if (minted) this.#claims!.registerClaim(workflowId, minted, how);
    if (how === 'resume') this.#hub.emit({ type: 'workflow.resumed', workflowId });
    else this.#hub.emit({ type: 'workflow.started', workflowId, workflowType, status: 'running' });
    if (this.#state !== 'open') {
      if (minted) void this.#claims!.release(workflowId);
      return;
    }
    this.#drive(workflowId, 'queued-start');
  }

  #runFinished(run: WorkflowRun, record: WorkflowRecord): void {
    if (this.#runs.get(run.id) === run) this.#runs.delete(run.id);
    this.#lostRaces.delete(run.id);
    this.#claims?.forget(run.id);
    this.#metrics.workflowsFinished++;
    this.#hub.emit(finishedEvent(record));
    this.#waiters.settleLocal(record);
    void this.#updates.workflowChanged(record.id);
    this.#afterWorkflowEnded(record, run.checkpoint.linkedChildren);
  }

  #afterWorkflowEnded(record: WorkflowRecord, linkedChildren: string[]): void {
    if (record.parent)
      this.#runs.get(record.parent.id)?.deliver({ type: 'child-settled', childId: record.id, record });
    if (isTerminal(record.status))
      for (const childId of linkedChildren)
        void this.#lifecycle
          .rotate(childId, 'terminated', `parent '${record.id}' ended (${record.status})`)
          .catch(() => undefined);
  }

  #runDropped(run: WorkflowRun, reason: DropReason, error: unknown): void {
    if (this.#runs.get(run.id) === run) this.#runs.delete(run.id);
    if (error && reason === 'storage-error')
      this.#warn({
        name: 'StorageWarning',
        workflowId: run.id,
        message: `Workflow '${run.id}' stopped on a storage error and will be reloaded: ${describe(error)}`,
      });
    const stillOurs = this.#registry ? this.#registry.has(run.id) : this.#state === 'open';
    if (!stillOurs || this.#state !== 'open') return;
    if (reason === 'lost-race') {
      const count = (this.#lostRaces.get(run.id) ?? 0) + 1;
      this.#lostRaces.set(run.id, count);
      if (count <= 3) this.#drive(run.id, null);
      else this.#reloads.add(run.id);
    } else if (reason === 'storage-error') {
      this.#reloads.add(run.id);
    }
  }

  #rotated(workflowId: string, record: WorkflowRecord): void {
    const run = this.#runs.get(workflowId);
    run?.drop('rotated');
    if (this.#registry?.has(workflowId)) this.#registry.dispatch(workflowId, { type: 'released' });
    const event: EngineEvent =
      record.status === 'suspended' ? { type: 'workflow.suspended', workflowId } : finishedEvent(record);
    this.#hub.emit(event);
    if (isTerminal(record.status)) {
      this.#waiters.settleLocal(record);
      void this.#updates.workflowChanged(workflowId);
      this.#afterWorkflowEnded(record, run?.checkpoint.linkedChildren ?? []);
      if (!run) void this.#terminateLinkedChildren(workflowId, record);
    }
  }

  async #terminateLinkedChildren(workflowId: string, record: WorkflowRecord): Promise<void> {
    try {
      const raw = await this.#storage.get(keys.checkpoint(workflowId));
      const linked = raw ? decodeCheckpoint(keys.checkpoint(workflowId), raw).linkedChildren : [];
      for (const childId of linked)
        await this.#lifecycle
          .rotate(childId, 'terminated', `parent '${workflowId}' ended (${record.status})`)
          .catch(() => undefined);
    } catch {
      // best effort
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Timers

  async #timerDue(key: string, timer: TimerRecord | null): Promise<void> {
    if (this.#state !== 'open') return;
    const workflowId = timer?.workflowId;
    const collect = () =>
      this.#writer.write(null, [], [{ type: 'delete', key }], 'collect a stale timer').then(() => undefined);
    if (!workflowId) return void (await collect());
    if (timer.purpose === 'start') {
      const started = await this.#lifecycle.startPending(workflowId).catch(() => false);
      if (!started) await this.#collectIfStale(key, workflowId, timer);
      return;
    }
    if (timer.purpose === 'execution') {
      try {
        const rotated = await this.#lifecycle.rotate(workflowId, 'timed-out', 'execution timeout');
        if (!rotated) await this.#collectIfStale(key, workflowId, timer);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) await collect();
      }
      return;
    }
    const run = this.#runs.get(workflowId);
    if (run?.isLive && run.record.run === timer.run) {
      run.deliver({ type: 'timer', key });
      return;
    }
    await this.#collectIfStale(key, workflowId, timer);
  }

  /** Collects a timer whose workflow is finished, suspended, missing or on another run; keeps the rest. */
  async #collectIfStale(key: string, workflowId: string, timer: TimerRecord): Promise<void> {
    const raw = await this.#storage.get(keys.record(workflowId));
    let stale = raw === null;
    if (raw) {
      try {
        const record = decodeRecord(keys.record(workflowId), raw);
        stale =
          record.run !== timer.run ||
          isTerminal(record.status) ||
          record.status === 'suspended' ||
          (record.status === 'running' && timer.purpose === 'start');
        if (
          !stale &&
          record.status === 'running' &&
          !this.#registry &&
          !this.#runs.has(workflowId) &&
          this.#mayDrive(record.type)
        )
          this.#drive(workflowId, null);
      } catch {
        stale = false; // leave it for inspection
      }
    }
    if (stale) await this.#writer.write(null, [], [{ type: 'delete', key }], 'collect a stale timer');
  }

  // -------------------------------------------------------------------------------------------------------
  // Change feed

  #changed(changed: string[]): void {
    if (this.#state !== 'open') return;
    for (const key of changed) {
      if (key.startsWith(keys.recordPrefix)) {
        const workflowId = workflowIdOf(key, keys.recordPrefix);
        if (!workflowId) continue;
        void this.#waiters.recordChanged(workflowId).catch(() => undefined);
        void this.#updates.workflowChanged(workflowId).catch(() => undefined);
        void this.#childRecordChanged(workflowId);
        if (this.#claims && !this.#registry!.has(workflowId)) this.#checkHolderSoon(workflowId);
      } else if (key.startsWith(keys.signalsPrefix)) {
        const run = this.#runs.get(workflowIdOf(key, keys.signalsPrefix) ?? '');
        if (run?.waitsOnSignals) run.deliver({ type: 'signals' });
      } else if (key.startsWith(keys.updateRequestsPrefix)) {
        this.#runs.get(workflowIdOf(key, keys.updateRequestsPrefix) ?? '')?.deliver({ type: 'updates' });
      } else if (key.startsWith(keys.updateResponsesPrefix)) {
        void this.#updates.responseWritten(key).catch(() => undefined);
      } else if (key.startsWith(keys.cancelRequestsPrefix)) {
        this.#runs.get(workflowIdOf(key, keys.cancelRequestsPrefix) ?? '')?.deliver({ type: 'cancel' });
      } else if (key.startsWith(keys.ownerHoldersPrefix) && this.#claims) {
        const workflowId = workflowIdOf(key, keys.ownerHoldersPrefix);
        if (workflowId && !this.#registry!.has(workflowId)) this.#checkHolderSoon(workflowId);
      } else if (key.startsWith(keys.timersPrefix)) {
        const dueAt = Number(key.slice(keys.timersPrefix.length, keys.timersPrefix.length + 15));
        if (Number.isFinite(dueAt)) this.#timers.notify(dueAt);
      }
    }
  }

  /** A parent waiting on this child, driven here, learns the child finished (through its wake guard). */
  async #childRecordChanged(childId: string): Promise<void> {
    const parents: WorkflowRun[] = [];
    for (const run of this.#runs.values()) if (run.awaitsChild(childId)) parents.push(run);
    if (parents.length === 0) return;
    try {
      const raw = await this.#storage.get(keys.record(childId));
      if (!raw) return;
      const record = decodeRecord(keys.record(childId), raw);
      if (isTerminal(record.status))
        for (const parent of parents) parent.deliver({ type: 'child-settled', childId, record });
    } catch {
      // the poll will find it
    }
  }

  /** Holder keys changed elsewhere: the ones now deleted are reclaimed at once (graceful handoff). */
  #checkHolderSoon(workflowId: string): void {
    this.#pendingHolderChecks.add(workflowId);
    if (this.#pendingHolderChecks.size > 1) return;
    queueMicrotask(() => {
      const ids = [...this.#pendingHolderChecks];
      this.#pendingHolderChecks.clear();
      void this.#storage
        .getMany(ids.map((id) => keys.ownerHolder(id)))
        .then((holders) => {
          ids.forEach((id, index) => {
            if (holders[index] === null) void this.#claims!.reclaimOne(id).catch(() => undefined);
          });
        })
        .catch(() => undefined);
    });
  }

  // -------------------------------------------------------------------------------------------------------
  // Background work

  async runMaintenance(now?: number): Promise<void> {
    this.#assertOpen();
    return this.#maintenance.run(now);
  }

  async reclaim(): Promise<void> {
    this.#assertOpen();
    return this.#maintenance.single('reclaim');
  }

  /** The passes background work runs (maintenance.ts decides when, and in which order). */
  #maintenancePasses(): MaintenancePasses {
    return {
      gates: async () => {
        await checkModeMarker(
          this.#storage,
          (conditions, operations) => this.#writer.writeOwnership(conditions, operations),
          this.ownership,
          this.#clock.now(),
        );
      },
      renew: async () => {
        if (this.#claims) await this.#claims.renewAll();
        else if (this.#lease) await this.#lease.renew().catch(() => undefined);
      },
      reclaim: async () => {
        if (this.#state !== 'open') return;
        for (const workflowId of [...this.#reloads]) {
          this.#reloads.delete(workflowId);
          if ((this.#registry ? this.#registry.has(workflowId) : true) && !this.#runs.get(workflowId)?.isLive)
            this.#drive(workflowId, null);
        }
        if (this.#claims) await this.#claims.reclaim();
        else await this.recoverAll();
      },
      pollSignals: async () => {
        if (this.#runs.size === 0) return;
        const waiting = new Set(
          [...this.#runs.values()].filter((run) => run.waitsOnSignals).map((run) => run.id),
        );
        if (waiting.size > 0) {
          const signals = await this.#storage.scan(keys.signalsPrefix, { limit: 1000 });
          const ids = new Set(signals.map(({ key }) => workflowIdOf(key, keys.signalsPrefix)));
          for (const id of waiting) if (ids.has(id)) this.#runs.get(id)?.deliver({ type: 'signals' });
        }
        const cancels = await this.#storage.scan(keys.cancelRequestsPrefix, { limit: 1000 });
        for (const { key } of cancels)
          this.#runs.get(workflowIdOf(key, keys.cancelRequestsPrefix) ?? '')?.deliver({ type: 'cancel' });
      },
      pollUpdates: async () => {
        if (this.#runs.size === 0) return;
        const requests = await this.#storage.scan(keys.updateRequestsPrefix, { limit: 1000 });
        const ids = new Set(requests.map(({ key }) => workflowIdOf(key, keys.updateRequestsPrefix)));
        for (const id of ids) if (id) this.#runs.get(id)?.deliver({ type: 'updates' });
      },
      pollResults: async (now) => {
        await this.#waiters.poll();
        await this.#updates.poll(now);
        const awaited = new Set([...this.#runs.values()].flatMap((run) => run.awaitedChildren));
        for (const childId of awaited) await this.#childRecordChanged(childId);
      },
      fireTimers: (now) => this.#timers.fireDue(now),
      expireUpdateResponses: async (now) => {
        const responses = await this.#storage.scan(keys.updateResponsesPrefix, { limit: 500 });
        const expired = responses.filter(({ key, value }) => {
          try {
            return decodeUpdateResponse(key, value).appliedAt + this.#options.updateResponseRetentionMs < now;
          } catch {
            return false;
          }
        });
        if (expired.length > 0)
          await this.#writer.write(
            null,
            [],
            expired.map(({ key }) => ({ type: 'delete' as const, key })),
            'collect expired update responses',
          );
      },
      checkDeadlines: (now) => {
        for (const run of this.#runs.values()) run.checkActivityDeadlines(now);
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
    const wasDeposed = this.#state === 'deposed';
    this.#state = 'stopping';
    this.#maintenance.stop();
    this.#timers.stop();
    const runs = [...this.#runs.values()];
    for (const run of runs) run.drop('shutdown');
    // Wait for in-flight turns and passes, at most 5 s; the timer is cleared so that it never keeps a
    // process (or a test) alive after the engine stopped.
    let patience: unknown;
    await Promise.race([
      Promise.all([
        ...runs.map((run) => run.whenQuiet()),
        ...this.#loading.values(),
        ...this.#maintenance.inFlight,
      ]),
      new Promise((resolve) => (patience = this.#clock.setTimeout(() => resolve(undefined), 5_000))),
    ]);
    this.#clock.clearTimeout(patience);
    let claimsReleased = 0;
    let leaseReleased = false;
    try {
      if (this.#claims) claimsReleased = await this.#claims.releaseAll();
      if (this.#lease && !wasDeposed) leaseReleased = await this.#lease.release().catch(() => false);
    } catch {
      // a failed release does not make shutdown reject
    }
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
    for (const run of [...this.#runs.values()]) run.drop('deposed');
    this.#maintenance.stop();
    this.#timers.stop();
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
      // ignore
    }
  }
}

function finishedEvent(record: WorkflowRecord): EngineEvent {
  switch (record.status) {
    case 'completed':
      return { type: 'workflow.completed', workflowId: record.id };
    case 'failed':
      return {
        type: 'workflow.failed',
        workflowId: record.id,
        error: record.error ?? { name: 'Error', message: 'failed' },
      };
    case 'cancelled':
      return { type: 'workflow.cancelled', workflowId: record.id };
    case 'terminated':
      return { type: 'workflow.terminated', workflowId: record.id };
    default:
      return { type: 'workflow.timed-out', workflowId: record.id };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
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
