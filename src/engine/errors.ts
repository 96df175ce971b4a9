/**
 * Every error the engine raises is a named class carrying the fields a caller needs. Messages say what
 * happened, to which workflow, and what the caller can do about it. Errors cross the worker boundary as
 * `{ name, message, ...fields }` (see `serializeError`), so `name` is always the class name.
 */

export { StorageError } from '../storage/errors';

/** Who holds a claim. `expiresAt: null`: the claim lasts as long as its engine's session is renewed. */
type OwnerSummary = { engineId: string; epoch: number; expiresAt: number | null } | null;

/**
 * Every engine error names itself with a string literal, not `new.target.name`: production builds minify
 * class names, and callers (the studio, `nonRetryable` lists, scripts) compare `error.name`.
 */
abstract class ShuttleError extends Error {
  abstract override readonly name: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

export class WorkflowAlreadyExistsError extends ShuttleError {
  override readonly name = 'WorkflowAlreadyExistsError';

  constructor(
    readonly workflowId: string,
    readonly status: string,
  ) {
    super(
      `Workflow '${workflowId}' already exists and is ${status}. Choose another id, or wait until it ends (a finished workflow's id may be reused).`,
    );
  }
}

/** `describeQueue` of a name no engine declared. */
export class QueueNotFoundError extends ShuttleError {
  override readonly name = 'QueueNotFoundError';

  constructor(readonly queue: string) {
    super(
      `Queue '${queue}' is not declared by this engine nor by any engine in this store. Check the name, or declare it with createEngine({ queues: { '${queue}': { concurrency: … } } }).`,
    );
  }
}

/** A start with `singleton: { key, ifActive: 'refuse' }` while a workflow with that key waits or runs. */
export class SingletonConflictError extends ShuttleError {
  override readonly name = 'SingletonConflictError';

  constructor(
    readonly key: string,
    readonly workflowId: string,
    readonly status: string,
  ) {
    super(
      `Singleton key '${key}' belongs to workflow '${workflowId}', which is ${status}; nothing was started. Wait until it ends, or pass ifActive: 'join' to get that workflow back instead.`,
    );
  }
}

/** `start` with the id of a finished workflow of another type, without `idReuse: 'any-type'`. */
export class WorkflowIdReuseError extends ShuttleError {
  override readonly name = 'WorkflowIdReuseError';

  constructor(
    readonly workflowId: string,
    readonly existingType: string,
    readonly requestedType: string | null,
  ) {
    super(
      requestedType === null
        ? `Workflow '${workflowId}' already ran (as '${existingType}') and idReuse is 'never'. Choose another id.`
        : `Workflow '${workflowId}' last ran as '${existingType}', not '${requestedType}'. Choose another id, or pass { idReuse: 'any-type' } to start a '${requestedType}' run under it (earlier runs are kept).`,
    );
  }
}

/** `completeActivity` / `failActivity` changed nothing: the activity is finished, or not waiting for it. */
export class ActivityCompletionRefusedError extends ShuttleError {
  override readonly name = 'ActivityCompletionRefusedError';

  constructor(
    readonly token: string,
    readonly reason: string,
  ) {
    super(`The activity of completion token '${token}' was not completed: ${reason}. Nothing was changed.`);
  }
}

export class WorkflowNotFoundError extends ShuttleError {
  override readonly name = 'WorkflowNotFoundError';

  constructor(
    readonly workflowId: string,
    readonly run?: number,
  ) {
    super(
      run === undefined
        ? `Workflow '${workflowId}' does not exist in this store. Check the id (ids are case-sensitive).`
        : `Run ${run} of workflow '${workflowId}' is not stored (it never existed, or was purged). engine.runs('${workflowId}') lists the runs that are.`,
    );
  }
}

export class WorkflowNotRegisteredError extends ShuttleError {
  override readonly name = 'WorkflowNotRegisteredError';

  constructor(
    readonly workflowType: string,
    readonly version?: number,
  ) {
    super(
      version === undefined
        ? `No workflow definition named '${workflowType}' is registered on this engine. Register it (engine.register) or pass it in createEngine({ workflows }).`
        : `Workflow definition '${workflowType}' version ${version} is not registered on this engine. Register that version.`,
    );
  }
}

export class WorkflowVersionMismatchError extends ShuttleError {
  override readonly name = 'WorkflowVersionMismatchError';

