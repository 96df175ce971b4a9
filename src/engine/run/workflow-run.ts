/**
 * One workflow's execution on this engine: replay from storage, then turns driven by wake events.
 *
 * Guarantees of this module:
 * - **Replay**: the generator is re-run from the start and fed the recorded results in order; an operation
 *   whose kind or name differs from the recorded one fails the workflow with `NonDeterminismError`. Update
 *   entries restore the state their handler produced at the position it was applied.
 * - **One commit per turn**: a turn handles one event (an activity finished, a timer fired, a signal or
 *   update arrived, …), advances the generator as far as it can go without waiting, and commits everything it
 *   learnt as one atomic batch through the fenced writer: one commit record (its history and timeline
 *   entries), the checkpoint, timers to arm or delete, consumed signals, update responses, child creations,
 *   and on the last turn the terminal record. The batch's condition is that the commit record's key is
 *   unused, which holds exactly while the checkpoint this run last wrote or read is current
 *   (workflow-writes.ts), and the ownership fence is added to it: refused once any other writer — a successor's claim, a
 *   rotation — replaced the checkpoint. Nothing in memory moves past a write that did not land: if the
 *   commit fails, the run is dropped and (unless this engine was deposed) reloaded from storage.
 * - **Activities** run only after the commit that reached them landed, so a deposed engine never starts one
 *   for a position its successor owns. Their results are recorded before the generator sees them; a recorded
 *   activity never runs again. An activity in flight when the engine dies runs again (at-least-once).
 * - **Serial**: events of one run are handled one at a time, in arrival order (the mailbox).
 * - **Wake guard**: an event that wakes a parked run passes `host.guardWake` first (docs/ownership.md).
 *
 * A run's lifecycle goes through `reduceRunPhase`: loading → idle ⇄ busy → finished | dropped.
 */
import type { Condition, Operation as StorageOperation } from '../../storage/types';
import {
  assertPlainData,
  cloneJson,
  encodePayload,
  normalizePayload,
  utf8Bytes,
  type Json,
  type JsonObject,
} from '../codec';
import {
  ActivityFailedError,
  ActivityTimeoutError,
  CancelledError,
  ChildWorkflowFailedError,
  NonDeterminismError,
  PayloadTooLargeError,
  WorkflowVersionMismatchError,
  serializeError,
  type SerializedError,
} from '../errors';
import { uuidFrom } from '../ids';
import { mutation } from '../mutations';
import { keys } from '../keys';
import type { WorkflowStatus } from '../vocabulary';
import {
  decodeCancelRequest,
  decodeRecord,
  decodeSignal,
  decodeUpdateRequest,
  isTerminal,
  type Checkpoint,
  type HistoryEntry,
  type Leaf,
  type SignalRecord,
  type TimerRecord,
  type UpdateRequest,
  type UpdateResponse,
  type WorkflowRecord,
} from '../records';
import { carriedCheckpointChars } from '../checkpoint';
import { commitRecordKey, encodeCommitRecord, nextLogCounters, timelineEntry } from '../workflow-writes';
import {
  describeCommand,
  type AnyWorkflowDefinition,
  type Command,
  type LeafCommand,
  type WorkflowContext,
} from '../workflow';
import { completionToken, decodeActivityCompletion } from '../external-activities';
import { ActivityAttempt } from './activity-attempt';
import { createContext } from './context';
import { loadWorkflow, type LoadedWorkflow } from './load';
import { nextRetryWait } from './retry';
import type { RunHost } from './run-host';
import {
  reduceRunPhase,
  wakeKindOf,
  type DropReason,
  type PhaseAction,
  type RunEvent,
  type RunPhase,
} from './run-phase';
import {
  Turn,
  describeRecorded,
  entryOutcome,
  isCommand,
  isOperationEntry,
  leafCommands,
  reconcileInPlace,
  stripStack,
  type Outcome,
  type RunningActivity,
  type Step,
} from './turn';

export type { ChildPlan, ChildRequest, RunHost } from './run-host';
export type { DropReason, RunEvent, RunPhase } from './run-phase';

// ---------------------------------------------------------------------------------------------------------

export class WorkflowRun {
  readonly id: string;
  readonly #host: RunHost;
  readonly #definition: AnyWorkflowDefinition | null;
  #phase: RunPhase = { tag: 'loading' };

  #record: WorkflowRecord;
  #recordRaw: string;
  #checkpoint: Checkpoint;

  #state: JsonObject = {};
  #replaying = false;
  #ctx: WorkflowContext;
  #generator: Generator<Command, unknown, unknown> | null = null;
  /** The live command at the frontier (holds the functions and predicates the durable frontier cannot). */
  #command: Command | null = null;
  /** Recorded results at the frontier position, by member (-1: a whole-operation outcome), in order. */
  #results = new Map<number, Extract<HistoryEntry, { t: 'op' }>>();
  #resolutionOrder: number[] = [];
  /** The first live advance after replay, when the history ended exactly at an unrecorded command. */
  #pendingLiveCommand: Command | null = null;
  #signals: { key: string; record: SignalRecord }[] = [];
  #running = new Map<number, RunningActivity>();
  #mailbox: RunEvent[] = [];
  #draining = false;
  #idleWaiters: (() => void)[] = [];

