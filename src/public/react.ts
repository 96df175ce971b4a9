/**
 * `shuttle/react`: React bindings for apps that show their workflows — `ShuttleProvider` around the app,
 * then `useWorkflow(id)` (a workflow's live status, state and result), `useWorkflows(filter)` (a live list),
 * `useStartWorkflow()` and `useSignalWorkflow()`. Built on TanStack Query and on the same client context and
 * query keys as the studio's data layer. `react` and `@tanstack/react-query` are peer dependencies: an app
 * that does not import this entry point pulls in neither.
 */
export { ShuttleProvider, type ShuttleProviderProps } from '../react/provider';
export { ShuttleClientProvider, useShuttleClient } from '../react/client-context';
export {
  useWorkflow,
  useWorkflows,
  useStartWorkflow,
  useSignalWorkflow,
  type StartWorkflowRequest,
  type SignalWorkflowRequest,
} from '../react/hooks';
export { staleWorkflowQueriesOf, connectWorkflowLiveUpdates } from '../react/live';
export { queryKeys } from '../react/query-keys';