  constructor(
    readonly workflowId: string,
    readonly workflowType: string,
    readonly storedVersion: number,
    readonly registeredVersions: number[],
  ) {
    super(
      `Workflow '${workflowId}' was started with '${workflowType}' version ${storedVersion}, but this engine has only version(s) ${registeredVersions.join(', ') || 'none'}. ` +
        `Register version ${storedVersion} alongside the new one so the running workflow can finish on the code it started with.`,
    );
  }
}

export class NonDeterminismError extends ShuttleError {
  override readonly name = 'NonDeterminismError';

  constructor(
    readonly workflowId: string,
    readonly position: number,
    readonly recorded: string,
    readonly replayed: string,
  ) {
    super(
      `Workflow '${workflowId}' is not deterministic: at operation #${position} the history recorded ${recorded}, but the code now yields ${replayed}. ` +
        `Workflow code must yield the same operations in the same order; put changed code behind ctx.patched(id) (the old branch stays for runs recorded before it), or under a new definition version.`,
    );
  }
}

export class PayloadTooLargeError extends ShuttleError {
  override readonly name = 'PayloadTooLargeError';

  constructor(
    readonly what: string,
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(
      `${what} is ${bytes} bytes, over the limit of ${limitBytes} bytes. Store large data elsewhere and pass a reference.`,
    );
  }
}

/** A payload (input, signal, update argument, result) cannot be stored as JSON. */
export class PayloadNotSerializableError extends ShuttleError {
  override readonly name = 'PayloadNotSerializableError';

  constructor(
    readonly what: string,
    readonly path: string,
    readonly reason: string,
  ) {
    super(
      `${what} cannot be stored: ${path ? `${path} ` : ''}${reason}. Pass plain JSON data (objects, arrays, strings, finite numbers, booleans, null).`,
    );
  }
}

export class InvalidOptionsError extends ShuttleError {
  override readonly name = 'InvalidOptionsError';

  constructor(message: string) {
    super(message);
  }
}

/** An argument that is not an option (an id, a name, a duration) is invalid. */
export class InvalidArgumentError extends ShuttleError {
  override readonly name = 'InvalidArgumentError';

  constructor(message: string) {
    super(message);
  }
}

/**
 * A search attribute (`ctx.setAttributes`) or an attribute filter (`list({ attributes, where })`) is invalid:
 * an undeclared or malformed name, a value not of the attribute's type, an unknown operator, a range on a
 * boolean, too many attributes. Nothing was written.
 */
export class InvalidSearchAttributeError extends ShuttleError {
  override readonly name = 'InvalidSearchAttributeError';

  constructor(
    /** The attribute at fault ('' when the call as a whole is). */
    readonly attribute: string,
    message: string,
    /** The attribute's type, when known. */
    readonly expectedType?: string,
  ) {
    super(message);
  }
}

export class WorkflowFailedError extends ShuttleError {
  override readonly name = 'WorkflowFailedError';

  constructor(
    readonly workflowId: string,
    readonly failure: SerializedError,
  ) {
    super(`Workflow '${workflowId}' failed: ${failure.name}: ${failure.message}`, {
      cause: deserializeError(failure),
    });
  }
}

export class WorkflowCancelledError extends ShuttleError {
  override readonly name = 'WorkflowCancelledError';

  constructor(
    readonly workflowId: string,
    readonly reason?: string,
  ) {
    super(`Workflow '${workflowId}' was cancelled${reason ? `: ${reason}` : ''}.`);
  }
}

export class WorkflowTerminatedError extends ShuttleError {
  override readonly name = 'WorkflowTerminatedError';

  constructor(
    readonly workflowId: string,
    readonly reason?: string,
  ) {
    super(`Workflow '${workflowId}' was terminated${reason ? `: ${reason}` : ''}.`);
  }
}

export class WorkflowTimedOutError extends ShuttleError {
  override readonly name = 'WorkflowTimedOutError';

