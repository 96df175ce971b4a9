/**
 * `shuttle/browser`: the page side of the browser runtime, for any web app. `connectBrowserEngine` starts
 * this tab's engine worker (the app's own module calling `runBrowserEngine` from `shuttle/browser-worker`)
 * and returns a client: `client.api.<method>(params)` starts, signals, updates, queries, cancels, lists and
 * awaits workflows from any tab; `client.subscribe` hears every change. Every tab of the app that calls it
 * with the same `databaseName` shares the workflows, each running on exactly one tab at a time and moving to
 * another in tens of milliseconds when its tab closes.
 *
 * This entry holds no engine: a page pulls in the client only (its size is budgeted: see package.json).
 */
export {
  connectBrowserEngine,
  defaultDatabaseName,
  type BrowserEngineConnectOptions,
  type LaunchOptions,
} from '../client/launch';
export type { ShuttleClient, ProtocolApi, WaitForOptions, ClientConnection } from '../client/client';
export type { Method, Params, Result, PushMessage, HelloResult, StartedRun } from '../protocol';
export type {
  Json,
  JsonObject,
  ListFilter,
  ListPage,
  OperationOutcome,
  TerminalStatus,
  TimelineEntry,
  WorkflowDescription,
  WorkflowOwner,
  WorkflowStatus,
  WorkflowSummary,
} from './index';
export { isTerminal, terminalStatuses, workflowStatuses } from '../engine/vocabulary';
