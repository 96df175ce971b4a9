/**
 * What a turn learns from each event in the run's mailbox (run-phase.ts `RunEvent`), other than activities
 * (activities.ts): a durable timer fired, signals or update requests or a cancel request were stored, a child
 * ended, and the resync after a load that looks for everything that happened while nobody drove the
 * workflow. Each handler reads what it needs, settles leaves of the frontier (frontier.ts), and puts its
 * writes in the turn — deleting what it consumed (signals, requests, fired timers) in the same commit.
 *
 * Guarantees:
 * - Signals are consumed once each, oldest first (handed to waiting leaves by frontier.ts
 *   `consumeSignals`); updates are applied once each, in request order, and each writes its response with
 *   the state change; a stale timer (already handled, an earlier position) is ignored.
 * - A cancel request is delivered once: the operation waited on throws `CancelledError`, awaited children
 *   are asked to cancel too, and the cleanup operations that follow are not cancelled again.
 */
import { cloneJson, encodePayload, normalizePayload, type Json } from '../codec';
import { CancelledError, ChildWorkflowFailedError, recordedFailure, serializeError } from '../errors';
import { keys } from '../keys';
import { storedTrace } from '../tracing';
import { composeInterceptors } from '../workflow';
import {
  decodeCancelRequest,
  decodeRecord,
  decodeUpdateRequest,
  isTerminal,
  type HistoryEntry,
  type UpdateRequest,
  type UpdateResponse,
  type WorkflowRecord,
} from '../records';
import { consumeSignals, recheckPredicates, resolveLeaf } from './frontier';
import type { RunState } from './run-state';
import { reconcileInPlace, stripStack, type Turn } from './turn';

/** After load: find everything that happened while nobody drove the workflow. */
export async function resync(
  run: Pick<
    RunState,
    'id' | 'host' | 'definition' | 'record' | 'checkpoint' | 'state' | 'command' | 'results' | 'signals'
  >,
  turn: Turn,
): Promise<void> {
  const frontier = run.checkpoint.frontier;
  if (!frontier) return;
  // Both read at once, applied in order (a handoff waits on this).
  const [cancelRaw, updateEntries] = await Promise.all([
    run.host.storage.get(keys.cancelRequest(run.id)),
    run.host.storage.scan(keys.updateRequestPrefix(run.id)),
  ]);
  checkCancel(run, turn, cancelRaw);
  if (run.checkpoint.frontier !== frontier) return;
  applyUpdates(run, turn, updateEntries);
  consumeSignals(run, turn);
  const now = run.host.clock.now();
  for (const leaf of frontier.leaves) {
    if (leaf.done || !leaf.timerKey || leaf.dueAt === undefined) continue;
    if (leaf.dueAt <= now) timerFired(run, turn, leaf.timerKey);
    else run.host.timerArmed(leaf.dueAt);
  }
  const childIds = frontier.leaves
    .filter((leaf) => leaf.kind === 'child' && !leaf.done && leaf.closePolicy === 'await' && leaf.childId)
    .map((leaf) => leaf.childId!);
  if (childIds.length > 0) {
    const raws = await run.host.storage.getMany(childIds.map((id) => keys.record(id)));
    raws.forEach((raw, index) => {
      if (!raw) return;
      const record = decodeRecord(keys.record(childIds[index]!), raw);
      if (isTerminal(record.status)) childSettled(run, turn, record.id, record);
    });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Timers

/** A durable timer of the frontier fired: a sleep ends, a wait times out, a retry backoff is over. */
export function timerFired(run: Pick<RunState, 'checkpoint' | 'results'>, turn: Turn, key: string): void {
  const frontier = run.checkpoint.frontier;
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
  if (leaf.kind === 'sleep') resolveLeaf(run, turn, leaf, { ok: true });
  else if (leaf.kind === 'signal') resolveLeaf(run, turn, leaf, { ok: true });
  else if (leaf.kind === 'until') {
    resolveLeaf(run, turn, leaf, { ok: true, value: false });
    turn.note('wait-completed', { pos: frontier.pos, member: leaf.member, satisfied: false });
  }
  turn.kinds.push(leaf.kind);
}

// ---------------------------------------------------------------------------------------------------------
// Updates

export async function readAndApplyUpdates(
  run: Pick<
    RunState,
    'id' | 'host' | 'definition' | 'record' | 'checkpoint' | 'state' | 'command' | 'results'
  >,
  turn: Turn,
): Promise<void> {
  if (!run.checkpoint.frontier) return;
  applyUpdates(run, turn, await run.host.storage.scan(keys.updateRequestPrefix(run.id)));
}

/** Applies the update requests `entries` (as scanned from storage) in the order they were requested. */
function applyUpdates(
  run: Pick<
    RunState,
    'id' | 'host' | 'definition' | 'record' | 'checkpoint' | 'state' | 'command' | 'results'
  >,
  turn: Turn,
  entries: readonly { key: string; value: string }[],
): void {
  const frontier = run.checkpoint.frontier;
  if (!frontier) return;
  const requests = entries
    .map(({ key, value }) => ({ key, request: decodeUpdateRequest(key, value) }))
    .sort((a, b) => a.request.requestedAt - b.request.requestedAt || (a.key < b.key ? -1 : 1));
  for (const { key, request } of requests) applyUpdate(run, turn, key, request);
  if (requests.length > 0) recheckPredicates(run, turn);
}

/**
 * Runs the update handler on the state and writes its response; the state it produced is recorded in
 * history at this position. A handler that throws (or leaves unstorable state) changes nothing: the state
 * is put back and the update is rejected.
 */
function applyUpdate(
  run: Pick<RunState, 'id' | 'host' | 'definition' | 'record' | 'checkpoint' | 'state'>,
  turn: Turn,
  requestKey: string,
  request: UpdateRequest,
): void {
  const { clock, engineId, maxPayloadBytes } = run.host;
  const pos = run.checkpoint.frontier!.pos;
  const handler = run.definition?.updates?.[request.name];
  const snapshot = cloneJson(run.state);
  let response: UpdateResponse;
  // Applied here, in the workflow's trace.
  const span = run.host.tracing.start('shuttle.update.apply', storedTrace(run.record.trace), {
    'shuttle.workflow.id': run.id,
    'shuttle.workflow.type': run.record.type,
    'shuttle.workflow.run': run.record.run,
    'shuttle.engine.id': engineId,
    'shuttle.update.name': request.name,
    'shuttle.update.id': request.updateId,
    'shuttle.position': pos,
  });
  try {
    if (!handler) throw new Error(`workflow type '${run.record.type}' has no update named '${request.name}'`);
    const handle = (arg: unknown) => handler.handle(run.state, arg);
    const interceptors = run.host.workflowInterceptors;
    const value = interceptors.some((interceptor) => interceptor.update)
      ? composeInterceptors(
          interceptors,
          'update',
          {
            workflowId: run.id,
            workflowType: run.record.type,
            version: run.record.version,
            run: run.record.run,
            name: request.name,
            updateId: request.updateId,
            arg: request.arg,
            state: run.state,
          },
          handle,
        )(request.arg)
      : handle(request.arg);
    const stored = normalizePayload(value, `Result of update '${request.name}'`, maxPayloadBytes) as
      Json | undefined;
    encodePayload(run.state, `State of workflow '${run.id}' after update '${request.name}'`, maxPayloadBytes);
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
      stateAfter: cloneJson(run.state),
    });
    turn.note('update-applied', { name: request.name, updateId: request.updateId });
  } catch (error) {
    reconcileInPlace(run.state, snapshot);
    response = {
      updateId: request.updateId,
      ok: false,
      // The handler's error with its stack (mapped, bounded), for the caller's UpdateRejectedError.
      error: recordedFailure(error, run.host.mapStack),
      appliedAt: clock.now(),
      appliedBy: engineId,
    };
    turn.note('update-rejected', {
      name: request.name,
      updateId: request.updateId,
      error: error instanceof Error ? error.message : String(error),
    });
    span.recordError(error);
  }
  span.setAttributes({ 'shuttle.update.outcome': response.ok ? 'applied' : 'rejected' });
  span.end();
  turn.delete(requestKey);
  turn.put(keys.updateResponse(run.id, request.updateId), JSON.stringify(response));
  turn.kinds.push('update');
}

