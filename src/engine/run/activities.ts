/**
 * A run's activities: marking attempts started, running them (activity-attempt.ts), settling them into the
 * frontier (result recorded, or a retry armed under the retry policy, retry.ts), timeouts, external
 * completions, and aborting them.
 *
 * Guarantees:
 * - An attempt is marked started (timeline `activity-started`) by the commit that reaches it, and runs only
 *   after that commit landed: a deposed engine never starts one for a position its successor owns.
 * - An attempt marked started that is not running here was interrupted (its engine died or lost the
 *   workflow): it runs again as the next attempt (at-least-once), and the timeline shows both.
 * - A result is recorded before the generator sees it; a recorded activity never runs again. A result that
 *   cannot be stored fails the attempt; a stale settlement (an earlier attempt, a decided frontier) is
 *   ignored.
 * - An external activity's stored completion is taken into the run exactly once: the commit that settles the
 *   activity deletes it.
 */
import { encodePayload, type Json } from '../codec';
import {
  ActivityHeartbeatTimeoutError,
  ActivityFailedError,
  ActivityTimeoutError,
  CancelledError,
  recordedFailure,
  serializeError,
} from '../errors';
import type { SlotTicket } from '../activity-limits';
import { completionToken, decodeActivityCompletion } from '../external-activities';
import { keys } from '../keys';
import type { ActivityFunction, LeafCommand } from '../workflow';
import { storedTrace, type TracerSpan } from '../tracing';
import { ActivityAttempt, type AttemptOutcome } from './activity-attempt';
import { armTimer, leafAt, resolveLeaf } from './frontier';
import { nextRetryWait } from './retry';
import type { RunEvent } from './run-phase';
import type { RunState } from './run-state';
import { leafCommands, stripStack, type RunningActivity, type Turn } from './turn';

type ActivityEvent = Extract<RunEvent, { type: 'activity-settled' }>;