  constructor(
    readonly workflowId: string,
    readonly executionTimeoutMs: number,
  ) {
    super(
      `Workflow '${workflowId}' timed out: it did not finish within its execution timeout of ${executionTimeoutMs} ms.`,
    );
  }
}

/** Thrown inside a workflow at the operation it waits on after `engine.cancel(id)`. */
export class CancelledError extends ShuttleError {
  override readonly name = 'CancelledError';

  constructor(readonly reason?: string) {
    super(`The workflow was cancelled${reason ? `: ${reason}` : ''}. Catch this to run cleanup operations.`);
  }
}

/** Thrown inside a workflow when an activity failed for good (after its retries). */
export class ActivityFailedError extends ShuttleError {
  override readonly name = 'ActivityFailedError';

  constructor(
    readonly activityName: string,
    readonly attempts: number,
    readonly failure: SerializedError,
  ) {
    super(
      `Activity '${activityName}' failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${failure.name}: ${failure.message}`,
      {
        cause: deserializeError(failure),
      },
    );
  }
}

/** One activity attempt ran past its `timeoutMs`; its AbortSignal was aborted. */
export class ActivityTimeoutError extends ShuttleError {
  override readonly name = 'ActivityTimeoutError';

  constructor(
    readonly activityName: string,
    readonly timeoutMs: number,
  ) {
    super(`Activity '${activityName}' attempt exceeded its timeout of ${timeoutMs} ms and was aborted.`);
  }
}

/** An attempt sent no heartbeat for its activity's `heartbeatTimeoutMs`: it was aborted (and is retried). */
export class ActivityHeartbeatTimeoutError extends ShuttleError {
  override readonly name = 'ActivityHeartbeatTimeoutError';

  constructor(
    readonly activityName: string,
    readonly heartbeatTimeoutMs: number,
  ) {
    super(
      `Activity '${activityName}' attempt sent no heartbeat for ${heartbeatTimeoutMs} ms (its heartbeatTimeoutMs) and was aborted; call context.heartbeat() more often, or raise heartbeatTimeoutMs.`,
    );
  }
}

/** Thrown inside a parent workflow when an awaited child did not complete. */
export class ChildWorkflowFailedError extends ShuttleError {
  override readonly name = 'ChildWorkflowFailedError';

  constructor(
    readonly childId: string,
    readonly childStatus: string,
    readonly failure: SerializedError | null,
  ) {
    super(
      `Child workflow '${childId}' ended ${childStatus}${failure ? `: ${failure.name}: ${failure.message}` : ''}.`,
      {
        cause: failure ? deserializeError(failure) : undefined,
      },
    );
  }
}

/** An update was rejected by its validator or its handler threw; nothing was applied. */
export class UpdateRejectedError extends ShuttleError {
  override readonly name = 'UpdateRejectedError';

  constructor(
    readonly workflowId: string,
    readonly updateName: string,
    readonly failure: SerializedError,
  ) {
    super(`Update '${updateName}' on workflow '${workflowId}' was rejected: ${failure.message}`);
  }
}

export class UpdateTimeoutError extends ShuttleError {
  override readonly name = 'UpdateTimeoutError';

  constructor(
    readonly workflowId: string,
    readonly updateName: string,
    readonly timeoutMs: number,
  ) {
    super(
      `Update '${updateName}' on workflow '${workflowId}' got no response within ${timeoutMs} ms; it was withdrawn and not applied. Is an engine with the workflow's definition running?`,
    );
  }
}

export class QueryFailedError extends ShuttleError {
  override readonly name = 'QueryFailedError';

  constructor(
    readonly workflowId: string,
    readonly queryName: string,
    message: string,
  ) {
    super(`Query '${queryName}' on workflow '${workflowId}' failed: ${message}`);
  }
}

/** The workflow is in a state where the requested action does not apply (e.g. resume of a running one). */
export class InvalidWorkflowStateError extends ShuttleError {
  override readonly name = 'InvalidWorkflowStateError';

  constructor(
    readonly workflowId: string,
    readonly status: string,
    readonly action: string,
    hint?: string,
  ) {
    super(`Cannot ${action} workflow '${workflowId}': it is ${status}.${hint ? ` ${hint}` : ''}`);
  }
}

/** A stored record could not be decoded; the workflow fails closed and nothing overwrites the record. */
export class CorruptRecordError extends ShuttleError {
  override readonly name = 'CorruptRecordError';

  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(
      `Stored record '${key}' is corrupt (${reason}). The workflow is stopped and the record left untouched for inspection.`,
    );
  }
}

