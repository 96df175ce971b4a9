/**
 * The HTTP API's routes, declared once: each is a resource path over one method of the wire contract
 * (src/protocol), saying where that method's params come from — the path, the query string or the JSON body
 * — and what a success answers. The API (api.ts) serves this table through the protocol's own param rules
 * and the host's own handlers, so the HTTP API, a tab's worker and the studio server's WebSocket refuse the
 * same bad input with the same reason; the OpenAPI document (openapi.ts) is generated from it.
 */
import { workflowStatuses } from '../../engine';
import type { Method } from '../../protocol';

/** A query parameter: its type on the wire, and which param (or `filter` field) of the method it fills. */
export type QueryParam = {
  /** `time`: epoch milliseconds, or an ISO 8601 time. */
  type: 'string' | 'integer' | 'boolean' | 'string-list' | 'time' | 'repeated';
  /** The method's param it fills, `filter.<field>` for a list filter, or absent: the API itself reads it. */
  to?: string;
  description: string;
  minimum?: number;
  maximum?: number;
  /** Allowed values (each item of a `string-list`). */
  values?: readonly string[];
};

export type Route = {
  method: 'GET' | 'POST' | 'DELETE';
  /** OpenAPI path template; `{name}` segments fill the method's param of that name. */
  path: string;
  operationId: string;
  tag: 'workflows' | 'schedules' | 'queues' | 'activities';
  summary: string;
  description?: string;
  /** The protocol method the route serves (its params are checked by that method's rules). */
  calls: Method;
  query?: Readonly<Record<string, QueryParam>>;
  /** Whether the route takes a JSON body: its fields are the method's params the path and query do not give. */
  body?: boolean;
  /** JSON Schemas (components) of object-valued body fields, for the document. */
  bodyFields?: Readonly<Record<string, string>>;
  /** A success: its status, and the component schema of the body (none for 204). */
  success: { status: 200 | 201 | 204; schema?: string; description: string };
  /** How a method's result becomes the body: as is, `{ items: result }`, or `{ result }`. */
  shape?: 'items' | 'result';
  /** The error statuses this route can answer besides 400, 401 and 500. */
  errors: readonly number[];
};

const run: QueryParam = {
  type: 'integer',
  to: 'run',
  minimum: 1,
  description: 'An earlier run kept by run history (default: the latest run).',
};

