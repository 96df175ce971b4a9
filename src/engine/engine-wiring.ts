/**
 * The engine's construction: `wireEngine` builds every part (committer, ownership, fenced writer, result
 * waiters, update calls, lifecycle, run supervisor, wake router, timer scheduler, schedules, external
 * activities, purger, maintenance) and hands each the narrow functions it needs, nothing more. Plain wiring:
 * nothing is decided, read or written here; `ShuttleEngine.open` (engine.ts) opens the parts.
 *
 * The parts reach the engine itself only through `EngineHooks`: its state (open, stopping, …), its
 * definitions, and what it does when a claim lands or the store-wide lease is lost.
 */
import { ActivityLimits } from './activity-limits';
import { Committer } from './committer';
import type { WorkflowDefinitions } from './definitions';
import { EventHub, type EngineEvent, type EngineWarning } from './events';
import { ExternalActivities } from './external-activities';
import { Lifecycle } from './lifecycle';
import { Maintenance } from './maintenance';
import { MetricsCounters } from './metrics';
import type { ResolvedOptions } from './options';
import { createOwnership } from './ownership/create';
import { FencedWriter } from './ownership/fenced-write';
import type { Ownership } from './ownership/ownership';
import type { MintedClaim } from './ownership/transitions';
import { Purger } from './purge';
import { Reactions } from './reactions';
import { ResultWaiters } from './result-waiters';
import { Queues } from './queues/queues';
import { Schedules } from './schedules/schedules';
import { RunSupervisor, describe } from './supervisor';
import { TimerScheduler } from './timer-scheduler';
import { Tracing } from './tracing';
import { UpdateCalls } from './update-calls';
import { WakeRouter } from './wake-router';

/** Where the engine is in its life: `deposed` when it lost the store-wide lease (`lease` mode). */
export type EngineState = 'opening' | 'open' | 'stopping' | 'stopped' | 'deposed';

/** What the parts need from the engine itself. */
export type EngineHooks = {
  state(): EngineState;
  /** The engine's registered definitions (read when asked: registering later is seen). */
  readonly definitions: WorkflowDefinitions;
  /** This engine may run workflows of `type`: it has a definition for it and is not an observer. */
  mayDrive(type: string): boolean;
  /** An enabling write (start, delayed start, resume) landed: hold the workflow and drive it here. */
  claimed(
    workflowId: string,
    workflowType: string,
    minted: MintedClaim | null,
    how: 'start' | 'resume' | 'acquire',
  ): void;
  /** The store-wide lease was lost (`lease` mode): the engine is deposed. */
  leaseLost(epoch: number): void;
  warn(warning: EngineWarning): void;
};

/** The engine's parts, as `wireEngine` built them. */
export type EngineParts = {
  readonly hub: EventHub;
  readonly metrics: MetricsCounters;
  readonly reactions: Reactions;
  readonly committer: Committer;
  readonly owner: Ownership;
  readonly writer: FencedWriter;
  readonly waiters: ResultWaiters;
  readonly updates: UpdateCalls;
  readonly lifecycle: Lifecycle;
  readonly supervisor: RunSupervisor;
  readonly router: WakeRouter;
  readonly timers: TimerScheduler;
  readonly schedules: Schedules;
  readonly external: ExternalActivities;
  readonly purger: Purger;
  readonly maintenance: Maintenance;
  readonly tracing: Tracing;
  readonly queues: Queues;
  readonly activityLimits: ActivityLimits;
};

