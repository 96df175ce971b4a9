/**
 * The caller's side of updates. `engine.update()` validates at the caller (nothing is stored if the validator
 * throws; workflow-calls.ts), writes an update request, and waits here for the owner's response record, which
 * the owner writes atomically with the state change (run/event-handlers.ts). The wait settles on the change
 * feed, a poll, or the deadline; at the deadline the request is withdrawn with a compare-and-swap (request
 * still present, response absent), so a timed-out update is guaranteed not to be applied later. The caller
 * deletes the response once it has read it; responses nobody collects are deleted after a retention period.
 */
import type { Storage } from '../storage/types';
import type { Clock } from './clock';
import { InvalidWorkflowStateError, UpdateRejectedError, UpdateTimeoutError } from './errors';
import { keys } from './keys';
import { decodeRecord, decodeUpdateResponse, isTerminal } from './records';

type Call = {
  workflowId: string;
  updateId: string;
  name: string;
  requestKey: string;
  responseKey: string;
  deadline: number;
  timeoutMs: number;
  timer: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  settling: boolean;
};

export class UpdateCalls {
  readonly #calls = new Map<string, Call>();

  constructor(
    private readonly deps: {
      storage: Storage;
      clock: Clock;
      manualTimers: boolean;
      commit: (
        conditions: { key: string; expected: string | null }[],
        operations: { type: 'delete'; key: string }[],
      ) => Promise<boolean>;
    },
  ) {}

  get size(): number {
    return this.#calls.size;
  }

  wait(call: { workflowId: string; updateId: string; name: string; timeoutMs: number }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const entry: Call = {
        ...call,
        requestKey: keys.updateRequest(call.workflowId, call.updateId),
        responseKey: keys.updateResponse(call.workflowId, call.updateId),
        deadline: this.deps.clock.now() + call.timeoutMs,
        timer: undefined,
        resolve,
        reject,
        settling: false,
      };
      if (!this.deps.manualTimers)
        entry.timer = this.deps.clock.setTimeout(() => void this.#expire(entry), call.timeoutMs);
      this.#calls.set(entry.responseKey, entry);
    });
  }

  /** Stops waiting for an update whose request was never stored (its promise is dropped, unsettled). */
  abandon(workflowId: string, updateId: string): void {
    const call = this.#calls.get(keys.updateResponse(workflowId, updateId));
    if (call) this.#finish(call);
  }

  /** The change feed saw `key` (an update response) written. */
  async responseWritten(key: string): Promise<void> {
    const call = this.#calls.get(key);
    if (call) await this.#check(call);
  }

  /** The workflow's record changed: if it ended without answering, the call fails. */
  async workflowChanged(workflowId: string): Promise<void> {
    for (const call of this.#calls.values()) if (call.workflowId === workflowId) await this.#check(call);
  }

  /** Poll every pending call; in manual mode also enforce deadlines. */
  async poll(now: number): Promise<void> {
    for (const call of [...this.#calls.values()]) {
      if (this.deps.manualTimers && now >= call.deadline) await this.#expire(call);
      else await this.#check(call);
    }
  }

  async #check(call: Call): Promise<void> {
    if (call.settling) return;
    let raw: string | null | undefined;
    let recordRaw: string | null | undefined;
    try {
      [raw, recordRaw] = await this.deps.storage.getMany([call.responseKey, keys.record(call.workflowId)]);
    } catch {
      return; // transient: try again on the next poll
    }
    // Another check may have settled the call meanwhile and deleted the response it read: the workflow's
    // end that this read sees must not then turn an applied update into a rejection.
    if (!this.#pending(call)) return;
    if (raw) return this.#settle(call, raw);
    if (recordRaw) {
      const record = decodeRecord(keys.record(call.workflowId), recordRaw);
      if (isTerminal(record.status)) {
        this.#finish(call);
        call.reject(
          new InvalidWorkflowStateError(call.workflowId, record.status, `apply update '${call.name}' to`),
        );
      }
    }
  }

  async #settle(call: Call, raw: string): Promise<void> {
    if (call.settling) return;
    call.settling = true;
    this.#finish(call);
    try {
      await this.deps.storage.batch([{ type: 'delete', key: call.responseKey }]);
    } catch {
      // collected later by the retention sweep
    }
    const response = decodeUpdateResponse(call.responseKey, raw);
    if (response.ok) call.resolve(response.value);
    else call.reject(new UpdateRejectedError(call.workflowId, call.name, response.error));
  }

  async #expire(call: Call): Promise<void> {
    if (!this.#pending(call)) return;
    try {
      const withdrawn = await this.deps.commit(
        [{ key: call.responseKey, expected: null }],
        [{ type: 'delete', key: call.requestKey }],
      );
      const requestGone = withdrawn ? null : await this.deps.storage.get(call.responseKey);
      if (!this.#pending(call)) return;
      if (withdrawn) {
        this.#finish(call);
        call.reject(new UpdateTimeoutError(call.workflowId, call.name, call.timeoutMs));
      } else if (requestGone !== null) {
        await this.#settle(call, requestGone);
      }
    } catch {
      // storage trouble: keep waiting; the next poll retries
    }
  }

  /** Whether the call still waits (not settled, failed or expired by a concurrent check). */
  #pending(call: Call): boolean {
    return !call.settling && this.#calls.get(call.responseKey) === call;
  }

  #finish(call: Call): void {
    if (call.timer !== undefined) this.deps.clock.clearTimeout(call.timer);
    this.#calls.delete(call.responseKey);
  }

  rejectEverything(error: Error): void {
    for (const call of this.#calls.values()) {
      if (call.timer !== undefined) this.deps.clock.clearTimeout(call.timer);
      call.reject(error);
    }
    this.#calls.clear();
  }
}
