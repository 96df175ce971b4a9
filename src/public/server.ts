/**
 * `shuttle/server`: Shuttle on servers. `startWorker` runs an engine in this Node process over PostgreSQL
 * (`databaseUrl`) or the embedded PGlite store (`dataDir`), behind the same host a studio tab uses, so the
 * studio (`shuttle serve`) lists it and shows its custody; `PostgresStorage` is the store itself, for a
 * program that calls `createEngine` directly. The `shuttle` command (`shuttle worker`, `serve`, `dev`) is the
 * same code with flags. `createHttpApi` is the HTTP API `shuttle serve` serves, for a program's own server.
 */
export { startWorker, defaultWorkerTimings, type WorkerOptions, type RunningWorker } from '../server/worker';
export { startServer, type ServeOptions, type RunningServer } from '../server/serve';
export { createHttpApi, type HttpApi, type HttpApiOptions } from '../server/http-api/api';
export { openStore, StartupError, type StoreOptions, type OpenedStore } from '../server/store';
export { createLogger, type Logger, type LogLevel } from '../server/log';
export {
  PostgresStorage,
  PostgresSchemaVersionError,
  type PostgresStorageOptions,
  type PostgresStorageCommonOptions,
  type EmbeddedPostgresOptions,
} from '../storage/postgres';
export { PostgresLiveness } from '../server/postgres-liveness';
export type { FleetActionOutcome, FleetActionType, FleetProcess } from '../protocol';
