/**
 * The run supervisor: which workflows this engine drives, and what happens when a run starts, ends or stops.
 *
 * Guarantees:
 * - **One run per workflow per engine.** Driving a workflow evicts any stale run of it first, and loads it
 *   only after the stale run's in-flight turn (a commit may be under way) is over, so two runs of one
 *   workflow never commit at once.
 * - A workflow is loaded only while the ownership strategy says this engine drives it; a run that finds its
 *   workflow finished or missing lets its claim go; a corrupt record fails that workflow closed (reported
 *   once) and never stops the others.
 * - A run dropped on a lost race is driven again at once (up to three times in a row, then on the next
 *   reclaim pass); one dropped on a storage error is reloaded by the next reclaim pass. Runs dropped because
 *   the claim was lost, the engine deposed or shutting down are not reloaded.
 * - When a workflow ends here, its result waiters and update callers are told, a waiting parent driven here
 *   is woken, and its children with close policy `terminate` are terminated. A run that continued as new
 *   did not end the workflow: its next run is driven here at once, under the same claim.
 */
import { CorruptRecordError } from './errors';
import type { EventHub, EngineEvent, EngineWarning, WakeKind } from './events';
import { keys } from './keys';
import type { Lifecycle } from './lifecycle';
import type { MetricsCounters } from './metrics';
import type { Ownership } from './ownership/ownership';
import { decodeCheckpoint, isTerminal, type WorkflowRecord } from './records';
import type { ResultWaiters } from './result-waiters';
import { WorkflowRun, type DropReason, type RunEvent, type RunHost } from './run/workflow-run';
import type { UpdateCalls } from './update-calls';
import { storedTrace } from './tracing';
import { WaitIndex } from './wait-index';
import type { AnyWorkflowDefinition } from './workflow';
import type { Storage } from '../storage/types';

export type SupervisorDeps = {
  storage: Storage;
  ownership: Ownership;
  /** What every run is given (run/workflow-run.ts): built by the engine, completed here. */
  runHost: Omit<RunHost, 'runCommitted' | 'runFinished' | 'runDropped'>;
  hub: EventHub;
  metrics: MetricsCounters;
  waiters: ResultWaiters;
  updates: UpdateCalls;
  lifecycle: () => Lifecycle;
  /** Every registered version of a type. */
  definitions: (type: string) => AnyWorkflowDefinition[];
  /** The engine is open (or opening): runs may be loaded. */
  isOpen: () => boolean;
  /** This engine may drive `record` now (false: over a queue's per-engine limit; queues/queues.ts). */
  mayHold: (record: WorkflowRecord) => boolean;
  /** A workflow of `queue` ended here (its slot is free). */
  queueSlotFreed: (queue: string) => void;
  warn: (warning: EngineWarning) => void;
};

export class RunSupervisor {
  readonly #deps: SupervisorDeps;
  readonly #runHost: RunHost;
  readonly #runs = new Map<string, WorkflowRun>();
  readonly #loading = new Map<string, Promise<void>>();
  readonly #reloads = new Set<string>();
  readonly #lostRaces = new Map<string, number>();
  readonly #corrupt = new Map<string, { key: string; message: string }>();
  /** What the runs here wait on (children, signals), so a change is routed without asking every run. */
  readonly waiting = new WaitIndex();

