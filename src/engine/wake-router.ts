/**
 * The wake router: everything that can wake a parked workflow, or settle a caller waiting on one, arrives
 * here and is routed to the run, the result waiters, the update callers or the ownership strategy.
 *
 * Sources, and why there are two of each:
 * - the storage **change feed** (commits by any engine sharing the store): fast;
 * - the **polls** run by background work (signals, cancel and update requests, results, children): correct
 *   when a notification is lost or the store has no change feed;
 * - **durable timers** falling due (timer-scheduler.ts): a sleep, a retry backoff, a timeout, a delayed start
 *   or an execution deadline.
 *
 * Every wake of a parked run still passes the run's wake guard before it drives the generator, so a stale
 * wake (this engine lost the workflow meanwhile) is discarded there, not here.
 */
import type { Storage } from '../storage/types';
import type { ActivityLimits } from './activity-limits';
import { WorkflowNotFoundError } from './errors';
import { keys, parseTimerKey, unescapeId, workflowIdOf } from './keys';
import type { Lifecycle } from './lifecycle';
import type { FencedWriter } from './ownership/fenced-write';
import type { Ownership } from './ownership/ownership';
import type { Reactions } from './reactions';
import { decodeRecord, decodeUpdateResponse, isTerminal, type TimerRecord } from './records';
import type { ResultWaiters } from './result-waiters';
import type { RunSupervisor } from './supervisor';
import type { TimerScheduler } from './timer-scheduler';
import type { UpdateCalls } from './update-calls';

export type WakeRouterDeps = {
  storage: Storage;
  writer: FencedWriter;
  ownership: Ownership;
  supervisor: RunSupervisor;
  waiters: ResultWaiters;
  updates: UpdateCalls;
  lifecycle: Lifecycle;
  timers: () => TimerScheduler;
  /** Update responses older than this are collected, in ms. */
  updateResponseRetentionMs: number;
  isOpen: () => boolean;
  /** Where reactions to the change feed are tracked (no caller awaits them). */
  reactions: Reactions;
  /** A queue key changed (queues/queues.ts): its queue looks for room. */
  queueKeyChanged: (key: string) => void;
  /** Activity slots of limited groups (a released slot lets this engine's waiters read again). */
  activityLimits: ActivityLimits;
};

export class WakeRouter {
  readonly #deps: WakeRouterDeps;

  constructor(deps: WakeRouterDeps) {
    this.#deps = deps;
  }

  // -------------------------------------------------------------------------------------------------------
  // Change feed

  /** Keys committed by any engine sharing the store. */
  changed(changed: readonly string[]): void {
    if (!this.#deps.isOpen()) return;
    const { supervisor, ownership, waiters, updates, reactions } = this.#deps;
    for (const key of changed) {
      if (key.startsWith(keys.recordPrefix)) {
        const workflowId = workflowIdOf(key, keys.recordPrefix);
        if (!workflowId) continue;
        reactions.run(waiters.recordChanged(workflowId));
        reactions.run(updates.workflowChanged(workflowId));
        reactions.run(this.childRecordChanged(workflowId));
        ownership.noticeChange(workflowId, 'record');
      } else if (key.startsWith(keys.signalsPrefix)) {
        const workflowId = workflowIdOf(key, keys.signalsPrefix);
        const run = supervisor.get(workflowId ?? '');
        // A run driven here takes it now, or notes it for when it reaches `waitForSignal` (not left for the
        // next poll).
        if (run) run.signalsArrived();
        else if (workflowId) ownership.noticeChange(workflowId, 'message');
      } else if (key.startsWith(keys.activityCompletionsPrefix)) {
        const workflowId = workflowIdOf(key, keys.activityCompletionsPrefix);
        const run = supervisor.get(workflowId ?? '');
        if (run?.waitsOnCompletions) run.deliver({ type: 'completions' });
        else if (!run && workflowId) ownership.noticeChange(workflowId, 'message');
      } else if (key.startsWith(keys.updateRequestsPrefix)) {
        this.#message(workflowIdOf(key, keys.updateRequestsPrefix), { type: 'updates' });
      } else if (key.startsWith(keys.updateResponsesPrefix)) {
        reactions.run(updates.responseWritten(key));
      } else if (key.startsWith(keys.cancelRequestsPrefix)) {
        this.#message(workflowIdOf(key, keys.cancelRequestsPrefix), { type: 'cancel' });
      } else if (key.startsWith(keys.ownerHoldersPrefix)) {
        const workflowId = workflowIdOf(key, keys.ownerHoldersPrefix);
        if (workflowId) ownership.noticeChange(workflowId, 'holder');
      } else if (key.startsWith(keys.ownerNoticesPrefix)) {
        ownership.noticeDisplacement(unescapeId(key.slice(keys.ownerNoticesPrefix.length).split(':')[0]!));
      } else if (key.startsWith(keys.sessionsPrefix)) {
        ownership.noticeSession(unescapeId(key.slice(keys.sessionsPrefix.length)));
      } else if (key.startsWith(keys.activitySlotsPrefix)) {
        this.#deps.activityLimits.changed(key);
      } else if (key.startsWith('queue-')) {
        this.#deps.queueKeyChanged(key);
      } else if (key.startsWith(keys.timersPrefix)) {
        const parsed = parseTimerKey(key);
        if (parsed) this.#deps.timers().notify(parsed.dueAt);
      }
    }
  }

  /** A message (update or cancel request) for a workflow: its run here takes it, or its owner may be needed. */
  #message(workflowId: string | null, event: { type: 'updates' } | { type: 'cancel' }): void {
    if (!workflowId) return;
    const run = this.#deps.supervisor.get(workflowId);
    if (run) run.deliver(event);
    else this.#deps.ownership.noticeChange(workflowId, 'message');
  }