/** An attempt finished (result, error, or abort): records its result, or arms its retry, or fails it. */
export function activitySettled(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'results' | 'running'>,
  turn: Turn,
  event: ActivityEvent,
): void {
  const leaf = leafAt(run, event.pos, event.member);
  const running = run.running.get(event.member);
  if (running && running.attempt === event.attempt && leaf && leaf.attempt === event.attempt) {
    if (running.timeout !== undefined) run.host.clock.clearTimeout(running.timeout);
    if (running.heartbeatTimer !== undefined) run.host.clock.clearTimeout(running.heartbeatTimer);
    run.running.delete(event.member);
  }
  if (!leaf || leaf.done || leaf.kind !== 'activity' || leaf.attempt !== event.attempt || leaf.retrying)
    return; // stale
  const command = leafCommands(run.command!)[event.member] as Extract<LeafCommand, { kind: 'activity' }>;
  const now = run.host.clock.now();
  const pos = event.pos;
  let outcome = event.outcome;
  let stored: Json | undefined;
  if (outcome.ok) {
    try {
      const text = encodePayload(
        outcome.value,
        `Result of activity '${leaf.name}'`,
        run.host.maxPayloadBytes,
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
    resolveLeaf(run, turn, leaf, stored === undefined ? { ok: true } : { ok: true, value: stored });
    turn.kinds.push('activity');
    return;
  }
  // The attempt's error with its stack (mapped by the host, bounded): the timeline entry and, in the
  // ActivityFailedError's `failure`, the history keep it; replay never compares it.
  // Stored twice when it fails for good (timeline entry, history entry), within the turn's stack budget.
  const failure = turn.keepStack(recordedFailure(outcome.error, run.host.mapStack), 2);
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
    // The checkpoint keeps name and message only: it stays small (carried in the commit record, checkpoint.ts).
    leaf.lastError = stripStack(failure);
    armTimer(run, turn, leaf, 'retry', now + wait);
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
  resolveLeaf(run, turn, leaf, { ok: false, error: stripStack(serializeError(error)) });
  turn.kinds.push('activity');
}

/**
 * Before a commit: marks every activity attempt that will start once it lands, and notes it on the
 * timeline, so the start is durable before any activity code runs. An attempt already marked started but
 * not running here was interrupted (its engine died or lost the workflow): it runs again as the next
 * attempt, and the timeline shows both.
 */
export function markActivityStarts(
  run: Pick<RunState, 'checkpoint' | 'command' | 'running' | 'isLive'>,
  turn: Turn,
): void {
  const frontier = run.checkpoint.frontier;
  if (!frontier || !run.command || !run.isLive()) return;
  for (const leaf of frontier.leaves) {
    if (leaf.kind !== 'activity' || leaf.done || leaf.retrying || run.running.has(leaf.member)) continue;
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
export function startActivities(
  run: Pick<
    RunState,
    'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'running' | 'isLive' | 'deliver' | 'heartbeats'
  >,
): void {
  const frontier = run.checkpoint.frontier;
  if (!frontier || !run.command || !run.isLive()) return;
  const commands = leafCommands(run.command);
  for (const leaf of frontier.leaves) {
    if (
      leaf.kind !== 'activity' ||
      leaf.done ||
      leaf.retrying ||
      !leaf.started ||
      run.running.has(leaf.member)
    )
      continue;
    const command = commands[leaf.member] as Extract<LeafCommand, { kind: 'activity' }>;
    runActivity(run, frontier.pos, leaf.member, leaf.attempt ?? 1, command);
  }
}

function runActivity(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'running' | 'isLive' | 'deliver' | 'heartbeats'>,
  pos: number,
  member: number,
  attempt: number,
  command: Extract<LeafCommand, { kind: 'activity' }>,
): void {
  const { clock, activityLimits } = run.host;
  const startedAt = clock.now();
  // The limit group it counts against, if its group is limited (a Map lookup; nothing else when not).
  const group = activityLimits.groupOf(command.name, command.options.limit);
  // One span per attempt, in the workflow's trace, on the engine that runs it (attributes built only when
  // there is a tracer: this is every attempt's path).
  const span = run.host.tracing.start(
    'shuttle.activity',
    storedTrace(run.record.trace),
    () => ({
      'shuttle.workflow.id': run.id,
      'shuttle.workflow.type': run.record.type,
      'shuttle.workflow.run': run.record.run,
      'shuttle.engine.id': run.host.engineId,
      'shuttle.activity.name': command.name,
      'shuttle.activity.attempt': attempt,
      'shuttle.position': pos,
      'shuttle.member': member,
    }),
    'internal',
  );
  // A limited group: the attempt joins its line now and runs once it holds a slot; its timeout and heartbeat
  // timeout count from then. It is registered below at once, so an abort reaches it while it waits.
  const slot =
    group === undefined
      ? undefined
      : activityLimits.acquire(group, command.name, { workflowId: run.id, position: pos, member, attempt });
  const running = new ActivityAttempt({
    attempt,
    startedAt,
    timeoutMs: command.options.timeoutMs,
    heartbeatTimeoutMs: command.options.heartbeatTimeoutMs,
    waiting: slot !== undefined,
    onSettled: (outcome) => {
      // Its slot goes back when the function returns or throws, or when the attempt is aborted.
      slot?.release();
      endActivitySpan(span, outcome);
      run.deliver({ type: 'activity-settled', pos, member, attempt, startedAt, outcome });
    },
  });
  run.running.set(member, running);
  // An external activity may have been completed already (before a takeover, say): look at once.
  if (command.options.completion === 'external') run.deliver({ type: 'completions' });
  if (slot === undefined) {
    callActivity(run, pos, member, attempt, command, running, span, undefined);
    return;
  }
  const begin = (held: boolean) => {
    if (!held) return; // aborted while it waited: it never runs
    if (running.over || run.running.get(member) !== running || !run.isLive()) {
      slot.release(); // settled meanwhile (an external completion, the workflow moved on)
      return;
    }
    running.begin(clock.now());
    callActivity(run, pos, member, attempt, command, running, span, slot);
  };
  if (slot.held) begin(true);
  else void slot.granted.then(begin);
}

/** Arms the attempt's timeouts and calls its function (through the interceptors and the tracer). */
function callActivity(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'isLive' | 'deliver' | 'heartbeats'>,
  pos: number,
  member: number,
  attempt: number,
  command: Extract<LeafCommand, { kind: 'activity' }>,
  running: ActivityAttempt,
  span: TracerSpan,
  slot: SlotTicket | undefined,
): void {
  const { clock } = run.host;
  const { timeoutMs, heartbeatTimeoutMs } = command.options;
  if (timeoutMs !== undefined && !run.host.manualTimers)
    running.timeout = clock.setTimeout(
      () => running.abort(new ActivityTimeoutError(command.name, timeoutMs)),
      timeoutMs,
    );
  if (heartbeatTimeoutMs !== undefined && !run.host.manualTimers) {
    // One timer, re-armed for what is left when it finds a heartbeat came meanwhile.
    const check = () => {
      running.heartbeatTimer = undefined;
      if (running.over) return;
      const left = running.heartbeatDeadline! - clock.now();
      if (left <= 0) running.abort(new ActivityHeartbeatTimeoutError(command.name, heartbeatTimeoutMs));
      else running.heartbeatTimer = clock.setTimeout(check, left);
    };
    running.heartbeatTimer = clock.setTimeout(check, heartbeatTimeoutMs);
  }
  run.host.metrics.activitiesRun++;
  run.host.emit({ type: 'activity.started', workflowId: run.id, name: command.name, attempt });
  const external = command.options.completion === 'external';
  const interceptors = run.host.activityInterceptors;
  const fn =
    interceptors.length === 0
      ? command.fn
      : interceptors.reduceRight<ActivityFunction<unknown>>(
          (next, interceptor) => (context) =>
            interceptor(
              {
                workflowId: run.id,
                workflowType: run.record.type,
                run: run.record.run,
                activity: command.name,
                position: pos,
                member,
                context,
              },
              next,
            ),
          command.fn,
        );
  const traced: ActivityFunction<unknown> = run.host.tracing.enabled
    ? (context) => run.host.tracing.within(span, () => fn(context))
    : fn;
  // A later attempt starts from the last heartbeat of the earlier ones (recorded here, or read when the run
  // was loaded: they ran elsewhere).
  running.run(
    traced,
    external ? completionToken(run.id, run.record.run, pos, member) : undefined,
    (details) => {
      if (!run.isLive()) return;
      running.beat(clock.now());
      run.heartbeats.beat(pos, member, attempt, details);
      run.host.emit({
        type: 'activity.heartbeat',
        workflowId: run.id,
        name: command.name,
        attempt,
        ...(details === undefined ? {} : { details }),
      });
    },
    // It waits on the outside now: its slot goes back (the wait holds none); look for a completion that
    // came while it ran (and let idle callers go).
    () => {
      slot?.release();
      run.deliver({ type: 'completions' });
    },
    attempt === 1 ? undefined : run.heartbeats.previous(pos, member),
  );
}

function endActivitySpan(span: TracerSpan, outcome: AttemptOutcome): void {
  if (outcome.ok) span.setAttributes({ 'shuttle.activity.outcome': 'completed' });
  else {
    const name = outcome.error instanceof Error ? outcome.error.name : 'Error';
    span.setAttributes({
      'shuttle.activity.outcome': name === 'CancelledError' ? 'aborted' : 'failed',
      'shuttle.activity.error': name,
    });
    span.recordError(outcome.error);
  }
  span.end();
}

/** Manual mode: aborts activity attempts whose timeout has passed. */
export function checkActivityDeadlines(run: Pick<RunState, 'command' | 'running'>, now: number): void {
  if (!run.command) return;
  const commands = leafCommands(run.command);
  for (const [member, running] of run.running) {
    if (running.aborted) continue;
    const command = commands[member] as Extract<LeafCommand, { kind: 'activity' }> | undefined;
    const name = command?.name ?? 'activity';
    if (running.deadline !== undefined && now >= running.deadline)
      running.abort(new ActivityTimeoutError(name, command?.options.timeoutMs ?? 0));
    else if (running.heartbeatDeadline !== undefined && now >= running.heartbeatDeadline)
      running.abort(new ActivityHeartbeatTimeoutError(name, running.heartbeatTimeoutMs!));
  }
}

/**
 * Takes the stored completions of this run's waiting external activities into the run: each settles its
 * activity like a finished attempt, and is deleted by the same commit (so it is taken exactly once).
 */
export async function takeCompletions(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'results' | 'running'>,
  turn: Turn,
): Promise<void> {
  const frontier = run.checkpoint.frontier;
  if (!frontier) return;
  const waiting = frontier.leaves.filter((leaf) => leaf.external === true && !leaf.done);
  if (waiting.length === 0) return;
  const completionKeys = waiting.map((leaf) =>
    keys.activityCompletion(run.id, run.record.run, frontier.pos, leaf.member),
  );
  const raws = await run.host.storage.getMany(completionKeys);
  for (const [index, leaf] of waiting.entries()) {
    const raw = raws[index];
    if (!raw || leaf.done || leaf.retrying || run.checkpoint.frontier !== frontier) continue;
    const completion = decodeActivityCompletion(completionKeys[index]!, raw);
    turn.delete(completionKeys[index]!);
    const attempt = leaf.attempt ?? 1;
    activitySettled(run, turn, {
      type: 'activity-settled',
      pos: frontier.pos,
      member: leaf.member,
      attempt,
      startedAt: run.running.get(leaf.member)?.startedAt ?? completion.at,
      outcome: completion.ok
        ? { ok: true, value: completion.value }
        : {
            ok: false,
            // No stack: this error was made here from the completion's name and message.
            error: Object.assign(new Error(completion.error.message), {
              name: completion.error.name,
              stack: undefined,
            }),
          },
    });
  }
}

/** Aborts every running attempt (the run stops, or the workflow ended). */
export function abortAll(run: Pick<RunState, 'host' | 'running'>, why: string): void {
  for (const [member, running] of run.running) abortActivity(run, member, running, why);
}

/** Aborts one running attempt: it settles with `CancelledError(why)`, and is forgotten. */
export function abortActivity(
  run: Pick<RunState, 'host' | 'running'>,
  member: number,
  running: RunningActivity,
  why: string,
): void {
  if (running.timeout !== undefined) run.host.clock.clearTimeout(running.timeout);
  if (running.heartbeatTimer !== undefined) run.host.clock.clearTimeout(running.heartbeatTimer);
  running.abort(new CancelledError(why));
  run.running.delete(member);
}
