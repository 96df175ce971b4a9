/**
 * The workflow API, as one list: what workflow code imports — `defineWorkflow`, the workflow context's types, the
 * activity helpers, and the errors a workflow may catch. Nothing here runs an engine, so a file of
 * definitions can be imported by the page, the worker, a Node service and the studio's editor alike.
 *
 * This is also exactly what a definition written in the studio, or loaded by `shuttle worker` from a
 * definition file, gets when it imports `'shuttle'` or `'shuttle/workflow'` (src/host/authoring/compile.ts
 * reads this module). The package's `shuttle/workflow` entry (src/public/workflow.ts) is this module.
 */
export { defineWorkflow, Operation } from './workflow';
export { defineQueue } from './queues/queue-options';
export type {
  ActivityCall,
  ActivityContext,
  ActivityInterceptor,
  ActivityFunction,
  ActivityOptions,
  AnyWorkflowDefinition,
  ChildOptions,
  Command,
  ContinueAsNewOptions,
  ParentClosePolicy,
  QueryHandler,
  RetryPolicy,
  UpdateDefinition,
  WorkflowCall,
  WorkflowContext,
  WorkflowDefinition,
  WorkflowInput,
  WorkflowInterceptor,
  WorkflowOutput,
} from './workflow';
export type { Json, JsonObject } from './codec';
export { delay } from './activity-helpers';
export {
  ActivityFailedError,
  ActivityHeartbeatTimeoutError,
  ActivityTimeoutError,
  CancelledError,
  ChildWorkflowFailedError,
} from './errors';
