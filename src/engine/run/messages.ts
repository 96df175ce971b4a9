/**
 * Messages from one workflow to another, as operations of the sender (`ctx.signalWorkflow`,
 * `ctx.cancelWorkflow`): exactly once, across crashes and handoffs, because what they write for the target —
 * its buffered signal (and signal counter), its cancel request — joins the sender's turn commit, the same
 * atomic batch that records the operation. The batch is conditioned on what the write was planned from (the
 * target's record as read: it has not ended meanwhile; its signal counter: no other signal took the
 * number); when another writer got there first the commit fails, the sender's run is reloaded, replays to
 * the unrecorded operation and plans it again. A recorded operation is never sent again.
 *
 * A target that does not exist, or has ended, is the operation's recorded outcome (an error the workflow may
 * catch, or `'already-finished'` for a cancel), not the sender's failure.
 */
import { encodePayload, type Json } from '../codec';
import {
  CorruptRecordError,
  InvalidWorkflowStateError,
  WorkflowNotFoundError,
  serializeError,
} from '../errors';
import { keys } from '../keys';
import {
  decodeRecord,
  isTerminal,
  type CancelRequest,
  type HistoryEntry,
  type SignalRecord,
} from '../records';
import type { Command } from '../workflow';
import type { RunState } from './run-state';
import { entryOutcome, stripStack, type Outcome, type Turn } from './turn';

type MessageCommand = Extract<Command, { kind: 'signal-workflow' | 'cancel-workflow' }>;

/**
 * Plans `command` into `turn` (writes and conditions) and records its outcome at `pos`; returns the outcome
 * the generator gets.
 */
export async function sendMessage(
  run: Pick<RunState, 'id' | 'host'>,
  turn: Turn,
  command: MessageCommand,
  pos: number,
): Promise<Outcome> {
  let outcome: { ok: true; value?: Json } | { ok: false; error: unknown };
  try {
    outcome = await plan(run, turn, command);
  } catch (error) {
    outcome = { ok: false, error };
  }
  const entry: Extract<HistoryEntry, { t: 'op' }> = outcome.ok
    ? {
        t: 'op',
        pos,
        kind: command.kind,
        name: command.name,
        ok: true,
        ...(outcome.value === undefined ? {} : { value: outcome.value }),
      }
    : {
        t: 'op',
        pos,
        kind: command.kind,
        name: command.name,
        ok: false,
        error: stripStack(serializeError(outcome.error)),
      };
  turn.history.push(entry);
  turn.kinds.push(command.kind);
  if (outcome.ok && outcome.value !== 'already-finished')
    turn.note('message-sent', {
      pos,
      member: 0,
      to: command.workflowId,
      ...(command.kind === 'signal-workflow'
        ? { message: 'signal' as const, name: command.name }
        : { message: 'cancel' as const }),
    });
  // What the generator gets is built from the entry, exactly as a replay of it will build it.
  return entryOutcome(entry);
}

async function plan(
  run: Pick<RunState, 'id' | 'host'>,
  turn: Turn,
  command: MessageCommand,
): Promise<{ ok: true; value?: Json } | { ok: false; error: unknown }> {
  const { storage, clock, engineId, maxPayloadBytes } = run.host;
  const target = command.workflowId;
  const recordKey = keys.record(target);
  const [recordRaw] = await storage.getMany([recordKey]);
  if (!recordRaw) return { ok: false, error: new WorkflowNotFoundError(target) };
  const record = decodeRecord(recordKey, recordRaw);
  // The target must still be as read when the commit lands (it has not ended meanwhile).
  if (!turn.conditions.some((condition) => condition.key === recordKey))
    turn.conditions.push({ key: recordKey, expected: recordRaw });
  if (command.kind === 'cancel-workflow') {
    if (isTerminal(record.status)) return { ok: true, value: 'already-finished' };
    const request: CancelRequest = {
      ...(command.reason ? { reason: command.reason } : {}),
      requestedAt: clock.now(),
      requestedBy: engineId,
    };
    turn.put(keys.cancelRequest(target), JSON.stringify(request));
    return { ok: true, value: 'requested' };
  }
  if (isTerminal(record.status))
    return {
      ok: false,
      error: new InvalidWorkflowStateError(target, record.status, `signal '${command.name}'`),
    };
  const text = encodePayload(
    command.payload,
    `Payload of signal '${command.name}' to workflow '${target}'`,
    maxPayloadBytes,
  );
  // The signal's number: the counter as stored (conditioned on), or past the ones this turn took already.
  const counterKey = keys.signalCounter(target);
  let seq = turn.signalCounters.get(target);
  if (seq === undefined) {
    const counterRaw = await storage.get(counterKey);
    seq = counterRaw === null ? 0 : Number(counterRaw);
    if (!Number.isSafeInteger(seq) || seq < 0)
      throw new CorruptRecordError(counterKey, 'signal counter is not a non-negative integer');
    turn.conditions.push({ key: counterKey, expected: counterRaw });
  }
  const signal: SignalRecord = {
    name: command.name,
    ...(text === undefined ? {} : { payload: JSON.parse(text) as Json }),
    sentAt: clock.now(),
    sentBy: engineId,
  };
  turn.put(keys.signal(target, seq), JSON.stringify(signal));
  turn.signalCounters.set(target, seq + 1);
  // The counter's new value is written once, by the last signal of the turn to this target.
  const write = turn.operations.findIndex((op) => op.type === 'put' && op.key === counterKey);
  if (write >= 0) turn.operations.splice(write, 1);
  turn.put(counterKey, String(seq + 1));
  return { ok: true };
}
