/**
 * The HTTP API's OpenAPI 3.1 document, generated from the route table (routes.ts) and the protocol's
 * declarations: a route's path, query and body parameters, which body fields are required and that no other
 * is accepted, come from the same rules the API checks requests with, so they cannot drift. The response
 * schemas below are written by hand from the engine's types; tests (http-api.test.ts) validate every answer
 * the API gives in a scenario that calls every operation against them, and the document against the
 * OpenAPI 3.1 schema.
 */
import { scheduleCatchUps, scheduleOverlaps, workflowStatuses } from '../../engine';
import { idReuseValues } from '../../engine/lifecycle';
import { declarations, type FieldRule } from '../../protocol';
import { routes, type QueryParam, type Route } from './routes';

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const time = { type: 'number', description: 'Epoch milliseconds.' } as const;
const nullableTime = { type: ['number', 'null'], description: 'Epoch milliseconds, or null.' } as const;
const anyJson = { description: 'Any JSON value.' } as const;
const status = { type: 'string', enum: [...workflowStatuses] };

const owner: Schema = {
  type: ['object', 'null'],
  description: 'The engine that holds the workflow now, under which epoch, until when.',
  required: ['engineId', 'epoch', 'claimedAt', 'expiresAt'],
  properties: { engineId: { type: 'string' }, epoch: { type: 'integer' }, claimedAt: time, expiresAt: time },
};

const serializedError: Schema = {
  type: 'object',
  required: ['name', 'message'],
  properties: {
    name: { type: 'string' },
    message: { type: 'string' },
    stack: { type: 'string' },
    details: { type: 'object' },
  },
};