export class EngineDisposedError extends ShuttleError {
  override readonly name = 'EngineDisposedError';

  constructor(readonly engineId: string) {
    super(
      `Engine ${engineId} has shut down (or was deposed) and accepts no more calls. Create a new engine.`,
    );
  }
}

export class OwnershipModeMismatchError extends ShuttleError {
  override readonly name = 'OwnershipModeMismatchError';

  constructor(
    readonly configuredMode: string,
    readonly storedMode: string,
    readonly establishedAt: number,
  ) {
    super(
      `This store was established for ownership mode '${storedMode}' (at ${new Date(establishedAt).toISOString()}), but this engine is configured for '${configuredMode}'. ` +
        `All engines sharing a store must use the same fencing mode; nothing was changed.`,
    );
  }
}

/** A store whose payloads a codec encoded, opened by an engine without `codec` (payload-codec.ts). */
export class PayloadCodecRequiredError extends ShuttleError {
  override readonly name = 'PayloadCodecRequiredError';

  constructor(readonly storedCodec: string) {
    super(
      `This store's payloads are encoded by the codec ${storedCodec}, and this engine has no codec: it cannot read the inputs, results and signals it would run. ` +
        `Pass the same codec to createEngine({ codec }) (or its CLI flag); nothing was read or changed.`,
    );
  }
}

/** The payload codec threw (or returned something other than a string) while encoding or decoding a value. */
export class PayloadCodecError extends ShuttleError {
  override readonly name = 'PayloadCodecError';

  constructor(
    readonly direction: 'encode' | 'decode',
    readonly key: string,
    readonly codec: string,
    cause: unknown,
  ) {
    super(
      `The payload codec '${codec}' failed to ${direction} a payload of stored key '${key}': ${cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)}. ` +
        (direction === 'encode'
          ? 'Nothing was written.'
          : 'Check that this engine has the codec (and the keys) the value was written with.'),
      { cause },
    );
  }
}

export class WorkflowClaimUnavailableError extends ShuttleError {
  override readonly name = 'WorkflowClaimUnavailableError';

  constructor(
    readonly workflowId: string,
    readonly heldBy: OwnerSummary,
  ) {
    super(
      heldBy
        ? `Workflow '${workflowId}' is owned by engine ${heldBy.engineId} at epoch ${heldBy.epoch} (${heldBy.expiresAt === null ? 'for as long as that engine runs' : `claim expires ${new Date(heldBy.expiresAt).toISOString()}`}); this engine cannot run it now. It will move here by itself if that engine stops.`
        : `Workflow '${workflowId}' was claimed by another engine at the same moment; this engine cannot run it now.`,
    );
  }
}

export class EngineLeaseNotHeldError extends ShuttleError {
  override readonly name = 'EngineLeaseNotHeldError';

  constructor(readonly engineId: string) {
    super(
      `Engine ${engineId} does not hold the store-wide lease (it was deposed or has shut down); it can make no writes. Create a new engine.`,
    );
  }
}

export class EngineLeaseAcquisitionTimeoutError extends ShuttleError {
  override readonly name = 'EngineLeaseAcquisitionTimeoutError';

