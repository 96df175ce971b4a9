/**
 * The caller's side of the engine calls that read one workflow where it is committed, or ask its owner for
 * something, on any engine sharing the store:
 * - `query`: runs the query handler on the state of the current checkpoint (deep-frozen: a query changes
 *   nothing); the result is checked like any payload.
 * - `update`: validated here (a validator failure stores nothing), then requested with one write of the
 *   request record; update-calls.ts waits for the owner's response.
 * - `handle.result()`: the outcome of a finished record (or of an earlier run kept by run history), else a
 *   result waiter (result-waiters.ts).
 * - `operationOutcome`'s argument, and the run a read names (`storedRun`).
 *
 * Each call first checks, as every engine method does, that the engine is open (`assertOpen`); bad input
 * fails before anything is read or written.
 */
import type { Storage } from '../storage/types';
import { currentCheckpoint, lastLogRecord } from './checkpoint';
import { normalizePayload, type Json } from './codec';
import {
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidWorkflowStateError,
  QueryFailedError,
  UpdateRejectedError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  recordedFailure,
} from './errors';
import { assertHandlerName, assertRunNumber, assertWorkflowId, uuidFrom } from './ids';
import { readOperationOutcome, type OperationOutcome, type OutcomeOf } from './inspect';
import { keys } from './keys';
import type { Ownership } from './ownership/ownership';
import { decodeRecord, isTerminal, type UpdateRequest } from './records';
import type { Reactions } from './reactions';
import type { RunHost } from './run/run-host';
import { chainEnd, settleFromRecord, type ResultWaiters } from './result-waiters';
import { describe, type RunSupervisor } from './supervisor';
import { storedTrace } from './tracing';
import type { UpdateCalls } from './update-calls';
import { composeInterceptors, type AnyWorkflowDefinition } from './workflow';

/**
 * What these calls need from the engine: the parts a run's host has too (one declaration: RunHost), the
 * caller-side machinery, its definitions, and its open check.
 */
export type WorkflowCallsDeps = Pick<
  RunHost,
  | 'engineId'
  | 'storage'
  | 'writer'
  | 'clock'
  | 'random'
  | 'maxPayloadBytes'
  | 'mapStack'
  | 'tracing'
  | 'workflowInterceptors'
> & {
  readonly ownership: Pick<Ownership, 'sharesStore'>;
  readonly waiters: ResultWaiters;
  readonly updates: UpdateCalls;
  readonly supervisor: Pick<RunSupervisor, 'deliver'>;
  readonly reactions: Reactions;
  /** The definition of `type` at `version`, or its latest version when `version` is absent. */
  definition(type: string, version?: number): AnyWorkflowDefinition | undefined;
  /** Throws unless the engine is open (or deposed, with `allowDeposedReads`). */
  assertOpen(allowDeposedReads?: boolean): void;
};

/**
 * `handle.result()`: the outcome of run `run` (the latest when undefined), waiting for it if need be; a run
 * that continued as new is followed to the run that ends the chain.
 */
export async function readResult(
  deps: WorkflowCallsDeps,
  workflowId: string,
  run: number | undefined,
): Promise<unknown> {
  deps.assertOpen();
  let raw: string | null;
  try {
    raw = await deps.storage.get(keys.record(workflowId));
  } catch (error) {
    if (!deps.ownership.sharesStore) throw error;
    return waitForResult(deps, workflowId, run);
  }
  if (!raw) throw new WorkflowNotFoundError(workflowId, run);
  let record = decodeRecord(keys.record(workflowId), raw);
  if (run !== undefined && run > record.run) throw new WorkflowNotFoundError(workflowId, run);
  if (run !== undefined && run < record.run) {
    // A run that continued as new: its outcome is the chain's, settled by the run that ended it (or by the
    // current run, which goes on with it).
    const end = await chainEnd(deps.storage, workflowId, run);
    if (end === null) throw new WorkflowNotFoundError(workflowId, run);
    if (end === 'latest') run = record.run;
    else record = end;
  }
  if (isTerminal(record.status)) {
    const outcome = settleFromRecord(record);
    if (outcome.ok) return outcome.value;
    throw outcome.error;
  }
  return waitForResult(deps, workflowId, run);
}

function waitForResult(
  deps: WorkflowCallsDeps,
  workflowId: string,
  run: number | undefined,
): Promise<unknown> {
  const waiting = deps.waiters.wait(workflowId, run);
  // It may have finished between the read and the registration: look once more.
  deps.reactions.run(deps.waiters.recheck(workflowId));
  return waiting;
}