/** The response and body schemas, by component name. */
export const schemas: Readonly<Record<string, Schema>> = {
  Error: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['name', 'message'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', description: 'The error class, e.g. `WorkflowNotFoundError`.' },
          message: { type: 'string', description: 'What happened, to what, and what to do.' },
          details: { type: 'object', description: 'Its fields, e.g. `workflowId`.' },
        },
      },
    },
  },
  StartOptions: {
    type: 'object',
    additionalProperties: false,
    properties: {
      id: { type: 'string', description: 'The workflow id (default: a random UUID); 1–256 characters.' },
      executionTimeoutMs: { type: 'number', description: 'Time it out this long after it started.' },
      startDelayMs: { type: 'number', description: 'Start it this long from now (pending until then).' },
      idReuse: {
        type: 'string',
        enum: [...idReuseValues],
        description: 'When the id belongs to a finished workflow: start its next run, or refuse (409).',
      },
      idempotencyKey: {
        type: 'string',
        description: "At most one start per key within the engine's window; 1–200 characters.",
      },
      attributes: {
        type: 'object',
        description:
          'Search attributes it starts with: names its definition declares, values of their types (a time: ISO 8601 or epoch ms). A bad one is 400 InvalidSearchAttributeError; nothing is written.',
        additionalProperties: { type: ['string', 'number', 'boolean'] },
      },
      queue: {
        type: 'string',
        description:
          "Start it onto this queue (declared on the engines with `defineQueue`; default: its definition's queue). It waits, pending, until the queue has room. An undeclared queue is 400 InvalidOptionsError.",
      },
      concurrencyKey: {
        type: 'string',
        description:
          "Counted with the starts of this key by the queue's `perKeyConcurrency`; 1–200 characters.",
      },
      priority: {
        type: 'integer',
        minimum: 1,
        maximum: 10,
        description: 'Its place in its queue: 1 (admitted first) to 10; default 5. Needs a queue.',
      },
      singleton: {
        type: 'object',
        description:
          "At most one workflow with this key waiting or running (in its queue, or of its type without one): a start while one is active answers 200 with that workflow and `started: false`, or with `ifActive: 'refuse'` 409 SingletonConflictError.",
        required: ['key'],
        additionalProperties: false,
        properties: {
          key: { type: 'string', description: '1–200 characters.' },
          ifActive: { type: 'string', enum: ['join', 'refuse'], description: "Default 'join'." },
        },
      },
      debounce: {
        type: 'object',
        description:
          'Start it `windowMs` after the last start with this key: a start while one waits gives it its input and puts it off again (200, `started: false`, its id), never past `maxWaitMs` after the first. Not with `singleton` or `startDelayMs`.',
        required: ['key', 'windowMs'],
        additionalProperties: false,
        properties: {
          key: { type: 'string', description: '1–200 characters.' },
          windowMs: { type: 'integer', minimum: 1 },
          maxWaitMs: { type: 'integer', minimum: 1, description: 'At least `windowMs`.' },
        },
      },
    },
  },
  QueueMembership: {
    type: 'object',
    description:
      'The queue a workflow was started onto, kept on its record: its key, priority, when it was enqueued and, once admitted, when and which slot.',
    required: ['name', 'priority', 'enqueuedAt', 'order'],
    properties: {
      name: { type: 'string' },
      key: { type: 'string', description: 'Its `concurrencyKey`.' },
      priority: { type: 'integer', minimum: 1, maximum: 10 },
      enqueuedAt: time,
      order: { type: 'number', description: 'Its place in the admission order.' },
      notBefore: { ...time, description: 'Not admitted before this time (a delayed or debounced start).' },
      admittedAt: time,
      slot: { type: 'integer' },
      keySlot: { type: 'integer' },
    },
  },
  QueuePosition: {
    type: 'object',
    description: 'Where a workflow stands in its queue.',
    required: ['queue', 'status', 'priority', 'enqueuedAt'],
    additionalProperties: false,
    properties: {
      queue: { type: 'string' },
      status: { type: 'string', enum: ['waiting', 'admitted'] },
      position: {
        type: 'integer',
        minimum: 1,
        description: 'Waiting: 1 = admitted next (counted up to 10,000).',
      },
      key: { type: 'string' },
      priority: { type: 'integer', minimum: 1, maximum: 10 },
      enqueuedAt: time,
      notBefore: time,
      admittedAt: time,
      slot: { type: 'integer', description: 'Admitted: the slot it holds until it ends.' },
    },
  },
  Queue: {
    type: 'object',
    description: 'A workflow queue: its limits as declared, and its state now.',
    required: [
      'name',
      'concurrency',
      'perKeyConcurrency',
      'perEngineConcurrency',
      'rateLimit',
      'priorityStepMs',
      'running',
      'slots',
      'waiting',
      'waitingCapped',
      'next',
      'oldestEnqueuedAt',
      'rate',
      'keys',
      'drivenHere',
    ],
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      concurrency: { type: ['integer', 'null'], description: 'At most this many admitted and not finished.' },
      perKeyConcurrency: { type: ['integer', 'null'], description: 'The same, per concurrency key.' },
      perEngineConcurrency: {
        type: ['integer', 'null'],
        description: 'At most this many driven by one engine.',
      },
      rateLimit: {
        type: ['object', 'null'],
        required: ['limit', 'periodMs'],
        additionalProperties: false,
        properties: { limit: { type: 'integer' }, periodMs: { type: 'integer' } },
      },
      priorityStepMs: { type: 'integer', description: 'How much waiting one priority level is worth.' },
      running: {
        type: ['integer', 'null'],
        description: 'Admitted and not finished (its held slots); null without a `concurrency` limit.',
      },
      slots: {
        type: 'array',
        description: 'The workflows holding its slots.',
        items: {
          type: 'object',
          required: ['slot', 'workflowId', 'since', 'admittedBy'],
          additionalProperties: false,
          properties: {
            slot: { type: 'integer' },
            workflowId: { type: 'string' },
            since: time,
            admittedBy: { type: 'string', description: 'The engine id that admitted it.' },
          },
        },
      },
      waiting: { type: 'integer', description: 'Waiting to be admitted (counted up to 10,000).' },
      waitingCapped: { type: 'boolean', description: 'More than `waiting` wait.' },
      next: {
        type: 'array',
        description: 'The first waiting workflows (up to 20), in admission order.',
        items: {
          type: 'object',
          required: ['workflowId', 'type'],
          additionalProperties: false,
          properties: {
            workflowId: { type: 'string' },
            type: { type: 'string' },
            key: { type: 'string' },
            notBefore: time,
          },
        },
      },
      oldestEnqueuedAt: {
        ...nullableTime,
        description: 'When the workflow first in line was enqueued; null when none waits.',
      },
      rate: {
        type: ['object', 'null'],
        description: 'A rate-limited queue: admissions in the current window, and when one is next free.',
        required: ['usedInWindow', 'nextFreeAt'],
        additionalProperties: false,
        properties: { usedInWindow: { type: 'integer' }, nextFreeAt: nullableTime },
      },
      keys: {
        type: 'array',
        description: 'Per concurrency key (up to 50, the busiest first): running and waiting.',
        items: {
          type: 'object',
          required: ['key', 'running', 'waiting'],
          additionalProperties: false,
          properties: { key: { type: 'string' }, running: { type: 'integer' }, waiting: { type: 'integer' } },
        },
      },
      drivenHere: { type: 'integer', description: 'How many of its workflows the serving engine drives.' },
    },
  },
  QueueList: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: ref('Queue') } },
  },
  ActivityLimit: {
    type: 'object',
    description:
      "An activity group (`createEngine({ activityLimits })`): declared on the serving engine (its limits, the fleet's slot holders, running and waiting there), or seen only in the store as slots other engines hold now (`declared: false`: holders only; activity limits are declared in code, not stored).",
    required: ['name', 'concurrency', 'perEngine', 'running', 'runningHere', 'waitingHere', 'declared'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', description: 'The group: an activity name, or its `limit` option.' },
      concurrency: {
        type: ['integer', 'null'],
        description:
          'Attempts at once across the fleet; null when only `perEngine` is set, or not declared here.',
      },
      perEngine: {
        type: ['integer', 'null'],
        description: 'Attempts at once on one engine; null when not set, or not declared here.',
      },
      running: {
        type: 'array',
        description:
          'The attempts holding its slots, judged live by their engines’ sessions (across the fleet when slots are kept in the store, the serving engine’s otherwise).',
        items: {
          type: 'object',
          required: ['engineId', 'workflowId', 'position', 'member', 'attempt', 'since'],
          additionalProperties: false,
          properties: {
            engineId: { type: 'string', description: 'The engine running the attempt.' },
            workflowId: { type: 'string' },
            position: { type: 'integer', description: 'The activity’s position in the workflow’s history.' },
            member: { type: 'integer', description: 'Its member in an `all`/`race` (0 otherwise).' },
            attempt: { type: 'integer' },
            since: { ...time, description: 'When it took the slot, epoch milliseconds.' },
          },
        },
      },
      runningHere: { type: 'integer', description: 'Attempts holding a slot on the serving engine.' },
      waitingHere: { type: 'integer', description: 'Attempts waiting for a slot on the serving engine.' },
      declared: { type: 'boolean', description: 'The serving engine declares the group.' },
    },
  },
  ActivityLimitList: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: ref('ActivityLimit') } },
  },
  StartedRun: {
    type: 'object',
    required: ['workflowId', 'run', 'started'],
    additionalProperties: false,
    properties: { workflowId: { type: 'string' }, run: { type: 'integer' }, started: { type: 'boolean' } },
  },
  WorkflowSummary: {
    type: 'object',
    required: ['workflowId', 'workflowType', 'version', 'run', 'status', 'createdAt', 'updatedAt', 'owner'],
    properties: {
      workflowId: { type: 'string' },
      workflowType: { type: 'string' },
      version: { type: 'integer' },
      run: { type: 'integer' },
      status,
      createdAt: time,
      startedAt: nullableTime,
      endedAt: nullableTime,
      updatedAt: time,
      parentId: { type: 'string' },
      owner,
      epoch: { type: ['integer', 'null'] },
      waitingOn: { type: ['string', 'null'], description: 'What it waits on, in words.' },
      error: { type: 'string', description: 'How it failed, in one line.' },
      attributes: ref('SearchAttributes'),
    },
  },
  SearchAttributes: {
    type: 'object',
    description:
      "Search attributes (`ctx.setAttributes`): name → its declared type and value (a `time`'s value is epoch ms).",
    additionalProperties: {
      type: 'object',
      required: ['type', 'value'],
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: ['string', 'number', 'boolean', 'time'] },
        value: { type: ['string', 'number', 'boolean'] },
      },
    },
  },
  ListPage: {
    type: 'object',
    required: ['items', 'nextCursor'],
    additionalProperties: false,
    properties: {
      items: { type: 'array', items: ref('WorkflowSummary') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' },
    },
  },
  WorkflowDescription: {
    type: 'object',
    required: [
      'workflowId',
      'workflowType',
      'version',
      'run',
      'status',
      'createdAt',
      'updatedAt',
      'owner',
      'pending',
      'position',
      'cancelRequested',
      'bufferedSignals',
    ],
    properties: {
      workflowId: { type: 'string' },
      workflowType: { type: 'string' },
      version: { type: 'integer' },
      run: { type: 'integer' },
      status,
      input: anyJson,
      result: anyJson,
      error: serializedError,
      reason: { type: 'string' },
      createdAt: time,
      startAt: nullableTime,
      startedAt: nullableTime,
      endedAt: nullableTime,
      updatedAt: time,
      parentId: { type: 'string' },
      attributes: ref('SearchAttributes'),
      queue: ref('QueueMembership'),
      startKey: {
        type: 'object',
        description: 'The singleton or debounce key it was started with (freed when it ends).',
        required: ['scope', 'kind', 'key'],
        properties: {
          scope: { type: 'string' },
          kind: { type: 'string', enum: ['singleton', 'debounce'] },
          key: { type: 'string' },
        },
      },
      owner,
      epoch: { type: ['integer', 'null'] },
      pending: {
        type: ['object', 'null'],
        description: 'What it waits on; `leaves[i].completionToken` completes an external activity.',
        required: ['position', 'kind', 'name', 'summary', 'since', 'leaves'],
        properties: {
          position: { type: 'integer' },
          kind: { type: 'string' },
          name: { type: 'string' },
          summary: { type: 'string' },
          since: time,
          leaves: {
            type: 'array',
            items: {
              type: 'object',
              required: ['kind', 'name', 'done'],
              properties: {
                kind: { type: 'string' },
                name: { type: 'string' },
                done: { type: 'boolean' },
                attempt: { type: 'integer' },
                completionToken: { type: 'string' },
                heartbeat: {
                  type: 'object',
                  description:
                    "An activity's last recorded heartbeat: which attempt, its details, when and from which engine.",
                  required: ['attempt', 'at', 'engineId'],
                  properties: {
                    attempt: { type: 'integer' },
                    details: anyJson,
                    at: time,
                    engineId: { type: 'string' },
                  },
                },
              },
            },
          },
        },
      },
      position: { type: 'integer', description: 'Operations resolved so far.' },
      state: { type: 'object' },
      cancelRequested: { type: 'boolean' },
      historyLength: { type: 'integer' },
      timelineLength: { type: 'integer' },
      bufferedSignals: {
        type: 'array',
        items: {
          type: 'object',
          required: ['seq', 'name', 'sentAt', 'sentBy'],
          properties: {
            seq: { type: 'integer' },
            name: { type: 'string' },
            payload: anyJson,
            sentAt: time,
            sentBy: { type: 'string' },
          },
        },
      },
      bufferedSignalsMore: { type: 'boolean' },
      forkedFrom: ref('ForkedFrom'),
      continuedFrom: {
        type: 'integer',
        description: 'The run before it, which called `ctx.continueAsNew` and started this run in its place.',
      },
      scheduledBy: {
        type: 'object',
        required: ['schedule', 'slot'],
        properties: { schedule: { type: 'string' }, slot: time, trigger: { type: 'boolean' } },
      },
    },
  },
  ForkedFrom: {
    type: 'object',
    description: 'The run a fork copied, and the operation it ran again from.',
    required: ['id', 'run', 'position'],
    additionalProperties: false,
    properties: { id: { type: 'string' }, run: { type: 'integer' }, position: { type: 'integer' } },
  },
  RecordedHistory: {
    type: 'object',
    description: "A run's recorded history (format `shuttle-history/1`), as replay testing takes it.",
    required: [
      'format',
      'workflowId',
      'run',
      'workflowType',
      'version',
      'status',
      'position',
      'frontier',
      'entries',
    ],
    additionalProperties: false,
    properties: {
      format: { type: 'string', const: 'shuttle-history/1' },
      workflowId: { type: 'string' },
      run: { type: 'integer' },
      workflowType: { type: 'string' },
      version: { type: 'integer' },
      status,
      input: anyJson,
      position: { type: 'integer', description: 'Operations it resolved.' },
      frontier: { type: ['object', 'null'], description: 'What it waits on at `position`, or null.' },
      entries: {
        type: 'array',
        description: 'Its history entries in order: outcomes of operations (`t: "op"`) and applied updates.',
        items: {
          type: 'object',
          required: ['t', 'pos'],
          properties: { t: { type: 'string', enum: ['op', 'update'] }, pos: { type: 'integer' } },
        },
      },
    },
  },
  ForkedRun: {
    type: 'object',
    required: ['workflowId', 'run'],
    additionalProperties: false,
    properties: { workflowId: { type: 'string' }, run: { type: 'integer' } },
  },
  RunList: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: {
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['run', 'workflowType', 'version', 'status', 'createdAt', 'latest'],
          properties: {
            run: { type: 'integer' },
            workflowType: { type: 'string' },
            version: { type: 'integer' },
            status,
            createdAt: time,
            startedAt: nullableTime,
            endedAt: nullableTime,
            latest: { type: 'boolean' },
          },
        },
      },
    },
  },
  Timeline: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: {
      items: {
        type: 'array',
        items: {
          type: 'object',
          required: ['seq', 'at', 'engineId', 'epoch', 'kind', 'detail'],
          additionalProperties: false,
          properties: {
            seq: { type: 'integer' },
            at: time,
            engineId: { type: 'string', description: 'The engine that wrote it.' },
            epoch: { type: 'integer', description: 'The epoch it was written under.' },
            kind: { type: 'string', description: 'e.g. `started`, `activity-completed`, `claimed`.' },
            detail: { type: 'object' },
          },
        },
      },
    },
  },
  WorkflowOutcome: {
    type: 'object',
    required: ['workflowId', 'run', 'status', 'finished'],
    additionalProperties: false,
    properties: {
      workflowId: { type: 'string' },
      run: { type: 'integer' },
      status,
      finished: { type: 'boolean', description: 'False: it had not finished when the wait ended.' },
      result: { description: 'The result of a completed run (absent otherwise).' },
      error: { ...serializedError, description: 'How a failed run failed.' },
      reason: { type: 'string', description: 'Why it was cancelled or terminated.' },
    },
  },
  Answer: {
    type: 'object',
    required: ['result'],
    additionalProperties: false,
    properties: { result: { description: 'The value the handler returned (null for none).' } },
  },
  PurgeReport: {
    type: 'object',
    required: ['workflowId', 'runs', 'keysDeleted'],
    additionalProperties: false,
    properties: {
      workflowId: { type: 'string' },
      runs: { type: 'array', items: { type: 'integer' } },
      keysDeleted: { type: 'integer' },
    },
  },
  ActivityError: {
    type: 'object',
    required: ['message'],
    additionalProperties: false,
    properties: { name: { type: 'string' }, message: { type: 'string' } },
  },
  ScheduleSpec: {
    type: 'object',
    required: ['cron', 'workflow'],
    additionalProperties: false,
    properties: {
      cron: {
        type: 'string',
        description: 'Five fields (minute hour day month weekday), or six with seconds.',
      },
      timezone: { type: 'string', description: 'IANA time zone the cron is read in (default UTC).' },
      workflow: { type: 'string', description: 'The workflow type it starts.' },
      input: anyJson,
      overlap: { type: 'string', enum: [...scheduleOverlaps] },
      catchUp: { type: 'string', enum: [...scheduleCatchUps] },
      startOptions: {
        type: 'object',
        additionalProperties: false,
        properties: { executionTimeoutMs: { type: 'number' }, startDelayMs: { type: 'number' } },
      },
    },
  },
  Schedule: {
    type: 'object',
    required: ['name', 'spec', 'paused', 'nextFireAt', 'lastSlots', 'buffered', 'running', 'createdAt'],
    properties: {
      name: { type: 'string' },
      spec: ref('ScheduleSpec'),
      paused: { type: 'boolean' },
      pausedAt: time,
      nextFireAt: { type: 'array', items: time },
      lastSlots: {
        type: 'array',
        items: {
          type: 'object',
          required: ['slot', 'outcome'],
          properties: {
            slot: time,
            outcome: { type: 'string' },
            workflowId: { type: 'string' },
          },
        },
      },
      buffered: nullableTime,
      running: { type: 'array', items: { type: 'string' } },
      createdAt: time,
      updatedAt: time,
    },
  },
  ScheduleList: {
    type: 'object',
    required: ['items'],
    additionalProperties: false,
    properties: { items: { type: 'array', items: ref('Schedule') } },
  },
  TriggeredRun: {
    type: 'object',
    required: ['workflowId', 'run'],
    additionalProperties: false,
    properties: { workflowId: { type: 'string' }, run: { type: 'integer' } },
  },
};

