/**
 * The storage layer's public API for runtime code: the contract (types, errors, limits) and the browser-safe
 * adapters. The engine imports only types.ts, errors.ts and utf8.ts; the worker imports this module. Imported
 * by path instead: the PostgreSQL adapter (Node only), and, by tests only, fault injection
 * (faults.test-support.ts) and the conformance suite (conformance-cases.test-support.ts).
 */

export type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
} from './types';
export { storageLimits } from './types';
export { StorageError, isStorageError, type StorageErrorCode } from './errors';
export { MemoryStorage, type MemoryStorageOptions } from './memory';
export { IndexedDbStorage, type IndexedDbDurability, type IndexedDbStorageOptions } from './indexeddb';
