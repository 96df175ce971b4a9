/**
 * The storage layer's public API: the contract (types, errors, limits), the adapters, fault injection and the
 * conformance suite. The engine imports only types.ts, errors.ts and utf8.ts; the worker imports this module.
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
export {
  FaultInjectingStorage,
  FaultInjector,
  seededRandom,
  type FaultCounts,
  type FaultDelay,
  type FaultOptions,
  type FaultRates,
  type FaultSettings,
  type StorageOperationName,
} from './faults';
export {
  ConformanceFailure,
  runStorageConformance,
  storageConformanceCases,
  type ConformanceOutcome,
  type ConformanceResult,
  type ConformanceStore,
  type StorageConformanceCase,
  type StorageConformanceFactory,
} from './conformance';