export const routes: readonly Route[] = [
  {
    method: 'POST',
    path: '/workflows',
    operationId: 'startWorkflow',
    tag: 'workflows',
    summary: 'Start a workflow',
    description:
      'Starts a workflow of a type the serving engine has registered. An `Idempotency-Key` header is the same as `options.idempotencyKey`: a repeat within the engine window answers 200 with the run the key started and `started: false`.',
    calls: 'start',
    body: true,
    bodyFields: { options: 'StartOptions' },
    success: {
      status: 201,
      schema: 'StartedRun',
      description: 'Started (200 and `started: false`: the idempotency key had already started this run).',
    },
    errors: [409, 413, 422],
  },
  {
    method: 'GET',
    path: '/workflows',
    operationId: 'listWorkflows',
    tag: 'workflows',
    summary: 'List workflows in id order, a page at a time',
    calls: 'list',
    query: {
      status: {
        type: 'string-list',
        to: 'filter.status',
        values: workflowStatuses,
        description: 'Only these statuses, comma-separated.',
      },
      workflowType: { type: 'string', to: 'filter.workflowType', description: 'Only this workflow type.' },
      idPrefix: { type: 'string', to: 'filter.idPrefix', description: 'Only ids starting with this.' },
      owner: {
        type: 'string',
        to: 'filter.ownerEngineId',
        description: 'Only workflows this engine id holds now.',
      },
      limit: {
        type: 'integer',
        to: 'filter.limit',
        minimum: 1,
        maximum: 1000,
        description: 'Page size (default 100).',
      },
      cursor: { type: 'string', to: 'filter.cursor', description: '`nextCursor` of the previous page.' },
      allRuns: {
        type: 'boolean',
        to: 'filter.allRuns',
        description: 'Also the earlier runs kept by run history, each after its latest run.',
      },
      createdFrom: {
        type: 'time',
        to: 'filter.createdFrom',
        description: 'Only workflows created at or after this time (epoch ms or ISO 8601).',
      },
      createdTo: {
        type: 'time',
        to: 'filter.createdTo',
        description: 'Only workflows created before this time.',
      },
      endedFrom: {
        type: 'time',
        to: 'filter.endedFrom',
        description: 'Only workflows that ended at or after this time (an unfinished one has not ended).',
      },
      endedTo: {
        type: 'time',
        to: 'filter.endedTo',
        description: 'Only workflows that ended before this time.',
      },
      where: {
        type: 'repeated',
        to: 'filter.where',
        description:
          "Search attributes (`ctx.setAttributes`): `name op value`, op one of `=` `>` `>=` `<` `<=`, the value read as the attribute's declared type (a time: ISO 8601 or epoch ms); repeat the parameter for more conditions, all must hold — `where=customer%3Dacme&where=amount%3E%3D100`. The list walks the attribute's index, not every workflow; a bad condition is 400 InvalidSearchAttributeError.",
      },
    },
    success: { status: 200, schema: 'ListPage', description: 'One page of workflows.' },
    errors: [],
  },
  {
    method: 'POST',
    path: '/signal-with-start',
    operationId: 'signalWithStart',
    tag: 'workflows',
    summary: 'Signal a workflow, starting it if it does not run',
    description:
      'Signals workflow `options.id` if it runs; otherwise starts it with the signal in the same commit.',
    calls: 'signalWithStart',
    body: true,
    bodyFields: { options: 'StartOptions' },
    success: { status: 200, schema: 'StartedRun', description: 'Signalled (`started: false`) or started.' },
    errors: [409, 413, 422],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}',
    operationId: 'describeWorkflow',
    tag: 'workflows',
    summary: "A workflow's state",
    description: 'Status, owner and epoch, what it waits on, input, result or error, buffered signals.',
    calls: 'describe',
    query: { run },
    success: { status: 200, schema: 'WorkflowDescription', description: 'The workflow.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}/runs',
    operationId: 'listRuns',
    tag: 'workflows',
    summary: 'Every stored run of a workflow id, latest first',
    calls: 'runs',
    shape: 'items',
    success: { status: 200, schema: 'RunList', description: 'The runs.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}/timeline',
    operationId: 'workflowTimeline',
    tag: 'workflows',
    summary: "A workflow's timeline: every event, with the engine and epoch that wrote it",
    calls: 'timeline',
    query: {
      run,
      after: {
        type: 'integer',
        to: 'after',
        minimum: 0,
        description: 'Only entries after this `seq` (the last `seq` of the previous page).',
      },
      limit: { type: 'integer', to: 'limit', minimum: 1, description: 'At most this many entries.' },
    },
    shape: 'items',
    success: { status: 200, schema: 'Timeline', description: 'The entries, oldest first.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}/history',
    operationId: 'workflowHistory',
    tag: 'workflows',
    summary: "A run's recorded history, for replay testing",
    description:
      "What replay testing checks code against: the run's identity, input, position and history entries. Save it as a fixture and run `shuttle replay --file` (or `replay(definitions, history)`) in CI.",
    calls: 'history',
    query: { run },
    success: { status: 200, schema: 'RecordedHistory', description: 'The recorded history.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}/result',
    operationId: 'workflowResult',
    tag: 'workflows',
    summary: "A workflow's outcome, waiting for it to finish (long poll)",
    description:
      'Answers at once when the run has finished; otherwise waits up to `waitMs` for it to finish, then answers with `finished: false` (ask again). The outcome of a failed, cancelled, terminated or timed-out run is a 200 too: `status` and `error` say how it ended.',
    calls: 'result',
    query: {
      run,
      waitMs: {
        type: 'integer',
        minimum: 0,
        maximum: 300_000,
        description: 'How long to wait for an unfinished run, in ms (default 30000; 0 answers at once).',
      },
    },
    success: { status: 200, schema: 'WorkflowOutcome', description: 'The outcome, or `finished: false`.' },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/signals/{name}',
    operationId: 'signalWorkflow',
    tag: 'workflows',
    summary: 'Send a signal (buffered until the workflow waits for one of that name)',
    calls: 'signal',
    body: true,
    success: { status: 204, description: 'Stored: the workflow receives it.' },
    errors: [404, 409, 413],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/queries/{name}',
    operationId: 'queryWorkflow',
    tag: 'workflows',
    summary: "Ask a running workflow a query; its holder answers from the workflow's state",
    calls: 'query',
    body: true,
    shape: 'result',
    success: { status: 200, schema: 'Answer', description: "The query's answer." },
    errors: [404, 409, 422],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/updates/{name}',
    operationId: 'updateWorkflow',
    tag: 'workflows',
    summary: 'Send an update and wait until the workflow applied it',
    description:
      "The update's validator runs first: a rejection is a 422 and changes nothing. `timeoutMs` bounds the wait (default 60 s; 504 when it passes: the update may still be applied).",
    calls: 'update',
    body: true,
    shape: 'result',
    success: { status: 200, schema: 'Answer', description: "The update handler's result." },
    errors: [404, 409, 413, 422, 504],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/cancel',
    operationId: 'cancelWorkflow',
    tag: 'workflows',
    summary: 'Ask a workflow to cancel (its code can clean up)',
    calls: 'cancel',
    body: true,
    success: { status: 204, description: 'Cancellation requested.' },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/terminate',
    operationId: 'terminateWorkflow',
    tag: 'workflows',
    summary: 'End a workflow at once, without running its code',
    calls: 'terminate',
    body: true,
    success: { status: 204, description: 'Terminated.' },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/suspend',
    operationId: 'suspendWorkflow',
    tag: 'workflows',
    summary: 'Pause a workflow: it runs nothing until resumed',
    calls: 'suspend',
    success: { status: 204, description: 'Suspended.' },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/resume',
    operationId: 'resumeWorkflow',
    tag: 'workflows',
    summary: 'Resume a suspended workflow',
    calls: 'resume',
    success: { status: 204, description: 'Resumed.' },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/workflows/{workflowId}/fork',
    operationId: 'forkWorkflow',
    tag: 'workflows',
    summary: 'Run a workflow again from one of its operations',
    description:
      "Starts a run that replays the recorded outcomes of the operations before `fromPosition` (a timeline entry's `detail.pos`) and runs that operation and everything after it anew, on the same input: the next run of the same id (which must have ended: else 409) or `newId`. Without `fromPosition`, a run that failed, was cancelled, terminated or timed out is forked from where it stopped. `run` picks an earlier run to copy; `version` another registered definition version.",
    calls: 'fork',
    body: true,
    success: { status: 201, schema: 'ForkedRun', description: 'The fork: its id and run.' },
    errors: [404, 409, 422],
  },
  {
    method: 'DELETE',
    path: '/workflows/{workflowId}',
    operationId: 'purgeWorkflow',
    tag: 'workflows',
    summary: 'Delete a finished workflow: every run, or one earlier run',
    calls: 'purge',
    query: { run: { ...run, description: 'Only this earlier run (default: every run).' } },
    success: { status: 200, schema: 'PurgeReport', description: 'What was deleted.' },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/activities/complete',
    operationId: 'completeActivity',
    tag: 'activities',
    summary: 'Complete an external activity with its result',
    description:
      "The token is the activity's `completionToken` (in the workflow's description, `pending.leaves[i]`). A token of an attempt that is no longer current is a 409.",
    calls: 'completeActivity',
    body: true,
    success: { status: 204, description: 'Recorded.' },
    errors: [404, 409, 413],
  },
  {
    method: 'POST',
    path: '/activities/fail',
    operationId: 'failActivity',
    tag: 'activities',
    summary: 'Fail an external activity (its retry policy applies)',
    calls: 'failActivity',
    body: true,
    bodyFields: { error: 'ActivityError' },
    success: { status: 204, description: 'Recorded.' },
    errors: [404, 409],
  },
  {
    method: 'GET',
    path: '/schedules',
    operationId: 'listSchedules',
    tag: 'schedules',
    summary: 'Every schedule',
    calls: 'schedules',
    shape: 'items',
    success: { status: 200, schema: 'ScheduleList', description: 'The schedules.' },
    errors: [],
  },
  {
    method: 'POST',
    path: '/schedules',
    operationId: 'createSchedule',
    tag: 'schedules',
    summary: 'Create a schedule',
    description:
      'Unchanged when it exists with the same spec; a different spec is a 409 unless `replace` is true.',
    calls: 'createSchedule',
    body: true,
    bodyFields: { spec: 'ScheduleSpec' },
    success: { status: 200, schema: 'Schedule', description: 'The schedule.' },
    errors: [409, 413, 422],
  },
  {
    method: 'GET',
    path: '/schedules/{name}',
    operationId: 'describeSchedule',
    tag: 'schedules',
    summary: "A schedule's spec, next fire times and last slots",
    calls: 'describeSchedule',
    success: { status: 200, schema: 'Schedule', description: 'The schedule.' },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/schedules/{name}/pause',
    operationId: 'pauseSchedule',
    tag: 'schedules',
    summary: 'Pause a schedule: no slot fires until it is resumed',
    calls: 'pauseSchedule',
    success: { status: 200, schema: 'Schedule', description: 'The schedule.' },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/schedules/{name}/resume',
    operationId: 'resumeSchedule',
    tag: 'schedules',
    summary: 'Resume a paused schedule (its catch-up policy says what happens to missed slots)',
    calls: 'resumeSchedule',
    success: { status: 200, schema: 'Schedule', description: 'The schedule.' },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/schedules/{name}/trigger',
    operationId: 'triggerSchedule',
    tag: 'schedules',
    summary: "Start the schedule's workflow now, outside its slots",
    calls: 'triggerSchedule',
    success: { status: 200, schema: 'TriggeredRun', description: 'The run it started.' },
    errors: [404, 409, 422],
  },
  {
    method: 'DELETE',
    path: '/schedules/{name}',
    operationId: 'deleteSchedule',
    tag: 'schedules',
    summary: 'Delete a schedule (the workflows it started go on)',
    calls: 'deleteSchedule',
    success: { status: 204, description: 'Deleted.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/queues',
    operationId: 'listQueues',
    tag: 'queues',
    summary: 'The workflow queues of the store',
    description:
      'Every queue declared on the serving engine or, by another engine, in the store (`defineQueue`, `createEngine({ queues })`), by name: its limits, running of its limit, how many wait, the rate used.',
    calls: 'queues',
    shape: 'items',
    success: { status: 200, schema: 'QueueList', description: 'The queues.' },
    errors: [],
  },
  {
    method: 'GET',
    path: '/queues/{name}',
    operationId: 'describeQueue',
    tag: 'queues',
    summary: "A queue: its limits, the workflows holding its slots, the next waiting, each key's counts",
    calls: 'describeQueue',
    success: { status: 200, schema: 'Queue', description: 'The queue.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/workflows/{workflowId}/queue',
    operationId: 'workflowQueuePosition',
    tag: 'queues',
    summary: 'Where a workflow stands in its queue',
    description:
      '`waiting` with its `position` (1 = admitted next), or `admitted` with its slot. 404 `NotQueuedError` when the workflow has no place in a queue: it was not started onto one, or it has ended (its description keeps the `queue` it went through); 404 `WorkflowNotFoundError` when there is no such workflow.',
    calls: 'queuePosition',
    success: { status: 200, schema: 'QueuePosition', description: 'Its place in the queue.' },
    errors: [404],
  },
  {
    method: 'GET',
    path: '/activity-limits',
    operationId: 'listActivityLimits',
    tag: 'queues',
    summary: 'The activity concurrency limits, and the attempts holding their slots',
    description:
      'The activity groups the serving engine declares (`createEngine({ activityLimits })`): limits, the attempts holding their slots across the fleet, running and waiting on the serving engine; then every other group with a slot held in the store now (`declared: false`): its holders only, since activity limits are declared in code and not written to the store. A group nobody holds a slot of now, declared only on other engines, is not listed.',
    calls: 'activityLimits',
    shape: 'items',
    success: { status: 200, schema: 'ActivityLimitList', description: 'The activity groups, by name.' },
    errors: [],
  },
];

/**
 * The methods of the workflows, schedules and queues domains the HTTP API does not serve, and why. A test checks
 * that every method of those domains is either routed or named here, so a new method is a decision.
 */
export const notRouted: Readonly<Record<string, string>> = {
  checkReplay:
    "the studio's check against the engine's own definitions; a service checks its code with GET …/history and replay() or `shuttle replay`",
  operationOutcome: "the studio's event detail; the timeline and the description carry what a service needs",
  purgeFinished:
    'a bulk deletion belongs to the operator (the studio, `shuttle workflow purge`), not to services',
  previewSchedule: "the studio's live cron preview",
};