/** `engine.query`: the query handler `name` run on the workflow's committed state. */
export async function queryWorkflow<T>(
  deps: WorkflowCallsDeps,
  workflowId: string,
  name: string,
  arg: unknown,
): Promise<T> {
  deps.assertOpen();
  assertWorkflowId(workflowId);
  assertHandlerName(name, 'Query');
  const [[recordRaw, checkpointRaw], last] = await Promise.all([
    deps.storage.getMany([keys.record(workflowId), keys.checkpoint(workflowId)]),
    lastLogRecord(deps.storage, workflowId),
  ]);
  if (!recordRaw) throw new WorkflowNotFoundError(workflowId);
  const record = decodeRecord(keys.record(workflowId), recordRaw);
  const definition = deps.definition(record.type, record.version) ?? deps.definition(record.type);
  if (!definition) throw new WorkflowNotRegisteredError(record.type);
  const handler = definition.queries?.[name];
  if (!handler)
    throw new QueryFailedError(
      workflowId,
      name,
      `workflow type '${record.type}' has no query named '${name}' (it has: ${Object.keys(definition.queries ?? {}).join(', ') || 'none'})`,
    );
  const current = checkpointRaw
    ? await currentCheckpoint(deps.storage, workflowId, checkpointRaw, last)
    : null;
  const state = deepFreeze(current?.checkpoint.state ?? {});
  let value: unknown;
  try {
    const interceptors = deps.workflowInterceptors;
    value = interceptors.some((interceptor) => interceptor.query)
      ? composeInterceptors(
          interceptors,
          'query',
          {
            workflowId,
            workflowType: record.type,
            version: record.version,
            run: record.run,
            name,
            arg,
            state,
          },
          (given) => handler(state, given),
        )(arg)
      : handler(state, arg);
  } catch (error) {
    throw new QueryFailedError(workflowId, name, describe(error));
  }
  return normalizePayload(value, `Result of query '${name}'`, deps.maxPayloadBytes) as T;
}

/** Checks an update call's arguments (before anything is read); returns its argument as stored. */
function checkUpdateCall(
  deps: WorkflowCallsDeps,
  workflowId: string,
  name: string,
  arg: unknown,
  timeoutMs: unknown,
): Json | undefined {
  deps.assertOpen();
  assertWorkflowId(workflowId);
  assertHandlerName(name, 'Update');
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new InvalidOptionsError(
      `update timeoutMs must be a positive number of milliseconds; got ${String(timeoutMs)}.`,
    );
  return normalizePayload(
    arg,
    `Argument of update '${name}' to workflow '${workflowId}'`,
    deps.maxPayloadBytes,
  ) as Json | undefined;
}

/**
 * The update's request, once `definition` has the update and its validator accepts the argument (run here,
 * at the caller: a rejected update stores nothing).
 */
function updateRequest(
  deps: WorkflowCallsDeps,
  workflowId: string,
  definition: AnyWorkflowDefinition,
  name: string,
  stored: Json | undefined,
): UpdateRequest {
  const update = definition.updates?.[name];
  if (!update)
    throw new UpdateRejectedError(workflowId, name, {
      name: 'Error',
      message: `workflow type '${definition.name}' has no update named '${name}' (it has: ${Object.keys(definition.updates ?? {}).join(', ') || 'none'})`,
    });
  try {
    update.validate?.(stored === undefined ? undefined : structuredCloneJson(stored));
  } catch (error) {
    throw new UpdateRejectedError(workflowId, name, recordedFailure(error, deps.mapStack));
  }
  return {
    updateId: uuidFrom(deps.random),
    name,
    ...(stored === undefined ? {} : { arg: stored }),
    requestedAt: deps.clock.now(),
    requestedBy: deps.engineId,
  };
}

/** Stores an update request for the owner of a running workflow (one conditional write). */
async function storeUpdateRequest(
  deps: WorkflowCallsDeps,
  workflowId: string,
  request: UpdateRequest,
): Promise<void> {
  const requestKey = keys.updateRequest(workflowId, request.updateId);
  const outcome = await deps.writer.write(
    null,
    [{ key: requestKey, expected: null }],
    [{ type: 'put', key: requestKey, value: JSON.stringify(request) }],
    `request update '${request.name}'`,
  );
  if (!outcome.ok) throw new EngineLeaseNotHeldError(deps.engineId);
}

/**
 * `engine.update`: validates the update at the caller, writes its request, and resolves with the owner's
 * response (update-calls.ts).
 */
