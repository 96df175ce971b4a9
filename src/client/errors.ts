/**
 * The client's errors. Every call of the client rejects with an `Error` whose `name` says what happened:
 * the engine's own error, rebuilt here with its name, message and detail fields (`rebuildError`), or one
 * the client raises itself (`namedError`): `RequestTimeoutError`, `EngineWorkerStoppedError`,
 * `DataCloneError`, `InvalidArgumentError`, `ControlTargetNotFoundError`, `UnsupportedError`,
 * `WaitTimeoutError`, `WorkflowStatusError`.
 */
import type { SerializedError } from '../engine';

/** An `Error` named `name`, with detail fields (`workflowId`, `method`, …) as own properties. */
export function namedError(name: string, message: string, fields: Record<string, unknown> = {}): Error {
  const error = new Error(message);
  error.name = name;
  return Object.assign(error, fields);
}

/** Rebuilds an error raised in the worker: its name, message and detail fields, with the caller's stack. */
export function rebuildError(serialized: SerializedError, origin?: Error): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (origin?.stack)
    error.stack = `${serialized.name}: ${serialized.message}\n${origin.stack.split('\n').slice(1).join('\n')}`;
  if (serialized.details) {
    Object.assign(error, serialized.details);
    Object.defineProperty(error, 'details', { value: serialized.details, enumerable: false });
  }
  if (serialized.stack)
    Object.defineProperty(error, 'workerStack', { value: serialized.stack, enumerable: false });
  return error;
}
