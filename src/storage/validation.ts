/**
 * Input validation shared by every adapter (storage contract rule 4).
 *
 * Every write is checked completely before anything is written, so a rejected call leaves the store exactly as
 * it was: empty or non-string keys, non-string values, unknown operation types, more than 1,000 operations or
 * conditions in one batch (per group for `commitGroups`), a key over 1 KiB and a value over the adapter's
 * limit (both measured in UTF-8 bytes) are rejected with a `StorageError` of code `invalid-input` that names
 * the operation, the offending key (truncated) and the limit. Reads validate their keys and options the same
 * way, so a caller bug surfaces where it is made rather than as a silent `null`.
 *
 * Sizes are UTF-8 bytes, not UTF-16 code units: a server adapter (SQLite, PostgreSQL) stores UTF-8, and the
 * limits must mean the same everywhere. A lone surrogate counts as the 3 bytes of its replacement character.
 */

import { StorageError } from './errors';
import { storageLimits, type CommitGroup, type Condition, type Operation, type ScanOptions } from './types';
import { utf8Bytes } from './utf8';

/** Limits an adapter was configured with. */
export type ValidationLimits = {
  /** Largest value accepted, in UTF-8 bytes. */
  maxValueBytes: number;
};

const shownKeyLength = 64;

/**
 * The value size limit an adapter uses: `maxValueBytes` if given (a positive integer), else
 * `storageLimits.defaultMaxValueBytes` (1 MiB).
 */
export function resolveMaxValueBytes(maxValueBytes: number | undefined): number {
  if (maxValueBytes === undefined) return storageLimits.defaultMaxValueBytes;
  if (!Number.isSafeInteger(maxValueBytes) || maxValueBytes <= 0) {
    throw new StorageError(
      'open',
      'invalid-input',
      `maxValueBytes must be a positive whole number of bytes, got ${String(maxValueBytes)}.`,
    );
  }
  return maxValueBytes;
}

/** Whether `text` takes more than `limit` UTF-8 bytes, counting only when the length alone cannot tell. */
function isOverByteLimit(text: string, limit: number): boolean {
  if (text.length * 3 <= limit) return false; // at most 3 bytes per UTF-16 code unit
  if (text.length > limit) return true; // at least 1 byte per code unit
  return utf8Bytes(text) > limit;
}

/** A key quoted and shortened for an error message. */
export function describeKey(key: string): string {
  const shown = key.length > shownKeyLength ? `${key.slice(0, shownKeyLength)}…` : key;
  return JSON.stringify(shown);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

const writeOperations = new Set(['batch', 'conditionalBatch', 'commitGroups']);

function reject(operation: string, message: string): never {
  const suffix = writeOperations.has(operation) ? ' Nothing was written.' : '';
  throw new StorageError(operation, 'invalid-input', `${message}${suffix}`);
}

/** Checks one key; `where` says which part of the call it came from ("operation 3", "key 0", …). */
export function validateKey(operation: string, key: unknown, where: string): asserts key is string {
  if (typeof key !== 'string') {
    reject(operation, `${where} has a key of type ${describeType(key)}; keys must be strings.`);
  }
  if (key.length === 0) reject(operation, `${where} has an empty key; keys must not be empty.`);
  if (isOverByteLimit(key, storageLimits.maxKeyBytes)) {
    reject(
      operation,
      `${where} has a key of ${utf8Bytes(key)} UTF-8 bytes (key ${describeKey(key)}), over the limit of ` +
        `${storageLimits.maxKeyBytes} bytes.`,
    );
  }
}

/** Checks the keys of `get` / `getMany`. */
export function validateReadKeys(operation: string, keys: unknown): asserts keys is readonly string[] {
  if (!Array.isArray(keys)) reject(operation, `keys must be an array, got ${describeType(keys)}.`);
  keys.forEach((key, index) => validateKey(operation, key, `key ${index}`));
}

/** Checks a scan's prefix and options. An empty prefix scans every key. */
export function validateScan(operation: string, prefix: unknown, options: ScanOptions | undefined): void {
  if (typeof prefix !== 'string') reject(operation, `prefix must be a string, got ${describeType(prefix)}.`);
  if (isOverByteLimit(prefix, storageLimits.maxKeyBytes)) {
    reject(
      operation,
      `prefix ${describeKey(prefix)} is over the key limit of ${storageLimits.maxKeyBytes} bytes.`,
    );
  }
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null) {
    reject(operation, `options must be an object, got ${describeType(options)}.`);
  }
  const { after, limit, reverse } = options;
  if (after !== undefined && typeof after !== 'string') {
    reject(operation, `options.after must be a string, got ${describeType(after)}.`);
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    reject(operation, `options.limit must be a whole number of entries (0 or more), got ${String(limit)}.`);
  }
  if (reverse !== undefined && typeof reverse !== 'boolean') {
    reject(operation, `options.reverse must be a boolean, got ${describeType(reverse)}.`);
  }
}