  constructor(
    readonly engineId: string,
    readonly heldBy: OwnerSummary,
    readonly waitedMs: number,
  ) {
    super(
      `Engine ${engineId} waited ${waitedMs} ms for the store-wide lease${heldBy ? `, held by ${heldBy.engineId} at epoch ${heldBy.epoch}` : ''}, and gave up. Stop the other engine or raise leaseWaitTimeoutMs.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------
// Schedules (src/engine/schedules/)

/** A schedule of that name exists with a different spec; nothing was written. */
export class ScheduleExistsError extends ShuttleError {
  override readonly name = 'ScheduleExistsError';

  constructor(
    readonly scheduleName: string,
    /** The fields whose values differ from the stored spec. */
    readonly differences: string[],
  ) {
    super(
      `Schedule '${scheduleName}' already exists with a different ${differences.join(', ')}; nothing was changed. ` +
        `Pass { replace: true } to replace its spec, or choose another name.`,
    );
  }
}

export class ScheduleNotFoundError extends ShuttleError {
  override readonly name = 'ScheduleNotFoundError';

  constructor(readonly scheduleName: string) {
    super(
      `Schedule '${scheduleName}' does not exist in this store. Check the name (names are case-sensitive).`,
    );
  }
}

/** A schedule's spec is invalid (cron, timezone, overlap, catch-up, start options); nothing was written. */
export class InvalidScheduleError extends ShuttleError {
  override readonly name = 'InvalidScheduleError';

  constructor(
    /** The spec field at fault: `cron`, `timezone`, `overlap`, `catchUp`, `startOptions`, `name`, … */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Plain-data form of an error, as stored in history and records and sent across the worker boundary. */
export type SerializedError = {
  name: string;
  message: string;
  stack?: string;
  /** Extra own enumerable fields of the error (e.g. `workflowId`), when they are plain data. */
  details?: Record<string, unknown>;
};

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) {
    const details: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) {
      if (key === 'name' || key === 'message' || key === 'stack' || key === 'cause') continue;
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) details[key] = value;
      else {
        try {
          details[key] = JSON.parse(JSON.stringify(value));
        } catch {
          // not plain data: leave it out
        }
      }
    }
    return {
      name: error.name || 'Error',
      message: error.message,
      ...(error.stack ? { stack: error.stack } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    };
  }
  if (typeof error === 'string') return { name: 'Error', message: error };
  let message: string;
  try {
    message = JSON.stringify(error) ?? String(error);
  } catch {
    message = String(error);
  }
  return { name: 'Error', message: `Non-error value thrown: ${message}` };
}

/**
 * Rewrites a stack before a failure is recorded: the host's `mapStack` option (docs/engine.md, "Failure
 * stacks"). Returns the stack to keep; it may map frames to source files and mark the engine's own frames.
 */
export type StackMapper = (stack: string) => string;

/**
 * How much of a stack a recorded failure keeps: its first `frames` frames (lines starting `at `), then at most
 * `characters` characters in all, cut at a line's end. A cut stack ends with a line saying how many lines
 * were left out.
 */
export const recordedStackLimits = { frames: 30, characters: 4096 } as const;

const framePattern = /^\s*at\s/;

/** `stack` within `recordedStackLimits`: whole lines, the first ones kept, a last line counting the rest. */
export function boundStack(stack: string): string {
  const lines = stack.split('\n');
  const kept: string[] = [];
  let frames = 0;
  let characters = 0;
  for (const line of lines) {
    if (framePattern.test(line) && ++frames > recordedStackLimits.frames) break;
    // The counting line below needs room too (at most ~40 characters).
    if (characters + line.length + 1 > recordedStackLimits.characters - 48) break;
    kept.push(line);
    characters += line.length + 1;
  }
  if (kept.length === lines.length) return stack;
  if (kept.length === 0) kept.push(lines[0]!.slice(0, recordedStackLimits.characters - 48));
  const left = lines.length - kept.length;
  return `${kept.join('\n')}\n    … ${left} more line${left === 1 ? '' : 's'} not kept`;
}

/**
 * The form in which a failure of workflow code is recorded (an activity attempt's error, the error a workflow
 * body threw): `serializeError`, with its stack passed through the host's `mapStack` (if any; a mapper that
 * throws leaves the stack as it was) and bounded by `boundStack`. The stack is for people: replay never
 * compares it (it differs between engines and builds).
 */
export function recordedFailure(error: unknown, mapStack?: StackMapper): SerializedError {
  const failure = serializeError(error);
  if (failure.stack === undefined) return failure;
  let stack = failure.stack;
  if (mapStack)
    try {
      const mapped = mapStack(stack);
      if (typeof mapped === 'string') stack = mapped;
    } catch {
      // an unmappable stack is kept as it is
    }
  failure.stack = boundStack(stack);
  return failure;
}

/** Rebuilds an Error with the original name and message (the class itself does not survive storage). */
export function deserializeError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack) error.stack = serialized.stack;
  if (serialized.details) Object.assign(error, serialized.details);
  return error;
}
