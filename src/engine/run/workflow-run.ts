/**
 * One workflow's execution on this engine: replay from storage, then turns driven by wake events.
 * `WorkflowRun` holds the run's lifecycle, its mailbox, the turn loop and the commit; the rest of the run is
 * in modules that share its memory (run-state.ts): replay.ts (replay and the determinism check), frontier.ts
 * (arming and resolving the operation waited on), activities.ts, event-handlers.ts (timers, signals, updates,
 * cancellation, children, resync), finish.ts (the terminal transition) and commit.ts (the batch a turn
 * writes).
 *
 * Guarantees of this module:
 * - **Replay**: the generator is re-run from the start and fed the recorded results in order; an operation
 *   whose kind or name differs from the recorded one fails the workflow with `NonDeterminismError`. Update
 *   entries restore the state their handler produced at the position it was applied (replay.ts).
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
import { WorkflowVersionMismatchError } from '../errors';
import { uuidFrom } from '../ids';
import { storedTrace } from '../tracing';
import { keys } from '../keys';
import type { Checkpoint, WorkflowRecord } from '../records';
import type { AnyWorkflowDefinition, Command, WorkflowContext } from '../workflow';
import {
  abortActivity,
  abortAll,
  activitySettled,
  checkActivityDeadlines,
  markActivityStarts,
  startActivities,
  takeCompletions,
} from './activities';
import { commitBatch, encodeCheckpoint, nextCheckpoint } from './commit';
import { createContext } from './context';
import { childSettled, readAndApplyUpdates, readAndCheckCancel, resync, timerFired } from './event-handlers';
import { continueAsNew, finish } from './finish';
import { Heartbeats } from './heartbeats';
import { arm, consumeSignals, refreshSignals } from './frontier';
import { loadWorkflow, type LoadedWorkflow } from './load';
import { sendMessage } from './messages';
import { setAttributes } from './attributes';
import { replay } from './replay';
import type { RunHost } from './run-host';
import {
  reduceRunPhase,
  wakeKindOf,
  type DropReason,
  type PhaseAction,
  type RunEvent,
  type RunPhase,
} from './run-phase';
import { FrontierResults, type RunState } from './run-state';
import { Turn, isCommand, isOperationEntry, resumeGenerator, type Step } from './turn';

export type { ChildPlan, ChildRequest, RunHost } from './run-host';
export type { DropReason, RunEvent, RunPhase } from './run-phase';

// ---------------------------------------------------------------------------------------------------------

export class WorkflowRun {
  readonly id: string;
  #phase: RunPhase = { tag: 'loading' };
  /** What the run knows (run-state.ts), shared with the modules that drive it. */
  readonly #run: RunState;
  #recordRaw: string;
  #ctx: WorkflowContext;
  /** The first live advance after replay, when the history ended exactly at an unrecorded command. */
  #pendingLiveCommand: Command | null = null;
  #mailbox: RunEvent[] = [];
  #draining = false;
  #idleWaiters: (() => void)[] = [];

  private constructor(host: RunHost, definition: AnyWorkflowDefinition | null, loaded: LoadedWorkflow) {
    this.id = loaded.record.id;
    this.#run = {
      id: this.id,
      host,
      definition,
      record: loaded.record,
      checkpoint: loaded.checkpoint,
      state: {},
      replaying: false,
      generator: null,
      command: null,
      results: new FrontierResults(),
      signals: loaded.signals,
      signalsStale: false,
      running: new Map(),
      heartbeats: new Heartbeats(host, loaded.record.id, loaded.record.run),
      finalRecord: null,
      continuation: null,
      isLive: () => this.isLive,
      deliver: (event) => this.deliver(event),
    };
    this.#recordRaw = loaded.recordRaw;
    const run = this.#run;
    run.heartbeats.loaded(loaded.heartbeats);
    this.#ctx = createContext({
      workflowId: this.id,
      workflowType: run.record.type,
      version: run.record.version,
      ...(definition?.attributes ? { attributes: definition.attributes } : {}),
      get state() {
        return run.state;
      },
      get isReplaying() {
        return run.replaying;
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
    // An engine takes the run up (a start, a recovery, a takeover, a handoff): in the workflow's trace.
    const span = host.tracing.start('shuttle.workflow.load', storedTrace(loaded.record.trace), {
      'shuttle.workflow.id': workflowId,
      'shuttle.workflow.type': loaded.record.type,
      'shuttle.workflow.run': loaded.record.run,
      'shuttle.engine.id': host.engineId,
      'shuttle.epoch': held ?? 0,
      'shuttle.position': loaded.checkpoint.position,
      'shuttle.history.length': loaded.history.length,
    });
    if (!definition) {
      // Registered under another version only (the engine never loads a type it lacks entirely).
      run.#pendingFailure = new WorkflowVersionMismatchError(
        workflowId,
        loaded.record.type,
        loaded.record.version,
        candidates.map((d) => d.version),
      );
      span.recordError(run.#pendingFailure);
      span.end();
      return run;
    }
    const replayed = replay(run.#run, run.#ctx, loaded.history);
    run.#replayEnd = replayed.end;
    run.#pendingLiveCommand = replayed.pendingLiveCommand;
    run.#pendingFailure = replayed.failure;
    if (replayed.failure) span.recordError(replayed.failure);
    span.end();
    return run;
  }

  #pendingFailure: Error | null = null;
  /** The history ends where the code ends: the run finishes on its first turn. */
  #replayEnd: Step | null = null;

  get phase(): RunPhase {
    return this.#phase;
  }

  get record(): WorkflowRecord {
    return this.#run.record;
  }

  get checkpoint(): Checkpoint {
    return this.#run.checkpoint;
  }

  get isLive(): boolean {
    return this.#phase.tag !== 'finished' && this.#phase.tag !== 'dropped';
  }

  /** Activity and child leaves and signal/update interest, for the engine's polls. */
  /** Whether an external activity of the frontier waits for its completion (completeActivity). */
  get waitsOnCompletions(): boolean {
    return (
      this.#run.checkpoint.frontier?.leaves.some((leaf) => leaf.external === true && !leaf.done) ?? false
    );
  }

  get waitsOnSignals(): boolean {
    return (
      this.#run.checkpoint.frontier?.leaves.some((leaf) => leaf.kind === 'signal' && !leaf.done) ?? false
    );
  }

  /**
   * Whether this run waits (close policy `await`) on the child `childId`. Allocates nothing: it is asked of
   * every run on every record change the change feed reports.
   */
  awaitsChild(childId: string): boolean {
    const leaves = this.#run.checkpoint.frontier?.leaves;
    if (!leaves) return false;
    for (const leaf of leaves)
      if (leaf.kind === 'child' && !leaf.done && leaf.childId === childId && leaf.closePolicy === 'await')
        return true;
    return false;
  }

  get awaitedChildren(): string[] {
    return (this.#run.checkpoint.frontier?.leaves ?? [])
      .filter((leaf) => leaf.kind === 'child' && !leaf.done && leaf.childId && leaf.closePolicy === 'await')
      .map((leaf) => leaf.childId!);
  }

  /** A turn is running or queued. */
  get isTurning(): boolean {
    return this.#draining || this.#mailbox.length > 0;
  }

  /**
   * A turn is running or queued, or an activity attempt runs here (an external one whose function returned
   * waits on the outside, not on this engine).
   */
  get hasWork(): boolean {
    if (this.#draining || this.#mailbox.length > 0) return true;
    for (const attempt of this.#run.running.values()) if (!attempt.awaitingCompletion) return true;
    return false;
  }

  #dispatch(action: PhaseAction): void {
    this.#phase = reduceRunPhase(this.#phase, action);
  }

  // -------------------------------------------------------------------------------------------------------
  // Mailbox

  /**
   * A signal for this workflow was written (the change feed, or `signal` on this engine). A run waiting on
   * signals takes it now; one busy with something else (an activity in flight, a timer) only notes that its
   * buffered signals changed, and reads them again when it reaches `waitForSignal` — no wake, so nothing
   * runs (not even the wake guard's read) for a signal it does not wait for yet.
   */
  signalsArrived(): void {
    if (!this.isLive) return;
    if (this.waitsOnSignals) this.deliver({ type: 'signals' });
    else this.#run.signalsStale = true;
  }

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
    abortAll(
      this.#run,
      reason === 'shutdown' ? 'engine shutting down' : `workflow no longer driven here (${reason})`,
    );
    this.#mailbox = [];
    this.#run.heartbeats.forgetAll(); // their keys stay: the next driver's attempts start from them
    this.#run.host.runDropped(this, reason, error);
    this.#notifyIfIdle();
  }

  /** Manual mode: aborts activity attempts whose timeout has passed. */
  checkActivityDeadlines(now: number): void {
    checkActivityDeadlines(this.#run, now);
  }

  // -------------------------------------------------------------------------------------------------------
  // Turns

  async #handle(event: RunEvent): Promise<void> {
    const run = this.#run;
    const wake = wakeKindOf(event, run.checkpoint.frontier);
    const parkedEpoch =
      this.#phase.tag === 'idle'
        ? this.#phase.parkedEpoch
        : this.#phase.tag === 'loading'
          ? (run.host.heldEpoch(this.id) ?? 0)
          : null;
    if (wake && parkedEpoch !== null) {
      const proceed = await run.host.guardWake(this.id, wake, parkedEpoch);
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
      finish(run, turn, { kind: 'throw', error }, true);
    } else if (this.#replayEnd) {
      const end = this.#replayEnd;
      this.#replayEnd = null;
      finish(run, turn, end, false);
    } else {
      if (this.#pendingLiveCommand) {
        const command = this.#pendingLiveCommand;
        this.#pendingLiveCommand = null;
        await this.#advance(turn, { kind: 'yield', command });
      }
      if (this.isLive && !run.finalRecord) await this.#apply(turn, event);
    }
    await this.#commit(turn);
  }

  async #apply(turn: Turn, event: RunEvent): Promise<void> {
    const run = this.#run;
    switch (event.type) {
      case 'resync':
        await resync(run, turn);
        break;
      case 'activity-settled':
        activitySettled(run, turn, event);
        break;
      case 'timer':
        timerFired(run, turn, event.key);
        break;
      case 'signals':
        await refreshSignals(run, turn);
        consumeSignals(run, turn);
        break;
      case 'completions':
        await takeCompletions(run, turn);
        break;
      case 'updates':
        await readAndApplyUpdates(run, turn);
        break;
      case 'cancel':
        await readAndCheckCancel(run, turn);
        break;
      case 'child-settled':
        childSettled(run, turn, event.childId, event.record);
        break;
    }
    await this.#continueIfComplete(turn);
  }

  /** If the frontier is complete, move the generator on (possibly through several operations). */
  async #continueIfComplete(turn: Turn): Promise<void> {
    const run = this.#run;
    if (!run.command || !run.checkpoint.frontier) return;
    const outcome = run.results.outcome(run.command);
    if (!outcome) return;
    this.#closeFrontier(turn);
    await this.#advance(turn, resumeGenerator(run.generator!, outcome));
  }

  /** Leaves the frontier: deletes timers of unfinished leaves, aborts their activities. */
  #closeFrontier(turn: Turn): void {
    const run = this.#run;
    const frontier = run.checkpoint.frontier!;
    for (const leaf of frontier.leaves) {
      if (leaf.timerKey && !leaf.done) turn.delete(leaf.timerKey);
      const running = run.running.get(leaf.member);
      if (running)
        abortActivity(run, leaf.member, running, 'the operation was decided without this activity');
      const heartbeat = leaf.kind === 'activity' ? run.heartbeats.forget(frontier.pos, leaf.member) : null;
      if (heartbeat) turn.delete(heartbeat);
    }
    run.checkpoint = { ...run.checkpoint, frontier: null, position: frontier.pos + 1 };
    run.command = null;
    run.results.clear();
    turn.dirty = true;
  }

  /** Runs the generator from `step` until it waits on something or ends. */
  async #advance(turn: Turn, step: Step): Promise<void> {
    const run = this.#run;
    let current = step;
    for (;;) {
      if (current.kind !== 'yield') {
        finish(run, turn, current, false);
        return;
      }
      const command = current.command;
      if (!isCommand(command)) {
        current = resumeGenerator(run.generator!, {
          ok: false,
          error: new TypeError(
            `A workflow may only yield ctx operations (use yield* ctx.<operation>(…)); it yielded ${typeof command}.`,
          ),
        });
        continue;
      }
      const pos = run.checkpoint.position;
      if (command.kind === 'continue-as-new') {
        continueAsNew(run, turn, command);
        return;
      }
      if (command.kind === 'signal-workflow' || command.kind === 'cancel-workflow') {
        // Sent by this turn's commit, with the entry that records it (run/messages.ts).
        const outcome = await sendMessage(run, turn, command, pos);
        if (!this.isLive) return;
        run.checkpoint = { ...run.checkpoint, position: pos + 1 };
        current = resumeGenerator(run.generator!, outcome);
        continue;
      }
      if (command.kind === 'set-attributes') {
        // Written by this turn's commit, with the entry that records it (run/attributes.ts).
        const outcome = setAttributes(run, turn, command, pos);
        run.checkpoint = { ...run.checkpoint, position: pos + 1 };
        current = resumeGenerator(run.generator!, outcome);
        continue;
      }
      if (command.kind === 'patch') {
        // Reached live: the run takes the patch, recorded so that its replays do too (replay.ts). A
        // deprecated patch records nothing: new runs no longer need the marker.
        if (!command.deprecated) {
          turn.history.push({ t: 'op', pos, kind: 'patch', name: command.name, ok: true, value: true });
          run.checkpoint = { ...run.checkpoint, position: pos + 1 };
        }
        current = resumeGenerator(run.generator!, { ok: true, value: command.deprecated ? undefined : true });
        continue;
      }
      if (command.kind === 'now' || command.kind === 'random' || command.kind === 'uuid') {
        const value =
          command.kind === 'now'
            ? run.host.clock.now()
            : command.kind === 'random'
              ? run.host.random()
              : uuidFrom(run.host.random);
        turn.history.push({ t: 'op', pos, kind: command.kind, name: command.name, ok: true, value });
        run.checkpoint = { ...run.checkpoint, position: pos + 1 };
        current = resumeGenerator(run.generator!, { ok: true, value });
        continue;
      }
      await arm(run, turn, command, pos);
      if (!this.isLive) return;
      const outcome = run.results.outcome(command);
      if (!outcome) return; // parked (or running activities)
      this.#closeFrontier(turn);
      current = resumeGenerator(run.generator!, outcome);
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Commit

  async #commit(turn: Turn): Promise<void> {
    const run = this.#run;
    const host = run.host;
    if (!this.isLive) return;
    const finalRecord = run.finalRecord;
    if (!finalRecord) markActivityStarts(run, turn);
    if (turn.isEmpty && !finalRecord) {
      this.#park();
      return;
    }
    // A heartbeat write in flight lands before a commit that may delete its key (heartbeats.ts).
    if (run.heartbeats.writing) await run.heartbeats.settled();
    if (!this.isLive) return;
    const now = host.clock.now();
    const epoch = host.heldEpoch(this.id) ?? 0;
    const checkpoint = nextCheckpoint(run, turn, now);
    let checkpointRaw: string;
    try {
      checkpointRaw = encodeCheckpoint(this.id, checkpoint, host.maxPayloadBytes);
    } catch (error) {
      if (finalRecord) throw error;
      // The workflow put something unstorable in ctx.state: it fails (deterministically) instead of looping.
      run.state = {};
      run.checkpoint = { ...run.checkpoint, state: {} };
      const failTurn = new Turn();
      finish(run, failTurn, { kind: 'throw', error }, true);
      return this.#commit(failTurn);
    }
    const { conditions, operations, recordRaw } = commitBatch(run, turn, {
      checkpoint,
      checkpointRaw,
      epoch,
      now,
      finalRecord,
      recordRaw: this.#recordRaw,
      checkpointKey: () => this.#checkpointKey,
    });
    const outcome = await host.writer.write(
      this.id,
      conditions,
      operations,
      finalRecord
        ? run.continuation
          ? `continue as new (run ${run.continuation.run})`
          : `finish as ${finalRecord.status}`
        : `commit operation #${run.checkpoint.position}`,
      { anchored: true },
    );
    if (!outcome.ok) {
      this.drop(outcome.reason === 'deposed' ? 'deposed' : 'lost-race');
      return;
    }
    host.metrics.operationsCommitted += turn.history.filter(isOperationEntry).length;
    run.checkpoint = checkpoint;
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
      run.record = finalRecord;
      this.#dispatch({ type: 'finished', status: finalRecord.status });
      host.runFinished(this, finalRecord);
      return;
    }
    this.#park();
    startActivities(run);
  }

  /** This run's checkpoint key, built once. */
  get #checkpointKey(): string {
    return (this.#checkpointKeyCache ??= keys.checkpoint(this.id));
  }

  #checkpointKeyCache: string | null = null;

  #park(): void {
    if (!this.isLive) return;
    this.#dispatch({
      type: 'parked',
      at: this.#run.host.clock.now(),
      epoch: this.#run.host.heldEpoch(this.id) ?? 0,
    });
  }
}
