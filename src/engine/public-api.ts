/**
 * The engine's public API, as one list: what the package's root entry point `shuttle` exports of the engine
 * (src/public/index.ts adds the in-memory store and the storage contract), and the start of the engine's
 * API for the rest of this repository (index.ts adds what only the host, the studio and the tests use).
 * The workflow API (workflow-api.ts) is part of it.
 */
export * from './workflow-api';
export { createEngine } from './engine';
export type { Engine, WorkflowHandle, ShutdownReport } from './engine-api';
export type { ActivityLimit, EngineInterceptors, EngineOptions, OwnershipMode } from './options';
export type { ActivityLimitInfo, ActivitySlotHolder } from './activity-limits';
export { ownershipModes } from './options';
export type { EngineTracer, SpanAttributes, TraceContext, TracerSpan } from './tracing';
export type { PayloadCodec } from './payload-codec';
export type { IdReuse, StartOptions } from './lifecycle';
export type { ForkOptions } from './fork';
export { replay, historyFormat, historiesIn } from './replay-check';
export type { RecordedHistory, ReplayReport } from './replay-check';
export type { PurgeReport } from './purge';
export type { ClaimHolder, ReclaimOutcome } from './ownership/ownership';
export type { EngineLiveness } from './ownership/liveness';
export { SimulatedClock, systemClock, settle } from './clock';
export type { Clock } from './clock';
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
export type {
  FenceRejection,
  ForkedFrom,
  Frontier,
  HistoryEntry,
  Leaf,
  ScheduledBy,
  TimelineDetails,
  TimelineEntry,
} from './records';
export type { ScheduleSpecInput } from './schedules/schedules';
export type {
  QueueDeclaration,
  QueueDefinition,
  QueueMembership,
  QueueOptions,
  QueueStartOptions,
  StartKeyMembership,
} from './queues/queue-options';
export type { QueuePosition, QueueView } from './queues/queues';
export type {
  ScheduleCatchUp,
  ScheduleInfo,
  ScheduleOverlap,
  ScheduleSpec,
  ScheduleStartOptions,
  SlotOutcome,
} from './schedules/records';
export type { AcquireHow, TakeoverReason, TerminalStatus, TimelineKind, WorkflowStatus } from './vocabulary';
export {
  defaultMaxPayloadBytes,
  entriesOf,
  isTerminal,
  isWorkflowStatus,
  maxIdLength,
  terminalStatuses,
  workflowStatuses,
} from './vocabulary';
export { payloadBytes } from './codec';
export { matchesListFilter } from './list-row';
export {
  attributeLimits,
  attributeTypes,
  attributesFromText,
  formatAttribute,
  formatAttributes,
  parseWhere,
  type AttributeDeclarations,
  type AttributeFilter,
  type AttributeFilterValue,
  type AttributeInput,
  type AttributeRange,
  type AttributeType,
  type SearchAttribute,
  type SearchAttributes,
} from './attributes';
export {
  checkOwnershipInvariants,
  type InvariantName,
  type InvariantResult,
  type WorkflowEvidence,
} from './invariants';
export {
  ActivityCompletionRefusedError,
  CorruptRecordError,
  EngineDisposedError,
  EngineLeaseAcquisitionTimeoutError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  InvalidOptionsError,
  InvalidScheduleError,
  InvalidSearchAttributeError,
  InvalidWorkflowStateError,
  NonDeterminismError,
  OwnershipModeMismatchError,
  PayloadCodecError,
  PayloadCodecRequiredError,
  PayloadNotSerializableError,
  PayloadTooLargeError,
  QueryFailedError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  QueueNotFoundError,
  SingletonConflictError,
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
} from './errors';
export type { SerializedError } from './errors';
