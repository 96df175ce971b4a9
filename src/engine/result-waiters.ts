/**
 * Result waiters: `handle(id).result()` calls waiting on a workflow that runs elsewhere (or has not finished
 * here yet). A waiter settles from durable state when the change feed reports the workflow's record changed,
 * or at the next poll (every renew interval; `runMaintenance` in manual mode), or at once when the workflow
 * finishes on this engine. Each engine keeps a registry of its waiters — workflow, since, and how each was
 * finally settled (local, change feed or poll) with its latency — for the studio.
 *
 * A transient read failure keeps a waiter pending when engines share the store (`keepPendingOnReadError`),
 * and rejects it otherwise (a single engine has nobody else to finish the workflow).
 */
import type { Storage } from '../storage/types';
import type { Clock } from './clock';
import {
  CorruptRecordError,
  WorkflowCancelledError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowTerminatedError,
  WorkflowTimedOutError,
} from './errors';
import type { EngineEvent, ResultSettledVia } from './events';
import { keys } from './keys';
import type { MetricsCounters } from './metrics';
import { decodePastRun, decodeRecord, isTerminal, type WorkflowRecord } from './records';

export type ResultWaiterInfo = {
  waiterId: number;
  workflowId: string;
  since: number;
  settled: { at: number; via: ResultSettledVia; latencyMs: number; status: string } | null;
};

type Waiter = ResultWaiterInfo & {
  /** The run waited on (a handle pinned by `start` or `{ run }`); undefined: whichever run is latest. */
  run: number | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
};

/** The outcome of a finished workflow as `result()` reports it. */
export function settleFromRecord(
  record: WorkflowRecord,
): { ok: true; value: unknown } | { ok: false; error: Error } {
  switch (record.status) {
    case 'completed':
      return { ok: true, value: record.result };
    case 'failed':
      return {
        ok: false,
        error: new WorkflowFailedError(
          record.id,
          record.error ?? { name: 'Error', message: 'unknown failure' },
        ),
      };
    case 'cancelled':
      return { ok: false, error: new WorkflowCancelledError(record.id, record.reason) };
    case 'terminated':
      return { ok: false, error: new WorkflowTerminatedError(record.id, record.reason) };
    case 'timed-out':
      return { ok: false, error: new WorkflowTimedOutError(record.id, record.executionTimeoutMs ?? 0) };
    default:
      throw new Error(`settleFromRecord called for a ${record.status} workflow`);
  }
}

const keepSettled = 200;

/**
 * Where run `run` of a workflow leads: itself, or — when it continued as new — the first run after it that did
 * not, read from run history in pages (one range scan for a chain of any length); `'latest'` when every
 * earlier run from `run` on continued, so the chain goes on in the workflow's current run.
 */
export async function chainEnd(
  storage: Storage,
  workflowId: string,
  run: number,
): Promise<WorkflowRecord | 'latest' | null> {
  let after = keys.pastRun(workflowId, Math.max(0, run - 1));
  let expected = run;
  for (;;) {
    const page = await storage.scan(keys.pastRunsOf(workflowId), { after, limit: 200 });
    for (const { key, value } of page) {
      const { record } = decodePastRun(key, value);
      if (record.run < expected) continue;
      // A gap (an earlier run purged) breaks the chain: the run asked for is gone.
      if (record.run > expected) return expected === run ? null : 'latest';
      if (record.status !== 'continued-as-new') return record;
      expected = record.run + 1;
    }
    if (page.length < 200) return expected === run ? null : 'latest';
    after = page[page.length - 1]!.key;
  }
}

export class ResultWaiters {
  readonly #pending = new Map<number, Waiter>();
  #settled: ResultWaiterInfo[] = [];
  #nextId = 1;

