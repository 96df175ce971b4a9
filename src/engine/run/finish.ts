/**
 * The end of a workflow: `finish` turns how the generator ended (returned, threw, or replay or the engine
 * failed it) into the terminal record — `completed`, `failed`, or `cancelled` after a delivered cancel — and
 * puts its clean-up into the turn: the frontier's timers, the execution-deadline timer and the unconsumed
 * signals deleted, running activities aborted, the terminal timeline entry. The turn's commit writes the
 * record (commit.ts); until it lands nothing outside the run knows the workflow ended.
 */
import { normalizePayload, type Json } from '../codec';
import { WorkflowNotRegisteredError, recordedFailure, serializeError, type SerializedError } from '../errors';
import type { TimerRecord, WorkflowRecord } from '../records';
import type { WorkflowStatus } from '../vocabulary';
import { executionTimerKey } from '../workflow-writes';
import type { Command } from '../workflow';
import { abortAll } from './activities';
import type { RunState } from './run-state';
import { stripStack, type Step, type Turn } from './turn';

/**
 * Builds the terminal transition from how the generator ended (`engineFailure`: the engine failed it, so a
 * delivered cancel does not make it `cancelled`), and sets `run.finalRecord`.
 */
export function finish(
  run: Pick<
    RunState,
    'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'signals' | 'running' | 'heartbeats' | 'finalRecord'
  >,
  turn: Turn,
  end: Step,
  engineFailure: boolean,
): void {
  const { clock, maxPayloadBytes } = run.host;
  const cancelled = run.checkpoint.cancel?.delivered === true && !engineFailure;
  let status: WorkflowStatus;
  let result: Json | undefined;
  let error: SerializedError | undefined;
  if (end.kind === 'return') {
    try {
      result = normalizePayload(end.value, `Result of workflow '${run.id}'`, maxPayloadBytes) as
        Json | undefined;
      status = cancelled ? 'cancelled' : 'completed';
    } catch (failure) {
      status = 'failed';
      error = stripStack(serializeError(failure));
    }
  } else {
    const thrown = end.kind === 'throw' ? end.error : new Error('unreachable');
    status = cancelled ? 'cancelled' : 'failed';
    // The body's error with its stack, mapped by the host and bounded (errors.ts `recordedFailure`).
    error = recordedFailure(thrown, run.host.mapStack);
  }
  const record: WorkflowRecord = {
    ...run.record,
    status,
    ...(result === undefined ? {} : { result }),
    ...(error === undefined ? {} : { error }),
    ...(cancelled && run.checkpoint.cancel?.reason ? { reason: run.checkpoint.cancel.reason } : {}),
    endedAt: clock.now(),
  };
  if (status !== 'completed') delete record.result;
  run.finalRecord = record;
  endRun(run, turn, 'the workflow ended');
  for (const signal of run.signals) turn.delete(signal.key);
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

/** What every end of a run clears: the frontier's timers, running activities, the execution-deadline timer. */
function endRun(
  run: Pick<RunState, 'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'running' | 'heartbeats'>,
  turn: Turn,
  why: string,
): void {
  const frontier = run.checkpoint.frontier;
  if (frontier)
    for (const leaf of frontier.leaves) if (leaf.timerKey && !leaf.done) turn.delete(leaf.timerKey);
  abortAll(run, why);
  for (const key of run.heartbeats.forgetAll()) turn.delete(key);
  const executionKey = executionTimerKey(run.record);
  if (executionKey) turn.delete(executionKey);
  run.checkpoint = { ...run.checkpoint, frontier: null };
  run.command = null;
}

/**
 * `ctx.continueAsNew(input)` reached live: the run ends as `continued-as-new` (`run.finalRecord`) and
 * `run.continuation` is the next run's record, which the same commit creates (commit.ts), so that the id is
 * never without a running run and a crash leaves either the old run (which replays to this call and makes
 * it again) or the new one. The next run gets the input, the newest registered version (or the one asked
 * for), the parent link, the schedule and the rest of the execution deadline; buffered signals stay for it.
 * Where it cannot start — an unregistered version, an input that is not storable — the workflow fails
 * instead, saying why; after a delivered cancel it ends `cancelled` (as a return would).
 */
export function continueAsNew(
  run: Pick<
    RunState,
    | 'id'
    | 'host'
    | 'record'
    | 'checkpoint'
    | 'command'
    | 'signals'
    | 'running'
    | 'heartbeats'
    | 'finalRecord'
    | 'continuation'
  >,
  turn: Turn,
  command: Extract<Command, { kind: 'continue-as-new' }>,
): void {
  const { clock, maxPayloadBytes, engineId } = run.host;
  if (run.checkpoint.cancel?.delivered === true)
    return finish(run, turn, { kind: 'return', value: undefined }, false);
  const { type } = run.record;
  const definition = run.host.definition(type, command.version);
  let input: Json | undefined;
  try {
    if (!definition) throw new WorkflowNotRegisteredError(type, command.version);
    input = normalizePayload(
      command.input,
      `Input of the next run of workflow '${run.id}' (ctx.continueAsNew)`,
      maxPayloadBytes,
    ) as Json | undefined;
  } catch (error) {
    return finish(run, turn, { kind: 'throw', error }, true);
  }
  const now = clock.now();
  const ended: WorkflowRecord = { ...run.record, status: 'continued-as-new', endedAt: now };
  delete ended.result;
  delete ended.error;
  const { executionTimeoutMs, startedAt, parent, scheduledBy } = run.record;
  const deadline =
    executionTimeoutMs !== undefined && startedAt !== undefined ? startedAt + executionTimeoutMs : undefined;
  const next: WorkflowRecord = {
    v: 1,
    id: run.id,
    type,
    version: definition!.version,
    run: run.record.run + 1,
    status: 'running',
    ...(input === undefined ? {} : { input }),
    createdAt: now,
    startedAt: now,
    // The deadline is the workflow's, not the run's: the chain has what is left of it.
    ...(deadline === undefined ? {} : { executionTimeoutMs: Math.max(1, deadline - now) }),
    ...(parent ? { parent } : {}),
    ...(scheduledBy ? { scheduledBy } : {}),
    continuedFrom: run.record.run,
    // The chain stays in the trace it started in.
    ...(run.record.trace ? { trace: run.record.trace } : {}),
    // Search attributes go on with the workflow (their index keys name the id, not the run).
    ...(run.record.attributes ? { attributes: run.record.attributes } : {}),
    // So do its queue slots and its singleton key: continuing is not ending (queues/release.ts).
    ...(run.record.queue ? { queue: run.record.queue } : {}),
    ...(run.record.startKey ? { startKey: run.record.startKey } : {}),
    createdBy: engineId,
  };
  run.finalRecord = ended;
  run.continuation = next;
  endRun(run, turn, 'the run continued as new');
  const nextExecutionKey = executionTimerKey(next);
  if (nextExecutionKey) {
    const timer: TimerRecord = { workflowId: run.id, purpose: 'execution', run: next.run };
    turn.put(nextExecutionKey, JSON.stringify(timer));
    turn.afterCommit.push(() => run.host.timerArmed(now + next.executionTimeoutMs!));
  }
  turn.note('continued-as-new', { nextRun: next.run, version: next.version });
  turn.kinds.push('continued-as-new');
}