export async function requestUpdate<T>(
  deps: WorkflowCallsDeps,
  workflowId: string,
  name: string,
  arg: unknown,
  options: { timeoutMs?: number },
): Promise<T> {
  const timeoutMs = options?.timeoutMs ?? 60_000;
  const stored = checkUpdateCall(deps, workflowId, name, arg, timeoutMs);
  const recordRaw = await deps.storage.get(keys.record(workflowId));
  if (!recordRaw) throw new WorkflowNotFoundError(workflowId);
  const record = decodeRecord(keys.record(workflowId), recordRaw);
  if (isTerminal(record.status))
    throw new InvalidWorkflowStateError(workflowId, record.status, `apply update '${name}' to`);
  const definition = deps.definition(record.type, record.version) ?? deps.definition(record.type);
  if (!definition) throw new WorkflowNotRegisteredError(record.type, record.version);
  const request = updateRequest(deps, workflowId, definition, name, stored);
  // The caller's side, in the workflow's trace: from the request to its response.
  const span = deps.tracing.start(
    'shuttle.update',
    storedTrace(record.trace),
    {
      'shuttle.workflow.id': workflowId,
      'shuttle.workflow.type': record.type,
      'shuttle.workflow.run': record.run,
      'shuttle.engine.id': deps.engineId,
      'shuttle.update.name': name,
      'shuttle.update.id': request.updateId,
    },
    'producer',
    'active',
  );
  const waiting = deps.updates.wait({ workflowId, updateId: request.updateId, name, timeoutMs });
  try {
    await storeUpdateRequest(deps, workflowId, request);
  } catch (error) {
    deps.updates.abandon(workflowId, request.updateId);
    span.recordError(error);
    span.end();
    throw error;
  }
  deps.supervisor.deliver(workflowId, { type: 'updates' });
  return waiting.then(
    (value) => {
      span.end();
      return value as T;
    },
    (error: unknown) => {
      span.recordError(error);
      span.end();
      throw error;
    },
  );
}

/**
 * `engine.updateWithStart`: the update validated at the caller against `definition`, then either stored with
 * the workflow it starts (its first turn applies it: `Lifecycle.startWithUpdate`) or — the workflow runs
 * already — requested of it as `engine.update` does; resolves with the update's result.
 */
export async function updateWithStart<T>(
  deps: WorkflowCallsDeps,
  start: (request: UpdateRequest) => Promise<{ id: string; run: number; started: boolean }>,
  workflowId: string,
  definition: AnyWorkflowDefinition,
  name: string,
  arg: unknown,
  timeoutMs: number,
): Promise<{ run: number; started: boolean; result: T }> {
  const stored = checkUpdateCall(deps, workflowId, name, arg, timeoutMs);
  const request = updateRequest(deps, workflowId, definition, name, stored);
  // Waiting before anything is written: the new run may answer before `start` returns.
  const waiting = deps.updates.wait({ workflowId, updateId: request.updateId, name, timeoutMs });
  let run: number;
  let started: boolean;
  try {
    ({ run, started } = await start(request));
    if (!started) await storeUpdateRequest(deps, workflowId, request);
  } catch (error) {
    deps.updates.abandon(workflowId, request.updateId);
    throw error;
  }
  deps.supervisor.deliver(workflowId, { type: 'updates' });
  return { run, started, result: (await waiting) as T };
}

/** `engine.operationOutcome`: checks `of`, then reads the outcome from the history of the run it names. */
export async function operationOutcome(
  deps: WorkflowCallsDeps,
  workflowId: string,
  of: OutcomeOf & { run?: number },
): Promise<OperationOutcome | null> {
  deps.assertOpen(true);
  assertWorkflowId(workflowId);
  if (typeof of !== 'object' || of === null)
    throw new InvalidArgumentError(
      `operationOutcome needs { pos, member? } or { updateId }, and optionally a run; got ${JSON.stringify(of)}.`,
    );
  const { run, pos, member, updateId } = of as {
    run?: unknown;
    pos?: unknown;
    member?: unknown;
    updateId?: unknown;
  };
  if (run !== undefined) assertRunNumber(run);
  let at: OutcomeOf;
  if (updateId !== undefined) {
    if (pos !== undefined || member !== undefined)
      throw new InvalidArgumentError(
        'operationOutcome takes either { pos, member? } or { updateId }, not both.',
      );
    assertWorkflowId(updateId, 'An update id');
    at = { updateId };
  } else {
    assertIndex(pos, 'An operation position (pos)');
    if (member !== undefined) assertIndex(member, 'A member index (member)');
    at = member === undefined ? { pos } : { pos, member };
  }
  return readOperationOutcome(deps.storage, workflowId, {
    ...at,
    run: await storedRun(deps.storage, workflowId, run),
  });
}

/** The run `run` names (the latest when absent), or `WorkflowNotFoundError` when it is not stored. */
export async function storedRun(
  storage: Storage,
  workflowId: string,
  run: number | undefined,
): Promise<number> {
  const raw = await storage.get(keys.record(workflowId));
  if (raw === null) throw new WorkflowNotFoundError(workflowId);
  const latest = decodeRecord(keys.record(workflowId), raw).run;
  const chosen = run ?? latest;
  if (chosen > latest || (chosen < latest && (await storage.get(keys.pastRun(workflowId, chosen))) === null))
    throw new WorkflowNotFoundError(workflowId, chosen);
  return chosen;
}

/** Positions and member indexes: non-negative integers. */
function assertIndex(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(`${what} must be a non-negative integer; got ${JSON.stringify(value)}.`);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function structuredCloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