  constructor(deps: SupervisorDeps) {
    this.#deps = deps;
    this.#runHost = {
      ...deps.runHost,
      runCommitted: (run) => {
        if (this.#runs.get(run.id) === run) this.waiting.update(run);
      },
      runFinished: (run, record) => this.#runFinished(run, record),
      runDropped: (run, reason, error) => this.#runDropped(run, reason, error),
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // What is driven

  get(workflowId: string): WorkflowRun | undefined {
    return this.#runs.get(workflowId);
  }

  runs(): IterableIterator<WorkflowRun> {
    return this.#runs.values();
  }

  get size(): number {
    return this.#runs.size;
  }

  /** Ids of the running workflows of queue `queue` with a run here (queues/queues.ts counts them). */
  queueMembers(queue: string): string[] {
    const ids: string[] = [];
    for (const run of this.#runs.values())
      if (run.record.queue?.name === queue && run.isLive) ids.push(run.id);
    return ids;
  }

  /** Ids of the workflows with a run here. */
  driving(): string[] {
    return [...this.#runs.keys()];
  }

  /** Workflows with work in flight here: being loaded, or a run with a turn queued or an activity running. */
  active(): string[] {
    const active = [...this.#loading.keys()];
    for (const run of this.#runs.values()) if (run.hasWork) active.push(run.id);
    return active;
  }

  /** This engine drives the workflow or is loading it. */
  isDriving(workflowId: string): boolean {
    return this.#runs.has(workflowId) || this.#loading.has(workflowId);
  }

  /** Hands `event` to the workflow's run, if this engine drives it. */
  deliver(workflowId: string, event: RunEvent): void {
    this.#runs.get(workflowId)?.deliver(event);
  }

  // -------------------------------------------------------------------------------------------------------
  // Driving

  /** Drives a workflow here from storage: evicts any stale local context, loads and replays it. */
  drive(workflowId: string, wake: WakeKind | null): void {
    if (!this.#deps.isOpen()) return;
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
    const { ownership } = this.#deps;
    if (!this.#deps.isOpen() || !ownership.drives(workflowId)) return;
    try {
      const run = await WorkflowRun.load(this.#runHost, workflowId, (type) => this.#deps.definitions(type));
      if (!run) {
        await ownership.letGo(workflowId);
        return;
      }
      if (!this.#deps.isOpen() || !ownership.drives(workflowId)) return;
      // A queue's per-engine limit: a workflow taken over beyond it is let go before any of its code runs, for
      // an engine with room to take (queues/queues.ts `mayHold`).
      if (!this.#deps.mayHold(run.record)) {
        await ownership.letGo(workflowId);
        return;
      }
      this.#runs.get(workflowId)?.drop('evicted');
      this.#runs.set(workflowId, run);
      this.waiting.update(run);
      run.deliver({ type: 'resync', wake });
    } catch (error) {
      if (error instanceof CorruptRecordError) {
        this.markCorrupt(workflowId, error);
        await ownership.letGo(workflowId);
      } else {
        this.#reloads.add(workflowId);
        this.#deps.warn({
          name: 'StorageWarning',
          workflowId,
          message: `Loading workflow '${workflowId}' failed (will retry): ${describe(error)}`,
        });
      }
    }
  }

  /** Drives again the workflows whose runs stopped on a storage error (the reclaim pass calls this). */
  reloadStopped(): void {
    for (const workflowId of [...this.#reloads]) {
      this.#reloads.delete(workflowId);
      if (this.#deps.ownership.drives(workflowId) && !this.#runs.get(workflowId)?.isLive)
        this.drive(workflowId, null);
    }
  }

  /** Stops driving one workflow (its claim was lost or a write deposed this engine). */
  stop(workflowId: string, reason: Extract<DropReason, 'claim-lost' | 'deposed'>): void {
    this.#runs.get(workflowId)?.drop(reason);
  }

  /** Stops driving everything (shutdown, or the engine deposed); resolves when no turn is in progress. */
  async stopAll(reason: Extract<DropReason, 'shutdown' | 'deposed'>): Promise<void> {
    const runs = [...this.#runs.values()];
    for (const run of runs) run.drop(reason);
    await Promise.all([...runs.map((run) => run.whenQuiet()), ...this.#loading.values()]);
  }

  /** Loads in progress (recovery waits for them). */
  loads(): Promise<void>[] {
    return [...this.#loading.values()];
  }

  /** Resolves when no turn or load is in progress, and (unless `activities: false`) no activity runs. */
  busy(activities: boolean): Promise<void>[] {
    const busy = [...this.#runs.values()].filter((run) => (activities ? run.hasWork : run.isTurning));
    return [...busy.map((run) => (activities ? run.whenIdle() : run.whenQuiet())), ...this.#loading.values()];
  }

  // -------------------------------------------------------------------------------------------------------
  // Corrupt workflows

  markCorrupt(workflowId: string, error: CorruptRecordError): void {
    if (this.#corrupt.has(workflowId)) return;
    this.#corrupt.set(workflowId, { key: error.key, message: error.message });
    this.#emit({ type: 'workflow.corrupt', workflowId, key: error.key, message: error.message });
    this.#deps.warn({ name: 'WorkflowCorruptWarning', workflowId, message: error.message });
  }

  corruption(workflowId: string): { key: string; message: string } | undefined {
    return this.#corrupt.get(workflowId);
  }

  // -------------------------------------------------------------------------------------------------------
  // Endings

  #runFinished(run: WorkflowRun, record: WorkflowRecord): void {
    this.waiting.forget(run);
    if (this.#runs.get(run.id) === run) this.#runs.delete(run.id);
    this.#lostRaces.delete(run.id);
    this.#traceEnd(record);
    if (record.status === 'continued-as-new') return this.#runContinued(run, record);
    this.#deps.ownership.runEnded(run.id);
    // Its queue slot is free: the next waiting workflow need not wait for the change feed to say so.
    if (record.queue) this.#deps.queueSlotFreed(record.queue.name);
    this.#deps.metrics.workflowsFinished++;
    this.#emit(finishedEvent(record));
    this.#deps.waiters.settleLocal(record);
    void this.#deps.updates.workflowChanged(record.id);
    this.#afterWorkflowEnded(record, run.checkpoint.linkedChildren);
  }

  /** A short span in the workflow's trace: how the run ended, on which engine. */
  #traceEnd(record: WorkflowRecord): void {
    const span = this.#deps.runHost.tracing.start('shuttle.workflow.end', storedTrace(record.trace), {
      'shuttle.workflow.id': record.id,
      'shuttle.workflow.type': record.type,
      'shuttle.workflow.run': record.run,
      'shuttle.workflow.status': record.status,
      'shuttle.engine.id': this.#deps.runHost.engineId,
    });
    if (record.error)
      span.recordError(Object.assign(new Error(record.error.message), { name: record.error.name }));
    span.end();
  }

  /**
   * The run continued as new: its commit created the next run with the claim kept, so this engine drives it
   * at once (no handoff). Result waiters pinned to the ended run follow to the next one; its children with
   * close policy `terminate` are terminated (they belonged to the run); nobody else is told it ended.
   */
  #runContinued(run: WorkflowRun, record: WorkflowRecord): void {
    this.#deps.metrics.runsContinued++;
    this.#emit({ type: 'workflow.continued-as-new', workflowId: record.id, run: record.run + 1 });
    this.#deps.waiters.followContinued(record.id, record.run);
    void this.#terminateChildren(
      run.checkpoint.linkedChildren,
      `parent '${record.id}' continued as new (run ${record.run + 1})`,
    );
    this.drive(record.id, null);
  }

  #runDropped(run: WorkflowRun, reason: DropReason, error: unknown): void {
    this.waiting.forget(run);
    if (this.#runs.get(run.id) === run) this.#runs.delete(run.id);
    if (error && reason === 'storage-error')
      this.#deps.warn({
        name: 'StorageWarning',
        workflowId: run.id,
        message: `Workflow '${run.id}' stopped on a storage error and will be reloaded: ${describe(error)}`,
      });
    if (!this.#deps.isOpen() || !this.#deps.ownership.drives(run.id)) return;
    if (reason === 'lost-race') {
      const count = (this.#lostRaces.get(run.id) ?? 0) + 1;
      this.#lostRaces.set(run.id, count);
      if (count <= 3) this.drive(run.id, null);
      else this.#reloads.add(run.id);
    } else if (reason === 'storage-error') {
      this.#reloads.add(run.id);
    }
  }

  /** A rotation (terminate, suspend, time-out) or the cancellation of a pending workflow landed. */
  rotated(workflowId: string, record: WorkflowRecord): void {
    const run = this.#runs.get(workflowId);
    run?.drop('rotated');
    if (isTerminal(record.status)) this.#traceEnd(record);
    this.#deps.ownership.rotated(workflowId);
    this.#emit(
      record.status === 'suspended' ? { type: 'workflow.suspended', workflowId } : finishedEvent(record),
    );
    if (isTerminal(record.status)) {
      this.#deps.waiters.settleLocal(record);
      void this.#deps.updates.workflowChanged(workflowId);
      this.#afterWorkflowEnded(record, run?.checkpoint.linkedChildren ?? []);
      if (!run) void this.#terminateLinkedChildren(workflowId, record);
    }
  }

  #afterWorkflowEnded(record: WorkflowRecord, linkedChildren: string[]): void {
    if (record.parent) {
      const parent = this.#runs.get(record.parent.id);
      if (parent) parent.deliver({ type: 'child-settled', childId: record.id, record });
      else this.#deps.ownership.noticeChange(record.parent.id, 'message'); // its owner may be gone
    }
    if (isTerminal(record.status))
      void this.#terminateChildren(linkedChildren, `parent '${record.id}' ended (${record.status})`);
  }

  /** Terminates a run's children with close policy `terminate`, all at once (best effort). */
  async #terminateChildren(childIds: readonly string[], reason: string): Promise<void> {
    await Promise.all(
      childIds.map((childId) =>
        this.#deps
          .lifecycle()
          .rotate(childId, 'terminated', reason)
          .catch(() => undefined),
      ),
    );
  }

  async #terminateLinkedChildren(workflowId: string, record: WorkflowRecord): Promise<void> {
    try {
      const raw = await this.#deps.storage.get(keys.checkpoint(workflowId));
      const linked = raw ? decodeCheckpoint(keys.checkpoint(workflowId), raw).linkedChildren : [];
      await this.#terminateChildren(linked, `parent '${workflowId}' ended (${record.status})`);
    } catch {
      // best effort
    }
  }

  #emit(event: EngineEvent): void {
    this.#deps.hub.emit(event);
  }
}

export function finishedEvent(record: WorkflowRecord): EngineEvent {
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

export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
