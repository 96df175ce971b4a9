/**
 * `shuttle`: the engine, for a program that runs one in its own process or tests its workflows —
 * `createEngine`, its options, events, metrics and errors, the in-memory store, the storage contract a
 * custom store implements, and a simulated clock for tests. It also re-exports the workflow API
 * (`shuttle/workflow`), so a single-file program needs one import.
 *
 * Other entry points: `shuttle/workflow` (what workflow code imports, nothing that runs an engine),
 * `shuttle/browser` and `shuttle/browser-worker` (the tab-coordinated engine for any web app),
 * `shuttle/react` (hooks over it), `shuttle/server` (worker processes over PostgreSQL or embedded PGlite).
 */
export * from '../engine/public-api';
export { MemoryStorage, type MemoryStorageOptions } from '../storage/memory';
/** A running host: what `runBrowserEngine` (shuttle/browser-worker) returns and a worker's `host` (shuttle/server). */
export type { EngineHost } from '../host/host-options';
export type {
  CommitGroup,
  Condition,
  Entry,
  Operation as StorageOperation,
  ScanOptions,
  Storage,
  StorageCapabilities,
  StorageUsage,
} from '../storage/types';
export { storageLimits } from '../storage/types';
export { isStorageError, type StorageErrorCode } from '../storage/errors';
