/**
 * Shuttle's engine: the public API. Everything a host or a workflow author uses is exported here; nothing
 * else in `src/engine` is public. See docs/engine.md and docs/ownership.md for the contract.
 */
export { createEngine } from './engine';
export type { Engine, WorkflowHandle, ShutdownReport } from './engine-api';
export type { EngineOptions, OwnershipMode } from './options';
export { ownershipModes } from './options';
export type { IdReuse, StartOptions } from './lifecycle';
export type { PurgeReport } from './purge';
export type { ClaimHolder, ReclaimOutcome } from './ownership/ownership';
export { defineWorkflow, Operation, describeCommand } from './workflow';
export type {
  ActivityContext,
  ActivityFunction,
  ActivityOptions,
  AnyWorkflowDefinition,
  ChildOptions,
  Command,
  ParentClosePolicy,
  QueryHandler,
  RetryPolicy,
  UpdateDefinition,
  WorkflowContext,
  WorkflowDefinition,
  WorkflowInput,
  WorkflowOutput,
} from './workflow';
export { SimulatedClock, systemClock, settle } from './clock';
export { delay } from './activity-helpers';
export type { Clock } from './clock';
export type { Json, JsonObject } from './codec';
export type {
  EngineEvent,
  EngineEventType,
  EngineListener,
  EngineWarning,
  WakeKind,
  ResultSettledVia,
} from './events';
export type { EngineMetrics, ClaimOutcome } from './metrics';
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
} from './inspect';
export type { ResultWaiterInfo } from './result-waiters';
export type { FenceRejection, ScheduledBy, TimelineDetails, TimelineEntry } from './records';
export type { ScheduleSpecInput } from './schedules/schedules';
export type {
  ScheduleCatchUp,
  ScheduleInfo,
  ScheduleOverlap,
  ScheduleSpec,
  ScheduleStartOptions,
  SlotOutcome,
} from './schedules/records';
export { scheduleCatchUps, scheduleOverlaps } from './schedules/records';
export { acceptedCronForm, previewCron } from './schedules/cron';
export type { StoredKeyKind } from './keys';
export { describeStoredKey, hostKeys } from './keys';
export type { AcquireHow, TakeoverReason, TerminalStatus, TimelineKind, WorkflowStatus } from './vocabulary';
export {
  entriesOf,
  isTerminal,
  isWorkflowStatus,
  terminalStatuses,
  timelineKinds,
  workflowStatuses,
} from './vocabulary';
export type { EngineLiveness } from './ownership/liveness';
export { InMemoryLiveness } from './ownership/liveness';
export {
  ActivityFailedError,
  ActivityTimeoutError,
  CancelledError,
  ChildWorkflowFailedError,
  CorruptRecordError,
  EngineDisposedError,
  EngineLeaseAcquisitionTimeoutError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidWorkflowStateError,
  InvalidScheduleError,
  NonDeterminismError,
  OwnershipModeMismatchError,
  PayloadNotSerializableError,
  PayloadTooLargeError,
  QueryFailedError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  StorageError,
  UpdateRejectedError,
  ActivityCompletionRefusedError,
  WorkflowIdReuseError,
  UpdateTimeoutError,
  WorkflowAlreadyExistsError,
  WorkflowCancelledError,
  WorkflowClaimUnavailableError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowNotRegisteredError,
  WorkflowTerminatedError,
  WorkflowTimedOutError,
  WorkflowVersionMismatchError,
  deserializeError,
  serializeError,
} from './errors';
export type { SerializedError } from './errors';
