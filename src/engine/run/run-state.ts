/**
 * What one run knows while it drives its workflow, shared by the modules that drive it: `WorkflowRun`
 * (workflow-run.ts) owns it and hands it to replay.ts, frontier.ts, activities.ts, event-handlers.ts,
 * finish.ts and commit.ts, each of which takes only the fields it needs (`Pick<RunState, …>`). Nothing in
 * it is durable: every load rebuilds it from storage and replay, and a commit that did not land drops it.
 *
 * `FrontierResults`: the results recorded at the frontier position, by member, in the order they arrived,
 * and the outcome of the frontier command they add up to (whole, `all`, `race`).
 */
import type { Json, JsonObject } from '../codec';
import type { Checkpoint, HistoryEntry, SignalRecord, WorkflowRecord } from '../records';
import type { AnyWorkflowDefinition, Command } from '../workflow';
import type { Heartbeats } from './heartbeats';
import type { RunHost } from './run-host';
import type { RunEvent } from './run-phase';
import { entryOutcome, isOperationEntry, type Outcome, type RunningActivity } from './turn';

export type RunState = {
  readonly id: string;
  readonly host: RunHost;
  /** The definition of the version the workflow started on; null when this engine lacks that version. */
  readonly definition: AnyWorkflowDefinition | null;
  record: WorkflowRecord;
  /** The checkpoint as the last commit of this run wrote it (or as loaded), with this turn's changes so far. */
  checkpoint: Checkpoint;
  /** `ctx.state`: the workflow's state, mutated in place by the workflow and by update handlers. */
  state: JsonObject;
  /** `ctx.isReplaying`. */
  replaying: boolean;
  generator: Generator<Command, unknown, unknown> | null;
  /** The live command at the frontier (holds the functions and predicates the durable frontier cannot). */
  command: Command | null;
  readonly results: FrontierResults;
  /** Buffered signals, oldest first (as last read from storage, less those consumed since). */
  signals: { key: string; record: SignalRecord }[];
  /**
   * A signal was written since `signals` was read, while the run waited on something else: the next signal
   * wait it reaches reads them again first (frontier.ts `arm`).
   */
  signalsStale: boolean;
  /** Activity attempts running on this engine, by member. */
  readonly running: Map<number, RunningActivity>;
  /** The activities' heartbeats: recorded durably, throttled, handed to later attempts (heartbeats.ts). */
  readonly heartbeats: Heartbeats;
  /** The terminal record once the generator ended (committed by the turn's commit). */
  finalRecord: WorkflowRecord | null;
  /** With a `continued-as-new` final record: the next run's record, created by the same commit. */
  continuation: WorkflowRecord | null;
  /** Whether the run is still driven here (neither finished nor dropped). */
  isLive(): boolean;
  /** Queues an event in the run's mailbox. */
  deliver(event: RunEvent): void;
};

/** Recorded results at the frontier position, by member (-1: a whole-operation outcome), in order. */
export class FrontierResults {
  readonly #byMember = new Map<number, Extract<HistoryEntry, { t: 'op' }>>();
  #order: number[] = [];

  /** How many results were recorded (a `race` is decided by the first). */
  get count(): number {
    return this.#order.length;
  }

  clear(): void {
    this.#byMember.clear();
    this.#order = [];
  }

  /** Replaces the results with the first operation entry per member of `entries` (one position's history). */
  load(entries: HistoryEntry[]): void {
    this.#byMember.clear();
    this.#order = [];
    for (const entry of entries) {
      if (!isOperationEntry(entry)) continue;
      const member = entry.member ?? (!entry.ok && entry.cancelled ? -1 : 0);
      if (this.#byMember.has(member)) continue;
      this.#byMember.set(member, entry);
      this.#order.push(member);
    }
  }

  record(member: number, entry: Extract<HistoryEntry, { t: 'op' }>): void {
    this.#byMember.set(member, entry);
    this.#order.push(member);
  }

  /** The outcome of the frontier command given the recorded results, or null while it is still pending. */
  outcome(command: Command): Outcome | null {
    const whole = this.#byMember.get(-1);
    if (whole) return entryOutcome(whole);
    if (command.kind === 'all') {
      for (const member of this.#order) {
        const entry = this.#byMember.get(member)!;
        if (!entry.ok) return entryOutcome(entry);
      }
      if (command.members.every((_, index) => this.#byMember.has(index)))
        return {
          ok: true,
          value: command.members.map((_, index) => (this.#byMember.get(index) as { value?: Json }).value),
        };
      return null;
    }
    if (command.kind === 'race') {
      const first = this.#order[0];
      if (first === undefined) return null;
      const entry = this.#byMember.get(first)!;
      return entry.ok ? { ok: true, value: { index: first, value: entry.value } } : entryOutcome(entry);
    }
    const entry = this.#byMember.get(0);
    return entry ? entryOutcome(entry) : null;
  }
}
