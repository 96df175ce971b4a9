/**
 * `shuttle/browser`: the page side of the browser runtime, for any web app. `connectBrowserEngine` starts
 * this tab's engine worker (the app's own module calling `runBrowserEngine` from `shuttle/browser-worker`)
 * and returns a client: `client.api.<method>(params)` starts, signals, updates, queries, cancels, lists and
 * awaits workflows from any tab; `client.subscribe` hears every change. Every tab of the app that calls it
 * with the same `databaseName` shares the workflows, each running on exactly one tab at a time and moving to
 * another in tens of milliseconds when its tab closes. `connectShuttleServer` gives the same client for a
 * page served by a Shuttle server (`shuttle serve`), acting on its engines.
 *
 * The studio's pages are built on this entry, `shuttle/react` and the types of `shuttle`, and on nothing
 * else of the package's internals. This entry holds no engine: a page pulls in the client only (its size is budgeted: see package.json).
 */
export {
  connectBrowserEngine,
  connectShuttleServer,
  defaultDatabaseName,
  type BrowserEngineConnectOptions,
  type LaunchOptions,
} from '../client/launch';
export type { ShuttleClient, ProtocolApi, WaitForOptions, ClientConnection } from '../client/client';
/** The wire contract: the methods of `client.api`, what they take and give, and what engines push. */
export { PROTOCOL_VERSION, hostClaimTimings } from '../protocol';
export type {
  ActivityLimitView,
  CompileReport,
  DefinitionDiagnostic,
  DefinitionInfo,
  DeleteOutcome,
  EngineDirectoryEntry,
  EngineRecord,
  EngineStatus,
  FleetActionType,
  FleetProcess,
  HelloResult,
  HostWarning,
  Method,
  Params,
  PushMessage,
  Result,
  SaveOutcome,
  SchedulePreview,
  StartedRun,
} from '../protocol';
export type {
  Json,
  JsonObject,
  ListFilter,
  ListPage,
  OperationOutcome,
  TakeoverReason,
  TerminalStatus,
  TimelineEntry,
  TimelineKind,
  WorkflowDescription,
  WorkflowOwner,
  WorkflowStatus,
  WorkflowSummary,
} from './index';
export {
  defaultMaxPayloadBytes,
  entriesOf,
  isTerminal,
  isWorkflowStatus,
  maxIdLength,
  terminalStatuses,
  workflowStatuses,
} from '../engine/vocabulary';
export { payloadBytes } from '../engine/codec';
export { matchesListFilter } from '../engine/list-row';
export { formatAttribute, formatAttributes, parseWhere } from '../engine/attributes';
/** The ownership invariants over workflows' durable records (the studio's chaos drills check them). */
export {
  checkOwnershipInvariants,
  type InvariantName,
  type InvariantResult,
  type WorkflowEvidence,
} from '../engine/invariants';
