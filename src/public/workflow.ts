/**
 * `shuttle/workflow`: what workflow code imports — `defineWorkflow`, the workflow context's types, the
 * activity helper `delay`, and the errors a workflow may catch. Nothing here runs an engine. The list lives
 * in src/engine/workflow-api.ts, which is also what a definition written in the studio or loaded by
 * `shuttle worker` gets when it imports `'shuttle'` or `'shuttle/workflow'`.
 */
export * from '../engine/workflow-api';
