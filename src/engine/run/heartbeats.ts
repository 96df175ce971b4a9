/**
 * Activity heartbeats of one run: `context.heartbeat(details)` recorded durably, throttled, so that the next
 * attempt — after a failure, a timeout or a takeover, on this engine or another — starts from the last
 * progress reported, and the studio shows it with the pending operation.
 *
 * - **Throttled**: the first heartbeat of an attempt is written at once, later ones at most once per
 *   `throttleMs` (the latest details win: a trailing write at the end of the window), so a tight loop that
 *   heartbeats costs one write a second.
 * - **Fenced**: written through the fenced writer as the workflow's own write (its claim's epoch), so a
 *   deposed engine's late heartbeat never lands; a refused write is simply dropped (heartbeats are advice).
 * - **Ordered before the activity's end**: the commit that records the activity's outcome (or leaves the
 *   operation) waits for a heartbeat write in flight and deletes the key (`forget`), so none outlives it.
 * - The next attempt gets the details from memory: recorded here, or read with the run when it was loaded
 *   (load.ts: the earlier attempt ran on another engine), so an attempt starts without a read of its own.
 */
import type { Json } from '../codec';
import { keys } from '../keys';
import type { HeartbeatRecord } from '../records';
import type { RunHost } from './run-host';

/** At most one heartbeat write per activity in this long, in ms (the first is written at once). */
export const heartbeatThrottleMs = 1_000;

type Entry = {
  attempt: number;
  details: Json | undefined;
  /** The latest details were not written yet. */
  dirty: boolean;
  writtenAt: number | null;
  /** A trailing write scheduled on the clock. */
  timer: unknown;
};

export class Heartbeats {
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly host: Pick<RunHost, 'clock' | 'writer' | 'engineId'>,
    private readonly workflowId: string,
    private readonly run: number,
  ) {}

  key(pos: number, member: number): string {
    return keys.activityHeartbeat(this.workflowId, this.run, pos, member);
  }

  /** An attempt heartbeat: remember the details; write them now or at the end of the throttle window. */
  beat(pos: number, member: number, attempt: number, details: Json | undefined): void {
    const key = this.key(pos, member);
    const entry: Entry = this.#entries.get(key) ?? {
      attempt,
      details: undefined,
      dirty: false,
      writtenAt: null,
      timer: undefined,
    };
    // An attempt's first heartbeat is written at once (the last one written may be an earlier attempt's).
    const first = entry.writtenAt === null || entry.attempt !== attempt;
    entry.attempt = attempt;
    entry.details = details;
    entry.dirty = true;
    this.#entries.set(key, entry);
    const now = this.host.clock.now();
    if (first || now - entry.writtenAt! >= heartbeatThrottleMs) {
      if (entry.timer !== undefined) this.host.clock.clearTimeout(entry.timer);
      entry.timer = undefined;
      this.#write(key, entry);
    } else if (entry.timer === undefined)
      entry.timer = this.host.clock.setTimeout(
        () => {
          entry.timer = undefined;
          if (entry.dirty && this.#entries.get(key) === entry) this.#write(key, entry);
        },
        heartbeatThrottleMs - (now - entry.writtenAt!),
      );
  }

  #write(key: string, entry: Entry): void {
    entry.dirty = false;
    entry.writtenAt = this.host.clock.now();
    const record: HeartbeatRecord = {
      attempt: entry.attempt,
      ...(entry.details === undefined ? {} : { details: entry.details }),
      at: entry.writtenAt,
      engineId: this.host.engineId,
    };
    const write = this.host.writer
      .write(this.workflowId, [], [{ type: 'put', key, value: JSON.stringify(record) }], 'record a heartbeat')
      .catch(() => undefined) // advice: a failed write is dropped, the next heartbeat tries again
      .finally(() => this.#inFlight.delete(write));
    this.#inFlight.add(write);
  }

  /**
   * The details the next attempt of the activity at `pos`/`member` starts from: the last heartbeat of it this
   * engine recorded, or read when it loaded the run (an earlier attempt ran elsewhere: `loaded`), else none.
   */
  previous(pos: number, member: number): Json | undefined {
    return this.#entries.get(this.key(pos, member))?.details;
  }

  /** The heartbeats stored for the run's open activities when it was loaded (load.ts). */
  loaded(stored: ReadonlyMap<string, HeartbeatRecord>): void {
    for (const [key, record] of stored)
      this.#entries.set(key, {
        attempt: record.attempt,
        details: record.details,
        dirty: false,
        writtenAt: record.at,
        timer: undefined,
      });
  }

  /** Stops writing the activity's heartbeats; returns the key to delete when one may be stored. */
  forget(pos: number, member: number): string | null {
    const key = this.key(pos, member);
    const entry = this.#entries.get(key);
    if (!entry) return null;
    if (entry.timer !== undefined) this.host.clock.clearTimeout(entry.timer);
    this.#entries.delete(key);
    return key;
  }

  /** Every activity's: the run ended or was dropped. */
  forgetAll(): string[] {
    const forgotten: string[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.timer !== undefined) this.host.clock.clearTimeout(entry.timer);
      forgotten.push(key);
    }
    this.#entries.clear();
    return forgotten;
  }

  /** Heartbeat writes are in flight (a commit that deletes their keys waits for them: `settled`). */
  get writing(): boolean {
    return this.#inFlight.size > 0;
  }

  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }
}
