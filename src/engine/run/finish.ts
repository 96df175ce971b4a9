/**
 * The end of a workflow: `finish` turns how the generator ended (returned, threw, or replay or the engine
 * failed it) into the terminal record — `completed`, `failed`, or `cancelled` after a delivered cancel — and
 * puts its clean-up into the turn: the frontier's timers, the execution-deadline timer and the unconsumed
 * signals deleted, running activities aborted, the terminal timeline entry. The turn's commit writes the
 * record (commit.ts); until it lands nothing outside the run knows the workflow ended.
 */
import { normalizePayload, type Json } from '../codec';
import { recordedFailure, serializeError, type SerializedError } from '../errors';
import { keys } from '../keys';
import type { WorkflowRecord } from '../records';
import type { WorkflowStatus } from '../vocabulary';
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
    'id' | 'host' | 'record' | 'checkpoint' | 'command' | 'signals' | 'running' | 'finalRecord'
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
  const frontier = run.checkpoint.frontier;
  if (frontier)
    for (const leaf of frontier.leaves) if (leaf.timerKey && !leaf.done) turn.delete(leaf.timerKey);
  abortAll(run, 'the workflow ended');
  if (run.record.executionTimeoutMs !== undefined && run.record.startedAt !== undefined)
    turn.delete(
      keys.timer(run.record.startedAt + run.record.executionTimeoutMs, run.id, `${run.record.run}.execution`),
    );
  for (const signal of run.signals) turn.delete(signal.key);
  run.checkpoint = { ...run.checkpoint, frontier: null };
  run.command = null;
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