  constructor(
    private readonly deps: {
      storage: Storage;
      clock: Clock;
      metrics: MetricsCounters;
      emit: (event: EngineEvent) => void;
      keepPendingOnReadError: boolean;
    },
  ) {}

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Waits for `workflowId` (its run `run`, or its latest run) to finish. */
  wait(workflowId: string, run?: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        waiterId: this.#nextId++,
        workflowId,
        run,
        since: this.deps.clock.now(),
        settled: null,
        resolve,
        reject,
      };
      this.#pending.set(waiter.waiterId, waiter);
      this.deps.emit({ type: 'result-waiter.registered', workflowId });
    });
  }

  /** The workflow finished on this engine. */
  settleLocal(record: WorkflowRecord): void {
    this.#settleAll(record, 'local');
  }

  /**
   * Run `run` of the workflow continued as new: waiters pinned to it wait for the next run instead (a chain
   * is one workflow to its callers; `result()` settles with its last run's outcome).
   */
  followContinued(workflowId: string, run: number): void {
    for (const waiter of this.#pending.values())
      if (waiter.workflowId === workflowId && waiter.run === run) waiter.run = run + 1;
  }

  /** The change feed reported the workflow's record changed. */
  async recordChanged(workflowId: string): Promise<void> {
    if (![...this.#pending.values()].some((waiter) => waiter.workflowId === workflowId)) return;
    await this.#check([workflowId], 'change-feed');
  }

  /** Re-reads one workflow (it may have finished between a caller's first read and its registration). */
  async recheck(workflowId: string): Promise<void> {
    await this.#check([workflowId], 'poll');
  }

  /** Poll: re-read every pending waiter's workflow. */
  async poll(): Promise<void> {
    const ids = [...new Set([...this.#pending.values()].map((waiter) => waiter.workflowId))];
    if (ids.length > 0) await this.#check(ids, 'poll');
  }

  async #check(ids: string[], via: ResultSettledVia): Promise<void> {
    let raws: (string | null)[];
    try {
      raws = await this.deps.storage.getMany(ids.map((id) => keys.record(id)));
    } catch (error) {
      if (!this.deps.keepPendingOnReadError) for (const id of ids) this.#rejectAll(id, error);
      return;
    }
    const overtaken: { id: string; run: number; current: WorkflowRecord }[] = [];
    ids.forEach((id, index) => {
      const raw = raws[index];
      if (!raw) return;
      try {
        const record = decodeRecord(keys.record(id), raw);
        if (isTerminal(record.status)) this.#settleAll(record, via);
        for (const waiter of this.#pending.values())
          if (waiter.workflowId === id && waiter.run !== undefined && waiter.run < record.run)
            overtaken.push({ id, run: waiter.run, current: record });
      } catch (error) {
        this.#rejectAll(id, error);
      }
    });
    // A pinned run that finished and was followed by another run of the id: its outcome is kept (run history).
    for (const { id, run, current } of overtaken) await this.#settlePast(id, run, via, current);
  }

  async #settlePast(
    workflowId: string,
    run: number,
    via: ResultSettledVia,
    current: WorkflowRecord,
  ): Promise<void> {
    let end: WorkflowRecord | 'latest' | null;
    try {
      end = await chainEnd(this.deps.storage, workflowId, run);
    } catch (error) {
      if (!this.deps.keepPendingOnReadError || error instanceof CorruptRecordError)
        this.#rejectAll(workflowId, error, run);
      return;
    }
    if (end === null) return this.#rejectAll(workflowId, new WorkflowNotFoundError(workflowId, run), run);
    if (end !== 'latest') return this.#settleAll(end, via);
    // Continued into the current run: wait for it (settled at once if it has ended).
    for (const waiter of this.#pending.values())
      if (waiter.workflowId === workflowId && waiter.run === run) waiter.run = current.run;
    if (isTerminal(current.status)) this.#settleAll(current, via);
  }

  #settleAll(record: WorkflowRecord, via: ResultSettledVia): void {
    if (record.status === 'continued-as-new') return this.followContinued(record.id, record.run);
    const now = this.deps.clock.now();
    for (const waiter of [...this.#pending.values()]) {
      if (waiter.workflowId !== record.id) continue;
      if (waiter.run !== undefined && waiter.run !== record.run) continue;
      this.#pending.delete(waiter.waiterId);
      const latencyMs = record.endedAt !== undefined ? Math.max(0, now - record.endedAt) : 0;
      this.#remember({ ...waiter, settled: { at: now, via, latencyMs, status: record.status } });
      this.deps.metrics.resultWaitersSettled++;
      this.deps.emit({ type: 'result-waiter.settled', workflowId: record.id, via, latencyMs });
      const outcome = settleFromRecord(record);
      if (outcome.ok) waiter.resolve(outcome.value);
      else waiter.reject(outcome.error);
    }
  }

  #rejectAll(workflowId: string, error: unknown, run?: number): void {
    for (const waiter of [...this.#pending.values()]) {
      if (waiter.workflowId !== workflowId) continue;
      if (run !== undefined && waiter.run !== run) continue;
      this.#pending.delete(waiter.waiterId);
      waiter.reject(error);
    }
  }

  /** Rejects every pending waiter (shutdown). */
  rejectEverything(error: Error): void {
    for (const waiter of this.#pending.values()) waiter.reject(error);
    this.#pending.clear();
  }

  #remember(info: ResultWaiterInfo): void {
    const { waiterId, workflowId, since, settled } = info;
    this.#settled.push({ waiterId, workflowId, since, settled });
    if (this.#settled.length > keepSettled) this.#settled = this.#settled.slice(-keepSettled);
  }

  /** Pending waiters first, then the most recently settled. */
  list(): ResultWaiterInfo[] {
    const pending = [...this.#pending.values()].map(({ waiterId, workflowId, since }) => ({
      waiterId,
      workflowId,
      since,
      settled: null,
    }));
    return [...pending, ...[...this.#settled].reverse()];
  }
}