/** Builds the parts of engine `engineId` over `options.storage`, in dependency order. */
export function wireEngine(options: ResolvedOptions, engineId: string, engine: EngineHooks): EngineParts {
  const storage = options.storage;
  const clock = options.clock;
  const hub = new EventHub();
  const metrics = new MetricsCounters();
  const reactions = new Reactions();
  const emit = (event: EngineEvent) => hub.emit(event);
  const warn = (warning: EngineWarning) => engine.warn(warning);
  const isOpen = () => engine.state() === 'open' || engine.state() === 'opening';
  const committer = new Committer(storage);
  const tracing = new Tracing(options.tracer);
  const owner: Ownership = createOwnership(options.ownership, {
    storage,
    committer,
    engineId,
    clock,
    ttlMs: options.ttlMs,
    renewIntervalMs: options.renewIntervalMs,
    leaseWaitTimeoutMs: options.leaseWaitTimeoutMs,
    reclaimBatchSize: options.reclaimBatchSize,
    liveness: options.liveness,
    claimWorkflows: options.claimWorkflows,
    metrics,
    emit,
    warn,
    isEligible: (type) => engine.mayDrive(type),
    hasRoomFor: (record) => queues.mayHold(record),
    drive: (workflowId, how) =>
      supervisor.drive(workflowId, how === 'takeover' || how === 'recover' ? null : 'queued-start'),
    isDriving: (workflowId) => supervisor.isDriving(workflowId),
    activeWorkflows: () => supervisor.active(),
    stopDriving: (workflowId, reason) => supervisor.stop(workflowId, reason),
    deposeEngine: (epoch) => engine.leaseLost(epoch),
    markCorrupt: (workflowId, error) => supervisor.markCorrupt(workflowId, error),
    isCorrupt: (workflowId) => supervisor.corruption(workflowId) !== undefined,
    requestReclaim: () => {
      if (engine.state() === 'open') void maintenance.single('reclaim');
    },
    isStopping: () => !isOpen(),
    reactions,
    tracing,
  });
  const writer = new FencedWriter({ committer, ownership: owner });
  // Durable slots only where several engines drive workflows; a slot's holder is judged by its session.
  const activityLimits = new ActivityLimits({
    storage,
    clock,
    random: options.random,
    engineId,
    limits: options.activityLimits,
    durable: options.ownership === 'workflow-lease',
    graceMs: 2 * options.renewIntervalMs,
    liveness: options.liveness,
    metrics,
    emit,
    warn,
    isOpen,
  });
  const waiters = new ResultWaiters({
    storage,
    clock,
    metrics,
    emit,
    keepPendingOnReadError: owner.sharesStore,
  });
  const updates = new UpdateCalls({
    storage,
    clock,
    manualTimers: options.backgroundTasks === 'manual',
    commit: (conditions, operations) => committer.commit(conditions, operations),
  });
  const lifecycle = new Lifecycle({
    storage,
    writer,
    ownership: owner,
    clock,
    random: options.random,
    engineId,
    maxPayloadBytes: options.maxPayloadBytes,
    idempotencyWindowMs: options.idempotencyWindowMs,
    definition: (type, version) => engine.definitions.get(type, version),
    claimsOnStart: options.claimWorkflows,
    claimed: (workflowId, workflowType, minted, how) => engine.claimed(workflowId, workflowType, minted, how),
    rotated: (workflowId, record) => supervisor.rotated(workflowId, record),
    timerArmed: (dueAt) => timers.notify(dueAt),
    tracing,
    queues: options.queues,
    enqueued: (queue) => queues.enqueued(queue),
    directGrant: (queue, key) => queues.directGrant(queue, key),
    admittedDirectly: (queue, workflowId) => queues.admittedDirectly(queue, workflowId),
  });
  const supervisor: RunSupervisor = new RunSupervisor({
    storage,
    ownership: owner,
    runHost: {
      engineId,
      storage,
      writer,
      clock,
      random: options.random,
      maxPayloadBytes: options.maxPayloadBytes,
      mapStack: options.mapStack,
      activityInterceptors: options.activityInterceptors,
      workflowInterceptors: options.workflowInterceptors,
      activityLimits,
      tracing,
      manualTimers: options.backgroundTasks === 'manual',
      metrics,
      emit,
      warn,
      heldEpoch: (workflowId) => owner.heldEpoch(workflowId),
      claimLost: (workflowId, heldEpoch, reason) => owner.claimLost(workflowId, heldEpoch, reason),
      releaseOperations: (workflowId) => owner.releaseOperations(workflowId),
      guardWake: (workflowId, kind, parkedEpoch) => owner.guardWake(workflowId, kind, parkedEpoch),
      prepareChild: (request) => lifecycle.prepareChild(request),
      definition: (type, version) => engine.definitions.get(type, version),
      timerArmed: (dueAt) => timers.notify(dueAt),
    },
    hub,
    metrics,
    waiters,
    updates,
    lifecycle: () => lifecycle,
    definitions: (type) => engine.definitions.versionsOf(type),
    isOpen,
    mayHold: (record) => queues.mayHold(record),
    queueSlotFreed: (queue) => queues.kick(queue),
    warn,
  });
  const router: WakeRouter = new WakeRouter({
    storage,
    writer,
    ownership: owner,
    supervisor,
    waiters,
    updates,
    lifecycle,
    timers: () => timers,
    updateResponseRetentionMs: options.updateResponseRetentionMs,
    isOpen: () => engine.state() === 'open',
    reactions,
    queueKeyChanged: (key) => queues.changed(key),
    activityLimits,
  });
  const timers: TimerScheduler = new TimerScheduler({
    storage,
    clock,
    automatic: options.backgroundTasks === 'automatic',
    fire: (key, timer) => router.timerDue(key, timer),
    onError: (error) =>
      warn({
        name: 'StorageWarning',
        message: `Durable timer scan failed (will retry): ${describe(error)}`,
      }),
  });
  const schedules = new Schedules({
    storage,
    writer,
    lifecycle,
    clock,
    engineId,
    maxPayloadBytes: options.maxPayloadBytes,
    metrics,
    definition: (type) => engine.definitions.get(type),
    mayDrive: (type) => engine.mayDrive(type),
    automatic: options.backgroundTasks === 'automatic',
    renewIntervalMs: options.renewIntervalMs,
    warn,
  });
  const external = new ExternalActivities({
    storage,
    writer,
    engineId,
    now: () => clock.now(),
    maxPayloadBytes: options.maxPayloadBytes,
    stored: (workflowId) => {
      const run = supervisor.get(workflowId);
      if (run?.waitsOnCompletions) run.deliver({ type: 'completions' });
    },
  });
  const purger = new Purger({
    storage,
    writer,
    displaced: (workflowId, holderRaw) => owner.displaced(workflowId, holderRaw, 'purged'),
    engineId,
    clock,
    metrics,
    retentionOf: (type) => {
      if (!engine.definitions.has(type)) return undefined;
      return engine.definitions.get(type)?.retentionMs ?? options.retentionMs;
    },
    hasRetention: () => options.retentionMs !== undefined || engine.definitions.anyRetention(),
    idempotencyWindowMs: options.idempotencyWindowMs,
    warn,
  });
  const queues: Queues = new Queues({
    storage,
    clock,
    lifecycle,
    declarations: options.queues,
    admits: options.claimWorkflows,
    mayDrive: (type) => engine.mayDrive(type),
    queueMembers: (queue) => supervisor.queueMembers(queue),
    isDriving: (workflowId) => supervisor.isDriving(workflowId),
    automatic: options.backgroundTasks === 'automatic',
    isOpen: () => engine.state() === 'open',
    warn,
  });
  // The passes background work runs (maintenance.ts decides when, and in which order).
  const maintenance: Maintenance = new Maintenance({
    passes: {
      gates: () => owner.checkGates(),
      renew: () => owner.renew(),
      reclaim: async () => {
        if (engine.state() !== 'open') return;
        supervisor.reloadStopped();
        await owner.reclaim();
      },
      pollSignals: () => router.pollSignals(),
      pollUpdates: () => router.pollUpdates(),
      pollQueues: () => queues.poll(),
      pollActivitySlots: () => activityLimits.poll(),
      pollResults: (now) => router.pollResults(now),
      fireTimers: (now) => timers.fireDue(now),
      fireSchedules: (now) => schedules.fireDue(now),
      sweepRetention: (now) => purger.sweep(now),
      expireUpdateResponses: (now) => router.expireUpdateResponses(now),
      checkDeadlines: (now) => {
        for (const run of supervisor.runs()) run.checkActivityDeadlines(now);
      },
    },
    clock,
    intervalMs: options.renewIntervalMs,
    isOpen: () => engine.state() === 'open',
    warn,
  });
  return {
    hub,
    metrics,
    reactions,
    committer,
    owner,
    writer,
    waiters,
    updates,
    lifecycle,
    supervisor,
    router,
    timers,
    schedules,
    external,
    purger,
    maintenance,
    tracing,
    queues,
    activityLimits,
  };
}