  /** A parent waiting on this child, driven here, learns the child finished (through its wake guard). */
  async childRecordChanged(childId: string): Promise<void> {
    const parents = this.#deps.supervisor.waiting.parentsOf(childId);
    if (parents.length === 0) return;
    try {
      const raw = await this.#deps.storage.get(keys.record(childId));
      if (!raw) return;
      const record = decodeRecord(keys.record(childId), raw);
      if (isTerminal(record.status))
        for (const parent of parents) parent.deliver({ type: 'child-settled', childId, record });
    } catch {
      // the poll will find it
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Durable timers

  /** A durable timer fell due (the timer scheduler calls this for every due timer it finds). */
  async timerDue(key: string, timer: TimerRecord | null): Promise<void> {
    if (!this.#deps.isOpen()) return;
    const { lifecycle, supervisor } = this.#deps;
    const workflowId = timer?.workflowId;
    if (!workflowId) return void (await this.#collect(key));
    if (timer.purpose === 'start') {
      const started = await lifecycle.startPending(workflowId).catch(() => false);
      if (!started) await this.#collectIfStale(key, workflowId, timer);
      return;
    }
    if (timer.purpose === 'execution') {
      try {
        const rotated = await lifecycle.rotate(workflowId, 'timed-out', 'execution timeout');
        if (!rotated) await this.#collectIfStale(key, workflowId, timer);
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) await this.#collect(key);
      }
      return;
    }
    const run = supervisor.get(workflowId);
    if (run?.isLive && run.record.run === timer.run) {
      run.deliver({ type: 'timer', key });
      return;
    }
    await this.#collectIfStale(key, workflowId, timer);
  }

  #collect(key: string): Promise<unknown> {
    return this.#deps.writer.write(null, [], [{ type: 'delete', key }], 'collect a stale timer');
  }

  /**
   * Collects a timer whose workflow is finished, suspended, missing or on another run; keeps the rest (a
   * running workflow's timer belongs to whoever drives it), and tells the ownership strategy it fell due.
   */
  async #collectIfStale(key: string, workflowId: string, timer: TimerRecord): Promise<void> {
    const raw = await this.#deps.storage.get(keys.record(workflowId));
    let stale = raw === null;
    if (raw) {
      try {
        const record = decodeRecord(keys.record(workflowId), raw);
        stale =
          record.run !== timer.run ||
          isTerminal(record.status) ||
          record.status === 'suspended' ||
          (record.status === 'running' && timer.purpose === 'start');
        if (!stale && record.status === 'running')
          this.#deps.ownership.noticeChange(workflowId, 'timer', record.type);
      } catch {
        stale = false; // leave it for inspection
      }
    }
    if (stale) await this.#collect(key);
  }

  // -------------------------------------------------------------------------------------------------------
  // Polls

  /** Signals and cancel requests of the workflows driven here (the change feed's backstop). */
  async pollSignals(): Promise<void> {
    const { supervisor, storage } = this.#deps;
    if (supervisor.size === 0) return;
    const waiting = new Set(supervisor.waiting.signalWaiters().map((run) => run.id));
    if (waiting.size > 0) {
      const signals = await storage.scan(keys.signalsPrefix, { limit: 1000 });
      const ids = new Set(signals.map(({ key }) => workflowIdOf(key, keys.signalsPrefix)));
      for (const id of waiting) if (ids.has(id)) supervisor.deliver(id, { type: 'signals' });
    }
    const completions = await storage.scan(keys.activityCompletionsPrefix, { limit: 1000 });
    for (const id of new Set(completions.map(({ key }) => workflowIdOf(key, keys.activityCompletionsPrefix))))
      if (id && supervisor.get(id)?.waitsOnCompletions) supervisor.deliver(id, { type: 'completions' });
    const cancels = await storage.scan(keys.cancelRequestsPrefix, { limit: 1000 });
    for (const { key } of cancels)
      supervisor.deliver(workflowIdOf(key, keys.cancelRequestsPrefix) ?? '', { type: 'cancel' });
  }

  /** Update requests of the workflows driven here. */
  async pollUpdates(): Promise<void> {
    const { supervisor, storage } = this.#deps;
    if (supervisor.size === 0) return;
    const requests = await storage.scan(keys.updateRequestsPrefix, { limit: 1000 });
    const ids = new Set(requests.map(({ key }) => workflowIdOf(key, keys.updateRequestsPrefix)));
    for (const id of ids) if (id) supervisor.deliver(id, { type: 'updates' });
  }

  /** Result waiters, update callers, and children awaited by runs driven here. */
  async pollResults(now: number): Promise<void> {
    await this.#deps.waiters.poll();
    await this.#deps.updates.poll(now);
    for (const childId of this.#deps.supervisor.waiting.awaitedChildren())
      await this.childRecordChanged(childId);
  }

  /** Collects update responses nobody read within the retention period. */
  async expireUpdateResponses(now: number): Promise<void> {
    const responses = await this.#deps.storage.scan(keys.updateResponsesPrefix, { limit: 500 });
    const expired = responses.filter(({ key, value }) => {
      try {
        return decodeUpdateResponse(key, value).appliedAt + this.#deps.updateResponseRetentionMs < now;
      } catch {
        return false;
      }
    });
    if (expired.length > 0)
      await this.#deps.writer.write(
        null,
        [],
        expired.map(({ key }) => ({ type: 'delete' as const, key })),
        'collect expired update responses',
      );
  }
}