  private constructor(host: RunHost, definition: AnyWorkflowDefinition | null, loaded: LoadedWorkflow) {
    this.#host = host;
    this.#definition = definition;
    this.id = loaded.record.id;
    this.#record = loaded.record;
    this.#recordRaw = loaded.recordRaw;
    this.#checkpoint = loaded.checkpoint;
    this.#signals = loaded.signals;
    const readState = () => this.#state;
    const readReplaying = () => this.#replaying;
    this.#ctx = createContext({
      workflowId: this.id,
      workflowType: this.#record.type,
      version: this.#record.version,
      get state() {
        return readState();
      },
      get isReplaying() {
        return readReplaying();
      },
    });
  }

  /**
   * Reads the workflow from storage and replays it. Throws `CorruptRecordError` for an undecodable record;
   * returns null when the workflow is not running (nothing to drive).
   */
  static async load(
    host: RunHost,
    workflowId: string,
    definitions: (type: string) => AnyWorkflowDefinition[],
  ): Promise<WorkflowRun | null> {
    const loaded = await loadWorkflow(host.storage, workflowId);
    if (!loaded) return null;
    // A run's commits are fenced by the checkpoint they replace, which is only a fence if that checkpoint
    // was written under the epoch this engine holds: another engine may have taken the workflow over
    // between this engine's claim and this load. Then its checkpoint is not ours to build on. Checked
    // whatever the status: a workflow that another engine took over and finished was lost, not let go.
    const held = host.heldEpoch(workflowId);
    if (held !== undefined && held > 0) {
      const stored = loaded.epoch;
      if (stored !== held) {
        host.claimLost(
          workflowId,
          held,
          `loaded at epoch ${stored ?? 'unreadable'} while this engine holds epoch ${held}: taken over meanwhile`,
        );
        return null;
      }
    }
    if (loaded.record.status !== 'running') return null;
    const candidates = definitions(loaded.record.type);
    const definition = candidates.find((d) => d.version === loaded.record.version) ?? null;
    const run = new WorkflowRun(host, definition, loaded);
    if (!definition) {
      // Registered under another version only (the engine never loads a type it lacks entirely).
      run.#pendingFailure = new WorkflowVersionMismatchError(
        workflowId,
        loaded.record.type,
        loaded.record.version,
        candidates.map((d) => d.version),
      );
      return run;
    }
    run.#replay(loaded.history);
    return run;
  }

  #pendingFailure: Error | null = null;

  get phase(): RunPhase {
    return this.#phase;
  }

  get record(): WorkflowRecord {
    return this.#record;
  }

  get checkpoint(): Checkpoint {
    return this.#checkpoint;
  }

  get isLive(): boolean {
    return this.#phase.tag !== 'finished' && this.#phase.tag !== 'dropped';
  }

  /** Activity and child leaves and signal/update interest, for the engine's polls. */
  /** Whether an external activity of the frontier waits for its completion (completeActivity). */
  get waitsOnCompletions(): boolean {
    return this.#checkpoint.frontier?.leaves.some((leaf) => leaf.external === true && !leaf.done) ?? false;
  }

  get waitsOnSignals(): boolean {
    return this.#checkpoint.frontier?.leaves.some((leaf) => leaf.kind === 'signal' && !leaf.done) ?? false;
  }

  /**
   * Whether this run waits (close policy `await`) on the child `childId`. Allocates nothing: it is asked of
   * every run on every record change the change feed reports.
   */
  awaitsChild(childId: string): boolean {
    const leaves = this.#checkpoint.frontier?.leaves;
    if (!leaves) return false;
    for (const leaf of leaves)
      if (leaf.kind === 'child' && !leaf.done && leaf.childId === childId && leaf.closePolicy === 'await')
        return true;
    return false;
  }

  get awaitedChildren(): string[] {
    return (this.#checkpoint.frontier?.leaves ?? [])
      .filter((leaf) => leaf.kind === 'child' && !leaf.done && leaf.childId && leaf.closePolicy === 'await')
      .map((leaf) => leaf.childId!);
  }

  /** A turn is running or queued. */
  get isTurning(): boolean {
    return this.#draining || this.#mailbox.length > 0;
  }

  get hasWork(): boolean {
    return this.#draining || this.#mailbox.length > 0 || this.#running.size > 0;
  }

  #dispatch(action: PhaseAction): void {
    this.#phase = reduceRunPhase(this.#phase, action);
  }

  // -------------------------------------------------------------------------------------------------------
  // Mailbox

  /** Queues an event; events are handled one at a time, in order. */
  deliver(event: RunEvent): void {
    if (!this.isLive) return;
    this.#mailbox.push(event);
    if (!this.#draining) void this.#drain();
  }

  /** Resolves when the mailbox is empty, no turn is running and no activity is in flight. */
  whenIdle(): Promise<void> {
    if (!this.hasWork) return Promise.resolve();
    return new Promise((resolve) => this.#busyWaiters.push(resolve));
  }

  #busyWaiters: (() => void)[] = [];

  #notifyIfIdle(): void {
    if (this.hasWork && this.isLive) return;
    const waiters = this.#busyWaiters;
    this.#busyWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves when the mailbox is empty and no turn is running (activities may still be in flight). */
  whenQuiet(): Promise<void> {
    if (!this.#draining && this.#mailbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#mailbox.length > 0 && this.isLive) {
        const event = this.#mailbox.shift()!;
        try {
          await this.#handle(event);
        } catch (error) {
          this.drop('storage-error', error);
        }
      }
    } finally {
      this.#draining = false;
      if (!this.isLive) this.#mailbox = [];
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
      this.#notifyIfIdle();
    }
  }

  /** Stops driving this run: aborts its activities and forgets its context. Idempotent. */
  drop(reason: DropReason, error?: unknown): void {
    if (!this.isLive) return;
    this.#dispatch({ type: 'dropped', reason });
    this.#abortAll(
      reason === 'shutdown' ? 'engine shutting down' : `workflow no longer driven here (${reason})`,
    );
    this.#mailbox = [];
    this.#host.runDropped(this, reason, error);
    this.#notifyIfIdle();
  }

  #abortAll(why: string): void {
    for (const [member, running] of this.#running) this.#abortActivity(member, running, why);
  }

  #abortActivity(member: number, running: RunningActivity, why: string): void {
    if (running.timeout !== undefined) this.#host.clock.clearTimeout(running.timeout);
    running.abort(new CancelledError(why));
    this.#running.delete(member);
  }

  // -------------------------------------------------------------------------------------------------------
  // Replay

  #replay(history: HistoryEntry[]): void {
    const definition = this.#definition!;
    const byPos = new Map<number, HistoryEntry[]>();
    for (const entry of history) {
      const list = byPos.get(entry.pos) ?? [];
      list.push(entry);
      byPos.set(entry.pos, list);
    }
    const target = this.#checkpoint.position;
    this.#replaying = true;
    this.#state = {};
    try {
      this.#generator = definition.run(this.#ctx, this.#record.input);
      let next = this.#step(() => this.#generator!.next());
      let pos = 0;
      for (;;) {
        if (next.kind !== 'yield') {
          if (pos < target)
            throw new NonDeterminismError(
              this.id,
              pos,
              describeRecorded(byPos.get(pos)),
              'the end of the workflow',
            );
          // The history ends where the code ends: the run finishes on its first turn.
          this.#replayEnd = next;
          break;
        }
        const command = next.command;
        const entries = byPos.get(pos) ?? [];
        this.#checkDeterminism(pos, command, entries);
        for (const entry of entries) if (entry.t === 'update') this.#restoreState(entry.stateAfter);
        if (pos < target) {
          this.#loadResults(entries);
          const outcome = this.#outcome(command);
          if (!outcome)
            throw new NonDeterminismError(
              this.id,
              pos,
              describeRecorded(entries),
              `${describeCommand(command)} (unfinished in the history)`,
            );
          this.#results.clear();
          this.#resolutionOrder = [];
          pos++;
          next = this.#resume(outcome);
          continue;
        }
        // The frontier.
        const frontier = this.#checkpoint.frontier;
        if (frontier && frontier.pos === pos) {
          const leaves = leafCommands(command);
          if (
            frontier.kind !== command.kind ||
            frontier.name !== command.name ||
            frontier.leaves.length !== leaves.length ||
            frontier.leaves.some((leaf, i) => leaf.kind !== leaves[i]!.kind || leaf.name !== leaves[i]!.name)
          )
            throw new NonDeterminismError(this.id, pos, describeCommand(frontier), describeCommand(command));
          this.#command = command;
          if (mutation() === 'all-ignores-recorded-results' && command.kind === 'all') {
            // M4 (mutations.ts): the members' recorded results are forgotten and they run again.
            for (const leaf of frontier.leaves) if (leaf.kind === 'activity') leaf.done = false;
            this.#loadResults([]);
          } else this.#loadResults(entries);
        } else {
          this.#pendingLiveCommand = command;
        }
        break;
      }
    } catch (error) {
      this.#pendingFailure = error instanceof Error ? error : new Error(String(error));
      this.#state = cloneJson(this.#checkpoint.state);
    } finally {
      this.#replaying = false;
    }
  }

  #replayEnd: Step | null = null;

  #checkDeterminism(pos: number, command: Command, entries: HistoryEntry[]): void {
    const leaves = leafCommands(command);
    for (const entry of entries) {
      if (!isOperationEntry(entry)) continue;
      if (entry.member === undefined || entry.member < 0) {
        if (entry.kind !== command.kind || entry.name !== command.name)
          throw new NonDeterminismError(this.id, pos, `${describeCommand(entry)}`, describeCommand(command));
        continue;
      }
      const leaf = leaves[entry.member];
      if (command.kind !== 'all' && command.kind !== 'race')
        throw new NonDeterminismError(
          this.id,
          pos,
          `a member of ${entry.kind === 'all' ? 'all' : 'a parallel operation'}`,
          describeCommand(command),
        );
      if (!leaf || leaf.kind !== entry.kind || leaf.name !== entry.name)
        throw new NonDeterminismError(
          this.id,
          pos,
          `member #${entry.member} ${describeCommand(entry)}`,
          leaf
            ? `member #${entry.member} ${describeCommand(leaf)}`
            : `${describeCommand(command)} without member #${entry.member}`,
        );
    }
  }

  #loadResults(entries: HistoryEntry[]): void {
    this.#results.clear();
    this.#resolutionOrder = [];
    for (const entry of entries) {
      if (!isOperationEntry(entry)) continue;
      const member = entry.member ?? (!entry.ok && entry.cancelled ? -1 : 0);
      if (this.#results.has(member)) continue;
      this.#results.set(member, entry);
      this.#resolutionOrder.push(member);
    }
  }

  #restoreState(stateAfter: JsonObject): void {
    reconcileInPlace(this.#state, cloneJson(stateAfter));
  }

  // -------------------------------------------------------------------------------------------------------
  // Generator stepping

  #step(advance: () => IteratorResult<Command, unknown>): Step {
    try {
      const result = advance();
      if (result.done) return { kind: 'return', value: result.value };
      return { kind: 'yield', command: result.value };
    } catch (error) {
      return { kind: 'throw', error };
    }
  }

  #resume(outcome: Outcome): Step {
    const generator = this.#generator!;
    return outcome.ok
      ? this.#step(() => generator.next(outcome.value))
      : this.#step(() => generator.throw(outcome.error));
  }

  /** The outcome of the frontier command given the recorded results, or null while it is still pending. */
  #outcome(command: Command): Outcome | null {
    const whole = this.#results.get(-1);
    if (whole) return entryOutcome(whole);
    if (command.kind === 'all') {
      for (const member of this.#resolutionOrder) {
        const entry = this.#results.get(member)!;
        if (!entry.ok) return entryOutcome(entry);
      }
      if (command.members.every((_, index) => this.#results.has(index)))
        return {
          ok: true,
          value: command.members.map((_, index) => (this.#results.get(index) as { value?: Json }).value),
        };
      return null;
    }
    if (command.kind === 'race') {
      const first = this.#resolutionOrder[0];
      if (first === undefined) return null;
      const entry = this.#results.get(first)!;
      return entry.ok ? { ok: true, value: { index: first, value: entry.value } } : entryOutcome(entry);
    }
    const entry = this.#results.get(0);
    return entry ? entryOutcome(entry) : null;
  }

  // -------------------------------------------------------------------------------------------------------
  // Event handling

  async #handle(event: RunEvent): Promise<void> {
    const wake = wakeKindOf(event, this.#checkpoint.frontier);
    const parkedEpoch =
      this.#phase.tag === 'idle'
        ? this.#phase.parkedEpoch
        : this.#phase.tag === 'loading'
          ? (this.#host.heldEpoch(this.id) ?? 0)
          : null;
    if (wake && parkedEpoch !== null) {
      const proceed = await this.#host.guardWake(this.id, wake, parkedEpoch);
      if (!proceed) {
        this.drop('wake-refused');
        return;
      }
    }
    if (!this.isLive) return;
    this.#dispatch({ type: 'turn-started' });
    const turn = new Turn();
    if (this.#pendingFailure) {
      const error = this.#pendingFailure;
      this.#pendingFailure = null;
      this.#finish(turn, { kind: 'throw', error }, true);
    } else if (this.#replayEnd) {
      const end = this.#replayEnd;
      this.#replayEnd = null;
      this.#finish(turn, end, false);
    } else {
      if (this.#pendingLiveCommand) {
        const command = this.#pendingLiveCommand;
        this.#pendingLiveCommand = null;
        await this.#advance(turn, { kind: 'yield', command });
      }
      if (this.isLive && !this.#finalRecord) await this.#apply(turn, event);
    }
    await this.#commit(turn);
  }

  async #apply(turn: Turn, event: RunEvent): Promise<void> {
    switch (event.type) {
      case 'resync':
        await this.#resync(turn);
        break;
      case 'activity-settled':
        this.#activitySettled(turn, event);
        break;
      case 'timer':
        this.#timerFired(turn, event.key);
        break;
      case 'signals':
        await this.#refreshSignals();
        this.#consumeSignals(turn);
        break;
      case 'completions':
        await this.#takeCompletions(turn);
        break;
      case 'updates':
        await this.#readAndApplyUpdates(turn);
        break;
      case 'cancel':
        await this.#readAndCheckCancel(turn);
        break;
      case 'child-settled':
        this.#childSettled(turn, event.childId, event.record);
        break;
    }
    await this.#continueIfComplete(turn);
  }

  /** After load: find everything that happened while nobody drove the workflow. */
  async #resync(turn: Turn): Promise<void> {
    const frontier = this.#checkpoint.frontier;
    if (!frontier) return;
    // Both read at once, applied in order (a handoff waits on this).
    const [cancelRaw, updateEntries] = await Promise.all([
      this.#host.storage.get(keys.cancelRequest(this.id)),
      this.#host.storage.scan(keys.updateRequestPrefix(this.id)),
    ]);
    this.#checkCancel(turn, cancelRaw);
    if (this.#checkpoint.frontier !== frontier) return;
    this.#applyUpdates(turn, updateEntries);
    this.#consumeSignals(turn);
    const now = this.#host.clock.now();
    for (const leaf of frontier.leaves) {
      if (leaf.done || !leaf.timerKey || leaf.dueAt === undefined) continue;
      if (leaf.dueAt <= now) this.#timerFired(turn, leaf.timerKey);
      else this.#host.timerArmed(leaf.dueAt);
    }
    const childIds = frontier.leaves
      .filter((leaf) => leaf.kind === 'child' && !leaf.done && leaf.closePolicy === 'await' && leaf.childId)
      .map((leaf) => leaf.childId!);
    if (childIds.length > 0) {
      const raws = await this.#host.storage.getMany(childIds.map((id) => keys.record(id)));
      raws.forEach((raw, index) => {
        if (!raw) return;
        const record = decodeRecord(keys.record(childIds[index]!), raw);
        if (isTerminal(record.status)) this.#childSettled(turn, record.id, record);
      });
    }
  }

  /** If the frontier is complete, move the generator on (possibly through several operations). */
  async #continueIfComplete(turn: Turn): Promise<void> {
    if (!this.#command || !this.#checkpoint.frontier) return;
    const outcome = this.#outcome(this.#command);
    if (!outcome) return;
    this.#closeFrontier(turn);
    await this.#advance(turn, this.#resume(outcome));
  }

  /** Leaves the frontier: deletes timers of unfinished leaves, aborts their activities. */
  #closeFrontier(turn: Turn): void {
    const frontier = this.#checkpoint.frontier!;
    for (const leaf of frontier.leaves) {
      if (leaf.timerKey && !leaf.done) turn.delete(leaf.timerKey);
      const running = this.#running.get(leaf.member);
      if (running)
        this.#abortActivity(leaf.member, running, 'the operation was decided without this activity');
    }
    this.#checkpoint = { ...this.#checkpoint, frontier: null, position: frontier.pos + 1 };
    this.#command = null;
    this.#results.clear();
    this.#resolutionOrder = [];
    turn.dirty = true;
  }

  /** Runs the generator from `step` until it waits on something or ends. */
  async #advance(turn: Turn, step: Step): Promise<void> {
    let current = step;
    for (;;) {
      if (current.kind !== 'yield') {
        this.#finish(turn, current, false);
        return;
      }
      const command = current.command;
      if (!isCommand(command)) {
        current = this.#resume({
          ok: false,
          error: new TypeError(
            `A workflow may only yield ctx operations (use yield* ctx.<operation>(…)); it yielded ${typeof command}.`,
          ),
        });
        continue;
      }
      const pos = this.#checkpoint.position;
      if (command.kind === 'now' || command.kind === 'random' || command.kind === 'uuid') {
        const value =
          command.kind === 'now'
            ? this.#host.clock.now()
            : command.kind === 'random'
              ? this.#host.random()
              : uuidFrom(this.#host.random);
        turn.history.push({ t: 'op', pos, kind: command.kind, name: command.name, ok: true, value });
        this.#checkpoint = { ...this.#checkpoint, position: pos + 1 };
        current = this.#resume({ ok: true, value });
        continue;
      }
      await this.#arm(turn, command, pos);
      if (!this.isLive) return;
      const outcome = this.#outcome(command);
      if (!outcome) return; // parked (or running activities)
      this.#closeFrontier(turn);
      current = this.#resume(outcome);
    }
  }

  /** Makes `command` the frontier and arms its leaves (timers, signal checks, children, predicates). */
  async #arm(
    turn: Turn,
    command: Exclude<Command, { kind: 'now' | 'random' | 'uuid' }>,
    pos: number,
  ): Promise<void> {
    const now = this.#host.clock.now();
    const commands = leafCommands(command);
    const composite = command.kind === 'all' || command.kind === 'race';
    const leaves: Leaf[] = commands.map((leaf, member) => ({
      member,
      kind: leaf.kind,
      name: leaf.name,
      done: false,
    }));
    this.#command = command;
    this.#results.clear();
    this.#resolutionOrder = [];
    this.#checkpoint = {
      ...this.#checkpoint,
      frontier: { pos, kind: command.kind, name: command.name, since: now, leaves },
    };
    turn.dirty = true;
    for (const [member, leafCommand] of commands.entries()) {
      if (composite && this.#outcome(command)) break; // a race already decided by an earlier member
      const leaf = leaves[member]!;
      switch (leafCommand.kind) {
        case 'activity':
          leaf.attempt = 1;
          if (leafCommand.options.completion === 'external') leaf.external = true;
          break;
        case 'sleep':
          this.#armTimer(turn, leaf, 'sleep', now + leafCommand.durationMs);
          turn.note('timer-armed', {
            pos,
            member,
            durationMs: leafCommand.durationMs,
            dueAt: now + leafCommand.durationMs,
          });
          break;
        case 'signal':
          if (leafCommand.timeoutMs !== undefined)
            this.#armTimer(turn, leaf, 'timeout', now + leafCommand.timeoutMs);
          this.#consumeSignals(turn);
          break;
        case 'until':
          if (this.#evaluatePredicate(turn, leaf, leafCommand.predicate)) break;
          if (leafCommand.timeoutMs !== undefined)
            this.#armTimer(turn, leaf, 'timeout', now + leafCommand.timeoutMs);
          break;
        case 'child':
          await this.#armChild(turn, leaf, leafCommand, pos, composite);
          break;
      }
      if (!this.isLive) return;
    }
  }

  #armTimer(turn: Turn, leaf: Leaf, purpose: TimerRecord['purpose'], dueAt: number): void {
    const pos = this.#checkpoint.frontier!.pos;
    const key = keys.timer(dueAt, this.id, `${this.#record.run}.${pos}.${leaf.member}.${purpose}`);
    const timer: TimerRecord = {
      workflowId: this.id,
      purpose,
      run: this.#record.run,
      pos,
      member: leaf.member,
    };
    turn.put(key, JSON.stringify(timer));
    leaf.timerKey = key;
    leaf.dueAt = dueAt;
    turn.afterCommit.push(() => this.#host.timerArmed(dueAt));
  }

  async #armChild(
    turn: Turn,
    leaf: Leaf,
    command: Extract<LeafCommand, { kind: 'child' }>,
    pos: number,
    composite: boolean,
  ): Promise<void> {
    const closePolicy = command.options.parentClosePolicy ?? 'await';
    const childId = command.options.id ?? `${this.id}.child-${pos}${composite ? `.${leaf.member}` : ''}`;
    leaf.childId = childId;
    leaf.closePolicy = closePolicy;
    let input: unknown;
    try {
      input = normalizePayload(
        command.input,
        `Input of child workflow '${childId}'`,
        this.#host.maxPayloadBytes,
      );
    } catch (error) {
      this.#resolveLeaf(turn, leaf, { ok: false, error: serializeError(error) });
      return;
    }
    const plan = await this.#host.prepareChild({
      parent: this.#record,
      pos,
      member: leaf.member,
      childId,
      workflowType: command.name,
      input,
      closePolicy,
    });
    if (!plan.ok) {
      this.#resolveLeaf(turn, leaf, { ok: false, error: plan.error });
      return;
    }
    turn.conditions.push(...plan.conditions);
    for (const operation of plan.operations) turn.operations.push(operation);
    turn.afterCommit.push(plan.afterCommit);
    turn.note('child-started', {
      pos,
      member: leaf.member,
      childId,
      workflowType: command.name,
      parentClosePolicy: closePolicy,
    });
    if (closePolicy === 'terminate')
      this.#checkpoint = {
        ...this.#checkpoint,
        linkedChildren: [...this.#checkpoint.linkedChildren, childId],
      };
    if (closePolicy !== 'await') this.#resolveLeaf(turn, leaf, { ok: true, value: childId });
  }

  #evaluatePredicate(turn: Turn, leaf: Leaf, predicate: () => boolean): boolean {
    let satisfied: boolean;
    try {
      satisfied = predicate() === true;
    } catch (error) {
      this.#resolveLeaf(turn, leaf, { ok: false, error: serializeError(error) });
      return true;
    }
    if (satisfied) {
      this.#resolveLeaf(turn, leaf, { ok: true, value: true });
      turn.note('wait-completed', {
        pos: this.#checkpoint.frontier!.pos,
        member: leaf.member,
        satisfied: true,
      });
    }
    return satisfied;
  }

  /** Records a leaf's result (history entry) and retires its timer. */
  #resolveLeaf(
    turn: Turn,
    leaf: Leaf,
    result: { ok: true; value?: Json } | { ok: false; error: SerializedError },
  ): void {
    const frontier = this.#checkpoint.frontier!;
    const composite = frontier.kind === 'all' || frontier.kind === 'race';
    const base = {
      t: 'op' as const,
      pos: frontier.pos,
      kind: leaf.kind,
      name: leaf.name,
      ...(composite ? { member: leaf.member } : {}),
    };
    const entry: Extract<HistoryEntry, { t: 'op' }> = result.ok
      ? { ...base, ok: true, ...(result.value === undefined ? {} : { value: result.value }) }
      : { ...base, ok: false, error: result.error };
    leaf.done = true;
    if (leaf.timerKey) {
      turn.delete(leaf.timerKey);
      delete leaf.timerKey;
      delete leaf.dueAt;
    }
    turn.history.push(entry);
    const member = composite ? leaf.member : 0;
    this.#results.set(member, entry);
    this.#resolutionOrder.push(member);
  }

  #leafAt(pos: number, member: number): Leaf | undefined {
    const frontier = this.#checkpoint.frontier;
    if (!frontier || frontier.pos !== pos) return undefined;
    return frontier.leaves[member];
  }

  // -------------------------------------------------------------------------------------------------------
  // Activities

  #activitySettled(turn: Turn, event: Extract<RunEvent, { type: 'activity-settled' }>): void {
    const leaf = this.#leafAt(event.pos, event.member);
    const running = this.#running.get(event.member);
    if (running && running.attempt === event.attempt && leaf && leaf.attempt === event.attempt) {
      if (running.timeout !== undefined) this.#host.clock.clearTimeout(running.timeout);
      this.#running.delete(event.member);
    }
    if (!leaf || leaf.done || leaf.kind !== 'activity' || leaf.attempt !== event.attempt || leaf.retrying)
      return; // stale
    const command = leafCommands(this.#command!)[event.member] as Extract<LeafCommand, { kind: 'activity' }>;
    const now = this.#host.clock.now();
    const pos = event.pos;
    let outcome = event.outcome;
    let stored: Json | undefined;
    if (outcome.ok) {
      try {
        const text = encodePayload(
          outcome.value,
          `Result of activity '${leaf.name}'`,
          this.#host.maxPayloadBytes,
        );
        stored = text === undefined ? undefined : (JSON.parse(text) as Json);
      } catch (error) {
        outcome = { ok: false, error };
      }
    }
    if (outcome.ok) {
      turn.note('activity-completed', {
        pos,
        member: event.member,
        name: leaf.name,
        attempt: event.attempt,
        durationMs: now - event.startedAt,
      });
      this.#resolveLeaf(turn, leaf, stored === undefined ? { ok: true } : { ok: true, value: stored });
      turn.kinds.push('activity');
      return;
    }
    const failure = serializeError(outcome.error);
    delete failure.stack;
    turn.note('activity-failed', {
      pos,
      member: event.member,
      name: leaf.name,
      attempt: event.attempt,
      error: failure,
    });
    const wait = nextRetryWait(command.options.retry, event.attempt, {
      name: failure.name,
      cancelled: outcome.error instanceof CancelledError,
    });
    if (wait !== null) {
      leaf.attempt = event.attempt + 1;
      leaf.started = false;
      leaf.retrying = true;
      leaf.lastError = failure;
      this.#armTimer(turn, leaf, 'retry', now + wait);
      turn.note('activity-retry-scheduled', {
        pos,
        member: event.member,
        name: leaf.name,
        nextAttempt: event.attempt + 1,
        dueAt: now + wait,
        waitMs: wait,
      });
      return;
    }
    const error = new ActivityFailedError(leaf.name, event.attempt, failure);
    this.#resolveLeaf(turn, leaf, { ok: false, error: stripStack(serializeError(error)) });
    turn.kinds.push('activity');
  }

  /**
   * Before a commit: marks every activity attempt that will start once it lands, and notes it on the
   * timeline, so the start is durable before any activity code runs. An attempt already marked started but
   * not running here was interrupted (its engine died or lost the workflow): it runs again as the next
   * attempt, and the timeline shows both.
   */
  #markActivityStarts(turn: Turn): void {
    const frontier = this.#checkpoint.frontier;
    if (!frontier || !this.#command || !this.isLive) return;
    for (const leaf of frontier.leaves) {
      if (leaf.kind !== 'activity' || leaf.done || leaf.retrying || this.#running.has(leaf.member)) continue;
      const rerun = leaf.started === true;
      if (rerun) leaf.attempt = (leaf.attempt ?? 1) + 1;
      leaf.started = true;
      turn.note('activity-started', {
        pos: frontier.pos,
        member: leaf.member,
        name: leaf.name,
        attempt: leaf.attempt ?? 1,
        ...(rerun ? { rerun: true } : {}),
      });
    }
  }

  /** Starts every activity attempt the last commit marked started. Called after that commit landed. */
  #startActivities(): void {
    const frontier = this.#checkpoint.frontier;
    if (!frontier || !this.#command || !this.isLive) return;
    const commands = leafCommands(this.#command);
    for (const leaf of frontier.leaves) {
      if (
        leaf.kind !== 'activity' ||
        leaf.done ||
        leaf.retrying ||
        !leaf.started ||
        this.#running.has(leaf.member)
      )
        continue;
      const command = commands[leaf.member] as Extract<LeafCommand, { kind: 'activity' }>;
      this.#runActivity(frontier.pos, leaf.member, leaf.attempt ?? 1, command);
    }
  }

  #runActivity(
    pos: number,
    member: number,
    attempt: number,
    command: Extract<LeafCommand, { kind: 'activity' }>,
  ): void {
    const { clock } = this.#host;
    const timeoutMs = command.options.timeoutMs;
    const startedAt = clock.now();
    const running = new ActivityAttempt({
      attempt,
      startedAt,
      timeoutMs,
      onSettled: (outcome) =>
        this.deliver({ type: 'activity-settled', pos, member, attempt, startedAt, outcome }),
    });
    this.#running.set(member, running);
    if (timeoutMs !== undefined && !this.#host.manualTimers)
      running.timeout = clock.setTimeout(
        () => running.abort(new ActivityTimeoutError(command.name, timeoutMs)),
        timeoutMs,
      );
    this.#host.metrics.activitiesRun++;
    this.#host.emit({ type: 'activity.started', workflowId: this.id, name: command.name, attempt });
    const external = command.options.completion === 'external';
    // An external activity may have been completed already (before a takeover, say): look at once.
    if (external) this.deliver({ type: 'completions' });
    running.run(
      command.fn,
      external ? completionToken(this.id, this.#record.run, pos, member) : undefined,
      (details) => {
        if (!this.isLive) return;
        this.#host.emit({
          type: 'activity.heartbeat',
          workflowId: this.id,
          name: command.name,
          attempt,
          ...(details === undefined ? {} : { details }),
        });
      },
    );
  }

  /** Manual mode: aborts activity attempts whose timeout has passed. */
  checkActivityDeadlines(now: number): void {
    if (!this.#command) return;
    const commands = leafCommands(this.#command);
    for (const [member, running] of this.#running) {
      if (running.deadline !== undefined && now >= running.deadline && !running.aborted) {
        const command = commands[member] as Extract<LeafCommand, { kind: 'activity' }> | undefined;
        running.abort(new ActivityTimeoutError(command?.name ?? 'activity', command?.options.timeoutMs ?? 0));
      }
    }
  }

  /**
   * Takes the stored completions of this run's waiting external activities into the run: each settles its
   * activity like a finished attempt, and is deleted by the same commit (so it is taken exactly once).
   */
  async #takeCompletions(turn: Turn): Promise<void> {
    const frontier = this.#checkpoint.frontier;
    if (!frontier) return;
    const waiting = frontier.leaves.filter((leaf) => leaf.external === true && !leaf.done);
    if (waiting.length === 0) return;
    const completionKeys = waiting.map((leaf) =>
      keys.activityCompletion(this.id, this.#record.run, frontier.pos, leaf.member),
    );
    const raws = await this.#host.storage.getMany(completionKeys);
    for (const [index, leaf] of waiting.entries()) {
      const raw = raws[index];
      if (!raw || leaf.done || leaf.retrying || this.#checkpoint.frontier !== frontier) continue;
      const completion = decodeActivityCompletion(completionKeys[index]!, raw);
      turn.delete(completionKeys[index]!);
      const attempt = leaf.attempt ?? 1;
      this.#activitySettled(turn, {
        type: 'activity-settled',
        pos: frontier.pos,
        member: leaf.member,
        attempt,
        startedAt: this.#running.get(leaf.member)?.startedAt ?? completion.at,
        outcome: completion.ok
          ? { ok: true, value: completion.value }
          : {
              ok: false,
              error: Object.assign(new Error(completion.error.message), { name: completion.error.name }),
            },
      });
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Timers, signals, updates, cancellation, children

  #timerFired(turn: Turn, key: string): void {
    const frontier = this.#checkpoint.frontier;
    const leaf = frontier?.leaves.find((candidate) => candidate.timerKey === key && !candidate.done);
    if (!frontier || !leaf) return; // stale: already handled, or belongs to an earlier position
    turn.note('timer-fired', { pos: frontier.pos, member: leaf.member, kind: leaf.kind });
    if (leaf.kind === 'activity') {
      turn.delete(key);
      delete leaf.timerKey;
      delete leaf.dueAt;
      leaf.retrying = false;
      return;
    }
    if (leaf.kind === 'sleep') this.#resolveLeaf(turn, leaf, { ok: true });
    else if (leaf.kind === 'signal') this.#resolveLeaf(turn, leaf, { ok: true });
    else if (leaf.kind === 'until') {
      this.#resolveLeaf(turn, leaf, { ok: true, value: false });
      turn.note('wait-completed', { pos: frontier.pos, member: leaf.member, satisfied: false });
    }
    turn.kinds.push(leaf.kind);
  }

  async #refreshSignals(): Promise<void> {
    const entries = await this.#host.storage.scan(keys.signalPrefix(this.id));
    this.#signals = entries.map(({ key, value }) => ({ key, record: decodeSignal(key, value) }));
  }

  /** Hands buffered signals, oldest first, to the signal leaves waiting on their names. */
  #consumeSignals(turn: Turn): void {
    const frontier = this.#checkpoint.frontier;
    if (!frontier || !this.#command) return;
    for (const leaf of frontier.leaves) {
      if (leaf.kind !== 'signal' || leaf.done) continue;
      if (frontier.kind === 'race' && this.#resolutionOrder.length > 0) return;
      const index = this.#signals.findIndex((signal) => signal.record.name === leaf.name);
      if (index < 0) continue;
      const [signal] = this.#signals.splice(index, 1);
      turn.delete(signal!.key);
      turn.note('signal-received', { name: leaf.name, sentBy: signal!.record.sentBy }, signal!.record.sentAt);
      turn.note('signal-consumed', { pos: frontier.pos, member: leaf.member, name: leaf.name });
      this.#resolveLeaf(
        turn,
        leaf,
        signal!.record.payload === undefined ? { ok: true } : { ok: true, value: signal!.record.payload },
      );
      turn.kinds.push('signal');
    }
  }

  async #readAndApplyUpdates(turn: Turn): Promise<void> {
    if (!this.#checkpoint.frontier) return;
    this.#applyUpdates(turn, await this.#host.storage.scan(keys.updateRequestPrefix(this.id)));
  }

  /** Applies the update requests `entries` (as scanned from storage) in the order they were requested. */
  #applyUpdates(turn: Turn, entries: readonly { key: string; value: string }[]): void {
    const frontier = this.#checkpoint.frontier;
    if (!frontier) return;
    const requests = entries
      .map(({ key, value }) => ({ key, request: decodeUpdateRequest(key, value) }))
      .sort((a, b) => a.request.requestedAt - b.request.requestedAt || (a.key < b.key ? -1 : 1));
    for (const { key, request } of requests) this.#applyUpdate(turn, key, request);
    if (requests.length > 0) this.#recheckPredicates(turn);
  }

  #applyUpdate(turn: Turn, requestKey: string, request: UpdateRequest): void {
    const { clock, engineId, maxPayloadBytes } = this.#host;
    const pos = this.#checkpoint.frontier!.pos;
    const handler = this.#definition?.updates?.[request.name];
    const snapshot = cloneJson(this.#state);
    let response: UpdateResponse;
    try {
      if (!handler)
        throw new Error(`workflow type '${this.#record.type}' has no update named '${request.name}'`);
      const value = handler.handle(this.#state, request.arg);
      const stored = normalizePayload(value, `Result of update '${request.name}'`, maxPayloadBytes) as
        Json | undefined;
      encodePayload(
        this.#state,
        `State of workflow '${this.id}' after update '${request.name}'`,
        maxPayloadBytes,
      );
      response = {
        updateId: request.updateId,
        ok: true,
        ...(stored === undefined ? {} : { value: stored }),
        appliedAt: clock.now(),
        appliedBy: engineId,
      };
      turn.history.push({
        t: 'update',
        pos,
        updateId: request.updateId,
        name: request.name,
        ...(request.arg === undefined ? {} : { arg: request.arg }),
        stateAfter: cloneJson(this.#state),
      });
      turn.note('update-applied', { name: request.name, updateId: request.updateId });
    } catch (error) {
      reconcileInPlace(this.#state, snapshot);
      response = {
        updateId: request.updateId,
        ok: false,
        error: stripStack(serializeError(error)),
        appliedAt: clock.now(),
        appliedBy: engineId,
      };
      turn.note('update-rejected', {
        name: request.name,
        updateId: request.updateId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    turn.delete(requestKey);
    turn.put(keys.updateResponse(this.id, request.updateId), JSON.stringify(response));
    turn.kinds.push('update');
  }

  #recheckPredicates(turn: Turn): void {
    const frontier = this.#checkpoint.frontier;
    if (!frontier || !this.#command) return;
    const commands = leafCommands(this.#command);
    for (const leaf of frontier.leaves) {
      if (leaf.kind !== 'until' || leaf.done) continue;
      if (frontier.kind === 'race' && this.#resolutionOrder.length > 0) return;
      this.#evaluatePredicate(
        turn,
        leaf,
        (commands[leaf.member] as Extract<LeafCommand, { kind: 'until' }>).predicate,
      );
    }
  }

  async #readAndCheckCancel(turn: Turn): Promise<void> {
    this.#checkCancel(turn, await this.#host.storage.get(keys.cancelRequest(this.id)));
  }

  /** Delivers the cancel request `raw` (as read from storage; null when there is none). */
  #checkCancel(turn: Turn, raw: string | null): void {
    const key = keys.cancelRequest(this.id);
    if (raw === null) return;
    const request = decodeCancelRequest(key, raw);
    turn.delete(key);
    if (this.#checkpoint.cancel?.delivered) return; // cleanup after a delivered cancel is not cancelled again
    const frontier = this.#checkpoint.frontier;
    turn.note(
      'cancel-requested',
      request.reason
        ? { reason: request.reason, requestedBy: request.requestedBy }
        : { requestedBy: request.requestedBy },
    );
    this.#checkpoint = {
      ...this.#checkpoint,
      cancel: {
        ...(request.reason ? { reason: request.reason } : {}),
        requestedAt: request.requestedAt,
        delivered: true,
      },
    };
    if (!frontier) return;
    for (const leaf of frontier.leaves) {
      if (leaf.kind === 'child' && !leaf.done && leaf.closePolicy === 'await' && leaf.childId) {
        const childCancel = {
          reason: `parent '${this.id}' was cancelled`,
          requestedAt: this.#host.clock.now(),
          requestedBy: this.#host.engineId,
        };
        turn.put(keys.cancelRequest(leaf.childId), JSON.stringify(childCancel));
      }
    }
    const error = stripStack(serializeError(new CancelledError(request.reason)));
    const entry: Extract<HistoryEntry, { t: 'op' }> = {
      t: 'op',
      pos: frontier.pos,
      kind: frontier.kind,
      name: frontier.name,
      ok: false,
      error,
      cancelled: true,
    };
    turn.history.push(entry);
    this.#results.set(-1, entry);
    this.#resolutionOrder.push(-1);
    turn.kinds.push('cancel');
  }

  #childSettled(turn: Turn, childId: string, child: WorkflowRecord): void {
    const frontier = this.#checkpoint.frontier;
    const leaf = frontier?.leaves.find(
      (candidate) => candidate.kind === 'child' && candidate.childId === childId && !candidate.done,
    );
    if (!frontier || !leaf || !isTerminal(child.status)) return;
    turn.note('child-completed', { pos: frontier.pos, member: leaf.member, childId, status: child.status });
    if (child.status === 'completed')
      this.#resolveLeaf(
        turn,
        leaf,
        child.result === undefined ? { ok: true } : { ok: true, value: child.result },
      );
    else
      this.#resolveLeaf(turn, leaf, {
        ok: false,
        error: stripStack(
          serializeError(
            new ChildWorkflowFailedError(
              childId,
              child.status,
              child.error ?? (child.reason ? { name: 'Error', message: child.reason } : null),
            ),
          ),
        ),
      });
    turn.kinds.push('child');
  }

  // -------------------------------------------------------------------------------------------------------
  // Finishing

  /** Builds the terminal transition from how the generator ended. */
  #finish(turn: Turn, end: Step, engineFailure: boolean): void {
    const { clock, maxPayloadBytes } = this.#host;
    const cancelled = this.#checkpoint.cancel?.delivered === true && !engineFailure;
    let status: WorkflowStatus;
    let result: Json | undefined;
    let error: SerializedError | undefined;
    if (end.kind === 'return') {
      try {
        result = normalizePayload(end.value, `Result of workflow '${this.id}'`, maxPayloadBytes) as
          Json | undefined;
        status = cancelled ? 'cancelled' : 'completed';
      } catch (failure) {
        status = 'failed';
        error = stripStack(serializeError(failure));
      }
    } else {
      const thrown = end.kind === 'throw' ? end.error : new Error('unreachable');
      status = cancelled ? 'cancelled' : 'failed';
      error = serializeError(thrown);
    }
    const record: WorkflowRecord = {
      ...this.#record,
      status,
      ...(result === undefined ? {} : { result }),
      ...(error === undefined ? {} : { error }),
      ...(cancelled && this.#checkpoint.cancel?.reason ? { reason: this.#checkpoint.cancel.reason } : {}),
      endedAt: clock.now(),
    };
    if (status !== 'completed') delete record.result;
    this.#finalRecord = record;
    const frontier = this.#checkpoint.frontier;
    if (frontier)
      for (const leaf of frontier.leaves) if (leaf.timerKey && !leaf.done) turn.delete(leaf.timerKey);
    this.#abortAll('the workflow ended');
    if (this.#record.executionTimeoutMs !== undefined && this.#record.startedAt !== undefined)
      turn.delete(
        keys.timer(
          this.#record.startedAt + this.#record.executionTimeoutMs,
          this.id,
          `${this.#record.run}.execution`,
        ),
      );
    for (const signal of this.#signals) turn.delete(signal.key);
    this.#checkpoint = { ...this.#checkpoint, frontier: null };
    this.#command = null;
    turn.note(
      status,
      error
        ? { error: { name: error.name, message: error.message } }
        : result === undefined
          ? {}
          : { hasResult: true },
    );
    turn.kinds.push(status);
  }

  #finalRecord: WorkflowRecord | null = null;

  // -------------------------------------------------------------------------------------------------------
  // Commit

  async #commit(turn: Turn): Promise<void> {
    const host = this.#host;
    if (!this.isLive) return;
    const finalRecord = this.#finalRecord;
    if (!finalRecord) this.#markActivityStarts(turn);
    if (turn.isEmpty && !finalRecord) {
      this.#park();
      return;
    }
    const now = host.clock.now();
    const epoch = host.heldEpoch(this.id) ?? 0;
    const checkpoint: Checkpoint = {
      ...this.#checkpoint,
      historyLength: this.#checkpoint.historyLength + turn.history.length,
      timelineLength: this.#checkpoint.timelineLength + turn.timeline.length,
      ...nextLogCounters(this.#checkpoint),
      state: this.#state,
      updatedAt: now,
    };
    let checkpointRaw: string;
    try {
      checkpointRaw = this.#encodeCheckpoint(checkpoint);
    } catch (error) {
      if (finalRecord) throw error;
      // The workflow put something unstorable in ctx.state: it fails (deterministically) instead of looping.
      this.#state = {};
      this.#checkpoint = { ...this.#checkpoint, state: {} };
      const failTurn = new Turn();
      this.#finish(failTurn, { kind: 'throw', error }, true);
      return this.#commit(failTurn);
    }
    // One record of everything this commit appends, at the key the checkpoint it replaces names: its absence
    // is this commit's condition (workflow-writes.ts).
    const who = { engineId: host.engineId, epoch, now };
    const timeline = turn.timeline.map((note, index) =>
      timelineEntry(note, this.#checkpoint.timelineLength + index, who),
    );
    // A small checkpoint rides in the record (one storage request); the last commit and a large checkpoint
    // rewrite `wf-ckpt:` (checkpoint.ts).
    const carry = !finalRecord && checkpointRaw.length <= carriedCheckpointChars;
    const recordKey = commitRecordKey(this.id, this.#record.run, this.#checkpoint);
    const operations: StorageOperation[] = carry
      ? [
          {
            type: 'put',
            key: recordKey,
            value: encodeCommitRecord(timeline, turn.history, { checkpointRaw, epoch }),
          },
        ]
      : [
          { type: 'put', key: recordKey, value: encodeCommitRecord(timeline, turn.history) },
          { type: 'put', key: this.#checkpointKey, value: checkpointRaw },
        ];
    let recordRaw = this.#recordRaw;
    if (finalRecord) {
      recordRaw = JSON.stringify(finalRecord);
      operations.push({ type: 'put', key: keys.record(this.id), value: recordRaw });
      operations.push({ type: 'delete', key: keys.statusIndex(this.#record.status, this.id) });
      operations.push({
        type: 'put',
        key: keys.statusIndex(finalRecord.status, this.id),
        value: finalRecord.type,
      });
      operations.push(...host.releaseOperations(this.id));
    }
    operations.push(...turn.operations);
    const conditions: Condition[] =
      mutation() === 'unfenced-commit'
        ? [...turn.conditions]
        : [{ key: recordKey, expected: null }, ...turn.conditions];
    const outcome = await host.writer.write(
      this.id,
      conditions,
      operations,
      finalRecord ? `finish as ${finalRecord.status}` : `commit operation #${this.#checkpoint.position}`,
      { anchored: true },
    );
    if (!outcome.ok) {
      this.drop(outcome.reason === 'deposed' ? 'deposed' : 'lost-race');
      return;
    }
    host.metrics.operationsCommitted += turn.history.filter(isOperationEntry).length;
    this.#checkpoint = checkpoint;
    this.#recordRaw = recordRaw;
    host.runCommitted(this);
    if (turn.history.length > 0)
      host.emit({
        type: 'operation.committed',
        workflowId: this.id,
        position: checkpoint.position,
        kinds: turn.kinds,
      });
    for (const effect of turn.afterCommit) effect();
    if (finalRecord) {
      this.#record = finalRecord;
      this.#dispatch({ type: 'finished', status: finalRecord.status });
      host.runFinished(this, finalRecord);
      return;
    }
    this.#park();
    this.#startActivities();
  }

  /**
   * The checkpoint as stored. Checks that `ctx.state` is plain JSON data within the payload limit (the
   * frontier and counters around it are small and bounded).
   */
  #encodeCheckpoint(checkpoint: Checkpoint): string {
    const what = `State of workflow '${this.id}'`;
    assertPlainData(checkpoint.state, what);
    const raw = JSON.stringify(checkpoint);
    const limit = this.#host.maxPayloadBytes;
    if (raw.length * 3 > limit) {
      const stateBytes = utf8Bytes(JSON.stringify(checkpoint.state));
      if (stateBytes > limit) throw new PayloadTooLargeError(what, stateBytes, limit);
    }
    return raw;
  }

  /** This run's checkpoint key, built once. */
  get #checkpointKey(): string {
    return (this.#checkpointKeyCache ??= keys.checkpoint(this.id));
  }

  #checkpointKeyCache: string | null = null;

  #park(): void {
    if (!this.isLive) return;
    this.#dispatch({ type: 'parked', at: this.#host.clock.now(), epoch: this.#host.heldEpoch(this.id) ?? 0 });
  }
}

// ---------------------------------------------------------------------------------------------------------