function validateOperations(
  operation: string,
  operations: unknown,
  limits: ValidationLimits,
  scope: string,
): asserts operations is readonly Operation[] {
  if (!Array.isArray(operations)) {
    reject(operation, `${scope}operations must be an array, got ${describeType(operations)}.`);
  }
  if (operations.length > storageLimits.maxOperationsPerBatch) {
    reject(
      operation,
      `${scope}${operations.length} operations exceed the limit of ${storageLimits.maxOperationsPerBatch} ` +
        'per batch; split the work into several batches.',
    );
  }
  operations.forEach((item: unknown, index) => {
    const where = `${scope}operation ${index}`;
    if (typeof item !== 'object' || item === null) {
      reject(operation, `${where} must be an object, got ${describeType(item)}.`);
    }
    const { type, key } = item as { type?: unknown; key?: unknown };
    if (type !== 'put' && type !== 'delete') {
      reject(
        operation,
        `${where} has type ${typeof type === 'string' ? JSON.stringify(type) : describeType(type)}; expected "put" or "delete".`,
      );
    }
    validateKey(operation, key, where);
    if (type === 'delete') return;
    const { value } = item as { value?: unknown };
    if (typeof value !== 'string') {
      reject(
        operation,
        `${where} (key ${describeKey(key)}) has a value of type ${describeType(value)}; values must be ` +
          'strings (encode JSON before storing).',
      );
    }
    if (isOverByteLimit(value, limits.maxValueBytes)) {
      reject(
        operation,
        `${where} (key ${describeKey(key)}) has a value of ${utf8Bytes(value)} UTF-8 bytes, over the ` +
          `limit of ${limits.maxValueBytes} bytes.`,
      );
    }
  });
}

function validateConditions(
  operation: string,
  conditions: unknown,
  scope: string,
): asserts conditions is readonly Condition[] {
  if (!Array.isArray(conditions)) {
    reject(operation, `${scope}conditions must be an array, got ${describeType(conditions)}.`);
  }
  if (conditions.length > storageLimits.maxConditionsPerBatch) {
    reject(
      operation,
      `${scope}${conditions.length} conditions exceed the limit of ${storageLimits.maxConditionsPerBatch} ` +
        'per batch.',
    );
  }
  conditions.forEach((item: unknown, index) => {
    const where = `${scope}condition ${index}`;
    if (typeof item !== 'object' || item === null) {
      reject(operation, `${where} must be an object, got ${describeType(item)}.`);
    }
    const { key, expected } = item as { key?: unknown; expected?: unknown };
    validateKey(operation, key, where);
    if (expected !== null && typeof expected !== 'string') {
      reject(
        operation,
        `${where} (key ${describeKey(key)}) expects a value of type ${describeType(expected)}; expected must ` +
          'be a string, or null for "the key must be absent".',
      );
    }
  });
}

/** Checks the operations of `batch`. */
export function validateBatch(operation: string, operations: unknown, limits: ValidationLimits): void {
  validateOperations(operation, operations, limits, '');
}

/** Checks the conditions and operations of `conditionalBatch`. */
export function validateConditionalBatch(
  operation: string,
  conditions: unknown,
  operations: unknown,
  limits: ValidationLimits,
): void {
  validateConditions(operation, conditions, '');
  validateOperations(operation, operations, limits, '');
}

/** Checks every group of `commitGroups`; the limits apply to each group on its own. */
export function validateCommitGroups(
  operation: string,
  groups: unknown,
  limits: ValidationLimits,
): asserts groups is readonly CommitGroup[] {
  if (!Array.isArray(groups)) reject(operation, `groups must be an array, got ${describeType(groups)}.`);
  groups.forEach((group: unknown, index) => {
    const scope = `group ${index}: `;
    if (typeof group !== 'object' || group === null) {
      reject(operation, `${scope}must be an object, got ${describeType(group)}.`);
    }
    const { conditions, operations } = group as { conditions?: unknown; operations?: unknown };
    validateConditions(operation, conditions, scope);
    validateOperations(operation, operations, limits, scope);
  });
}

/** Checks the arguments of `watch` (which throws synchronously rather than rejecting). */
export function validateWatch(prefix: unknown, listener: unknown): void {
  if (typeof prefix !== 'string') {
    throw new StorageError('watch', 'invalid-input', `prefix must be a string, got ${describeType(prefix)}.`);
  }
  if (typeof listener !== 'function') {
    throw new StorageError(
      'watch',
      'invalid-input',
      `listener must be a function, got ${describeType(listener)}.`,
    );
  }
}