// ---------------------------------------------------------------------------------------------------------
// Cancellation

export async function readAndCheckCancel(
  run: Pick<RunState, 'id' | 'host' | 'checkpoint' | 'results'>,
  turn: Turn,
): Promise<void> {
  checkCancel(run, turn, await run.host.storage.get(keys.cancelRequest(run.id)));
}

/** Delivers the cancel request `raw` (as read from storage; null when there is none). */
function checkCancel(
  run: Pick<RunState, 'id' | 'host' | 'checkpoint' | 'results'>,
  turn: Turn,
  raw: string | null,
): void {
  const key = keys.cancelRequest(run.id);
  if (raw === null) return;
  const request = decodeCancelRequest(key, raw);
  turn.delete(key);
  if (run.checkpoint.cancel?.delivered) return; // cleanup after a delivered cancel is not cancelled again
  const frontier = run.checkpoint.frontier;
  turn.note(
    'cancel-requested',
    request.reason
      ? { reason: request.reason, requestedBy: request.requestedBy }
      : { requestedBy: request.requestedBy },
  );
  run.checkpoint = {
    ...run.checkpoint,
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
        reason: `parent '${run.id}' was cancelled`,
        requestedAt: run.host.clock.now(),
        requestedBy: run.host.engineId,
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
  run.results.record(-1, entry);
  turn.kinds.push('cancel');
}

// ---------------------------------------------------------------------------------------------------------
// Children

/** Child `childId` ended: its leaf resolves with the child's result, or fails with its failure. */
export function childSettled(
  run: Pick<RunState, 'checkpoint' | 'results'>,
  turn: Turn,
  childId: string,
  child: WorkflowRecord,
): void {
  const frontier = run.checkpoint.frontier;
  const leaf = frontier?.leaves.find(
    (candidate) => candidate.kind === 'child' && candidate.childId === childId && !candidate.done,
  );
  if (!frontier || !leaf || !isTerminal(child.status)) return;
  turn.note('child-completed', { pos: frontier.pos, member: leaf.member, childId, status: child.status });
  if (child.status === 'completed')
    resolveLeaf(
      run,
      turn,
      leaf,
      child.result === undefined ? { ok: true } : { ok: true, value: child.result },
    );
  else
    resolveLeaf(run, turn, leaf, {
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
