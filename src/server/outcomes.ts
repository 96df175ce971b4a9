/**
 * What an error of the engine means to someone outside it, decided once: the operator CLI turns the class
 * into an exit code (operator/operator.ts), the HTTP API into a status (http-api/api.ts). A new error of the
 * engine that callers must tell apart gets its class here, and both follow.
 */
import { StartupError } from './store';

export type ErrorClass =
  /** The request itself is wrong (a field, a value, a payload): nothing was written. */
  | 'bad-input'
  /** The payload is larger than the engine accepts. */
  | 'too-large'
  /** No such workflow, run or schedule. */
  | 'not-found'
  /** Refused in the current state: it already exists, has already finished, has not finished. */
  | 'conflict'
  /** The workflow's code or this engine refused: an update's validator, a failing query, an unknown type. */
  | 'refused'
  /** Gave up waiting (an update's timeout). */
  | 'timed-out'
  /** The engine is stopping or not running yet. */
  | 'unavailable'
  /** Anything else: a bug or a store failure. */
  | 'internal';

const classes: Readonly<Record<string, ErrorClass>> = {
  InvalidRequestError: 'bad-input',
  ProtocolError: 'bad-input',
  InvalidArgumentError: 'bad-input',
  InvalidOptionsError: 'bad-input',
  InvalidScheduleError: 'bad-input',
  InvalidSearchAttributeError: 'bad-input',
  PayloadNotSerializableError: 'bad-input',
  PayloadTooLargeError: 'too-large',
  WorkflowNotFoundError: 'not-found',
  ScheduleNotFoundError: 'not-found',
  WorkflowAlreadyExistsError: 'conflict',
  SingletonConflictError: 'conflict',
  QueueNotFoundError: 'not-found',
  WorkflowIdReuseError: 'conflict',
  InvalidWorkflowStateError: 'conflict',
  ScheduleExistsError: 'conflict',
  ActivityCompletionRefusedError: 'conflict',
  ObserverCannotClaimError: 'conflict',
  WorkflowClaimUnavailableError: 'conflict',
  UpdateRejectedError: 'refused',
  QueryFailedError: 'refused',
  WorkflowNotRegisteredError: 'refused',
  UpdateTimeoutError: 'timed-out',
  EngineDisposedError: 'unavailable',
  EngineUnavailableError: 'unavailable',
};

/** The class of an error the engine (or a command's own checks) threw. */
export function classifyError(error: unknown): ErrorClass {
  if (error instanceof StartupError) return 'bad-input';
  return classOfName(error instanceof Error ? error.name : '');
}

/** The class of an error by its name (a serialized error has only its name). */
export function classOfName(name: string): ErrorClass {
  return Object.hasOwn(classes, name) ? classes[name]! : 'internal';
}
