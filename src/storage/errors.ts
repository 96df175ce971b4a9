/** Why a storage call failed. A failed condition is never an error: it is `false`. */
export type StorageErrorCode =
  | 'invalid-input' // rejected before anything was written
  | 'quota-exceeded'
  | 'closed' // the store was closed, or the database deleted underneath
  | 'blocked' // an upgrade in another tab blocks the database
  | 'version-change' // another context upgraded or deleted the database; reopen
  | 'injected-fault' // a fault-injecting wrapper failed the call on purpose
  | 'unknown';

/**
 * Every storage failure rejects with this error. `operation` names the call (`get`, `scan`, `batch`,
 * `conditionalBatch`, `commitGroups`, `open`, …); the message says what failed and what to do.
 * `applied` is set only by fault injection to say whether a failed commit in fact applied.
 */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  readonly code: StorageErrorCode;
  readonly operation: string;
  readonly applied: boolean | undefined;

  constructor(
    operation: string,
    code: StorageErrorCode,
    message: string,
    options?: { cause?: unknown; applied?: boolean },
  ) {
    super(
      `Storage ${operation} failed (${code}): ${message}`,
      options?.cause ? { cause: options.cause } : undefined,
    );
    this.operation = operation;
    this.code = code;
    this.applied = options?.applied;
  }
}

export function isStorageError(error: unknown): error is StorageError {
  return error instanceof Error && error.name === 'StorageError' && 'operation' in error;
}
