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
export * from './workflow';
export { createEngine } from '../engine/engine';
export type { Engine, WorkflowHandle, ShutdownReport } from '../engine/engine-api';
export type { EngineOptions, OwnershipMode } from '../engine/options';
export { ownershipModes } from '../engine/options';
export type { IdReuse, StartOptions } from '../engine/lifecycle';
export type { PurgeReport } from '../engine/purge';
export type { ClaimHolder, ReclaimOutcome } from '../engine/ownership/ownership';
export type { EngineLiveness } from '../engine/ownership/liveness';
export { SimulatedClock, systemClock, settle } from '../engine/clock';
export type { Clock } from '../engine/clock';
export type {
  EngineEvent,
  EngineEventType,
  EngineListener,
  EngineWarning,
  WakeKind,
  ResultSettledVia,
} from '../engine/events';
export type { EngineMetrics, ClaimOutcome } from '../engine/metrics';
export type {
  ClaimInfo,
  ListFilter,
  ListPage,
  OperationKind,
  OperationOutcome,
  OutcomeOf,
  PendingOperation,
  WorkflowDescription,
  WorkflowOwner,
  WorkflowSummary,
  RunSummary,
} from '../engine/inspect';
export type { ResultWaiterInfo } from '../engine/result-waiters';
export type { FenceRejection, ScheduledBy, TimelineDetails, TimelineEntry } from '../engine/records';
export type { ScheduleSpecInput } from '../engine/schedules/schedules';
export type {
  ScheduleCatchUp,
  ScheduleInfo,
  ScheduleOverlap,
  ScheduleSpec,
  ScheduleStartOptions,
  SlotOutcome,
} from '../engine/schedules/records';
export type {
  AcquireHow,
  TakeoverReason,
  TerminalStatus,
  TimelineKind,
  WorkflowStatus,
} from '../engine/vocabulary';
export { isTerminal, terminalStatuses, workflowStatuses } from '../engine/vocabulary';
export {
  ActivityCompletionRefusedError,
  CorruptRecordError,
  EngineDisposedError,
  EngineLeaseAcquisitionTimeoutError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidScheduleError,
  InvalidWorkflowStateError,
  NonDeterminismError,
  OwnershipModeMismatchError,
  PayloadNotSerializableError,
  PayloadTooLargeError,
  QueryFailedError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  StorageError,
  UpdateRejectedError,
  UpdateTimeoutError,
  WorkflowAlreadyExistsError,
  WorkflowCancelledError,
  WorkflowClaimUnavailableError,
  WorkflowFailedError,
  WorkflowIdReuseError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  WorkflowTerminatedError,
  WorkflowTimedOutError,
  WorkflowVersionMismatchError,
  deserializeError,
  serializeError,
} from '../engine/errors';
export type { SerializedError } from '../engine/errors';
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