/** The JSON Schema of a body field under a protocol rule (a component when the route names one). */
function fieldSchema(rule: FieldRule, component: string | undefined): Schema {
  if (component) return ref(component);
  switch (rule.replace('?', '')) {
    case 'string':
      return { type: 'string' };
    case 'integer':
      return { type: 'integer' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'object':
      return { type: 'object' };
    default:
      return { ...anyJson };
  }
}

/** The path's `{name}` segments. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
}

/** The params of a route's method its JSON body gives: those the path and the query do not. */
export function bodyParams(route: Route): string[] {
  if (!route.body) return [];
  const taken = new Set([
    ...pathParams(route.path),
    ...Object.values(route.query ?? {}).map((query) => query.to?.split('.')[0]),
  ]);
  return Object.keys(declarations[route.calls].params).filter((name) => !taken.has(name));
}

function querySchema(query: QueryParam): Schema {
  const base: Schema =
    query.type === 'integer'
      ? {
          type: 'integer',
          ...(query.minimum !== undefined ? { minimum: query.minimum } : {}),
          ...(query.maximum !== undefined ? { maximum: query.maximum } : {}),
        }
      : query.type === 'boolean'
        ? { type: 'boolean' }
        : query.type === 'time'
          ? {
              oneOf: [
                { type: 'integer', minimum: 0 },
                { type: 'string', format: 'date-time' },
              ],
            }
          : query.type === 'repeated'
            ? { type: 'array', items: { type: 'string' } }
            : { type: 'string' };
  return base;
}

const errorStatuses: Readonly<Record<number, string>> = {
  400: 'The request is wrong (a field, a value, the JSON): nothing was written.',
  401: 'No valid bearer token.',
  404: 'No such workflow, run, schedule, queue or activity (or, for a queue position, the workflow is in no queue).',
  409: 'Refused in its current state (exists, finished, not finished, an attempt no longer current).',
  413: 'The body or a payload is larger than the engine accepts.',
  415: 'The body is not sent as application/json.',
  422: "The workflow's code refused (an update's validator, a failing query) or its type is not registered here.",
  500: 'The engine or its store failed.',
  503: 'The engine is stopping or not running yet: try again.',
  504: 'Gave up waiting (an update): it may still happen.',
};

function operation(route: Route): Schema {
  const parameters = [
    ...pathParams(route.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...Object.entries(route.query ?? {}).map(([name, query]) => ({
      name,
      in: 'query',
      required: false,
      description: query.description + (query.values ? ` One of: ${query.values.join(', ')}.` : ''),
      schema: querySchema(query),
    })),
    ...(route.calls === 'start'
      ? [
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description: 'The same as `options.idempotencyKey`.',
            schema: { type: 'string' },
          },
        ]
      : []),
  ];
  const rules: Readonly<Record<string, FieldRule>> = declarations[route.calls].params;
  const fields = bodyParams(route);
  const requestBody = route.body
    ? {
        required: fields.some((name) => !rules[name]!.endsWith('?')),
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: fields.filter((name) => !rules[name]!.endsWith('?')),
              properties: Object.fromEntries(
                fields.map((name) => [name, fieldSchema(rules[name]!, route.bodyFields?.[name])]),
              ),
            },
          },
        },
      }
    : undefined;
  const success = route.success.schema
    ? {
        description: route.success.description,
        content: { 'application/json': { schema: ref(route.success.schema) } },
      }
    : { description: route.success.description };
  const responses: Record<string, unknown> = { [String(route.success.status)]: success };
  if (route.calls === 'start') responses['200'] = success;
  const codes = new Set([400, 401, ...route.errors, ...(route.body ? [413, 415] : []), 500, 503]);
  for (const code of [...codes].sort((a, b) => a - b))
    responses[String(code)] = { $ref: `#/components/responses/E${code}` };
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of the API served at `basePath`. */
export function openApiDocument(basePath: string, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  paths['/openapi.json'] = {
    get: {
      operationId: 'openApiDocument',
      tags: ['meta'],
      summary: 'This document (no token needed)',
      security: [],
      responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': {} } } },
    },
  };
  const codes = [...new Set([400, 401, 413, 415, 500, 503, ...routes.flatMap((route) => route.errors)])].sort(
    (a, b) => a - b,
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shuttle HTTP API',
      version,
      description:
        'Start, message, steer and read the workflows, schedules and queues of a Shuttle store from any language. Every request but this document needs `Authorization: Bearer <token>`. Errors are `{ "error": { "name", "message", "details" } }`; the name is the engine\'s error class.',
    },
    servers: [{ url: basePath || '/' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'workflows', description: 'Start, message, steer and read workflows.' },
      { name: 'activities', description: 'Complete activities that run outside the engine.' },
      { name: 'schedules', description: 'Cron schedules.' },
      {
        name: 'queues',
        description:
          'Workflow queues: their limits, slot holders and who waits; and activity concurrency limits with the attempts holding their slots (read-only).',
      },
      { name: 'meta', description: 'The API itself.' },
    ],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
      responses: Object.fromEntries(
        codes.map((code) => [
          `E${code}`,
          {
            description: errorStatuses[code] ?? 'An error.',
            content: { 'application/json': { schema: ref('Error') } },
          },
        ]),
      ),
    },
  };
}
