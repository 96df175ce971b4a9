/**
 * `createEngine` options and their validation. Invalid options fail construction with an
 * `InvalidOptionsError` that quotes the offending values; nothing is read or written first.
 */
import type { Storage } from '../storage/types';
import { activityGroupPattern } from './activity-limits';
import { CodecStorage, checkPayloadCodec, type PayloadCodec } from './payload-codec';
import { systemClock, systemRandom, type Clock } from './clock';
import { isPlausibleTime, plausibleTimes } from './ownership/holder';
import { InvalidOptionsError, type StackMapper } from './errors';
import { defaultMaxPayloadBytes } from './vocabulary';
import type { EngineEvent, EngineWarning } from './events';
import type { EngineLiveness } from './ownership/liveness';
import type { EngineTracer } from './tracing';
import {
  resolveQueues,
  type QueueDeclaration,
  type QueueDefinition,
  type QueueOptions,
} from './queues/queue-options';
import type { ActivityInterceptor, AnyWorkflowDefinition, WorkflowInterceptor } from './workflow';

export type OwnershipMode = 'none' | 'lease' | 'workflow-lease';
export const ownershipModes: readonly OwnershipMode[] = ['none', 'lease', 'workflow-lease'];

export type EngineOptions = {
  /** Where everything is stored. Several engines may share one store. Required. */
  storage: Storage;
  /** Definitions registered at construction; more can be added with `engine.register`. */
  workflows?: readonly AnyWorkflowDefinition[];
  /**
   * Who may run a workflow when several engines share the store (see docs/ownership.md):
   * `'none'` (default; one engine per store), `'lease'` (one engine at a time holds a store-wide lease),
   * `'workflow-lease'` (every workflow has at most one owner, fenced by its epoch).
   */
  ownership?: OwnershipMode;
  /**
   * `'automatic'` (default): renewal, reclaim, polls and timers run on the clock's timers.
   * `'manual'`: nothing runs on timers; the host calls `engine.runMaintenance()` more often than the renew
   * interval. Not allowed with `'lease'`, which needs its own renewal timer.
   */
  backgroundTasks?: 'automatic' | 'manual';
  /** Time source. Default: the platform clock. Tests inject `SimulatedClock`. */
  clock?: Clock;
  /** Random source in [0, 1) used for ids and `ctx.random()`. Default: `Math.random`. */
  random?: () => number;
  /** This engine's id. Default: a random UUID. */
  engineId?: string;
  /** A liveness oracle (Web Locks in the browser) that makes takeover after a crash immediate. */
  liveness?: EngineLiveness;
  /** Run `recoverAll()` during `createEngine`. Default true. */
  recover?: boolean;
  /**
   * `false` makes an observer engine (the studio's viewer mode): it reads, signals, queries, updates,
   * cancels, terminates and even starts workflows, but never claims or runs one; other engines do.
   * Default true.
   */
  claimWorkflows?: boolean;
  limits?: {
    /** Largest input, result, signal, update argument or state, in bytes of JSON. Default 256 KiB. */
    maxPayloadBytes?: number;
  };
  /**
   * Receives every engine event from construction on, including those of the recovery that runs inside
   * `createEngine` (before `subscribe` can be called). Same events as `engine.subscribe`.
   */
  onEvent?: (event: EngineEvent) => void;
  /** Receives warnings (claim lost, wake discarded, corrupt record). Default: console.warn. */
  onWarning?: (warning: EngineWarning) => void;
  /** workflow-lease: how long a claim lives without renewal, in ms. Default 30,000. */
  workflowClaimTtlMs?: number;
  /** workflow-lease: how often claims are renewed (and polls run), in ms. Default 5,000. */
  workflowClaimRenewIntervalMs?: number;
  /** lease: how long the store-wide lease lives without renewal, in ms. Default 30,000. */
  leaseTtlMs?: number;
  /** lease: how often the lease is renewed, in ms. Default 5,000. */
  leaseRenewIntervalMs?: number;
  /** lease: how long `createEngine` waits for the lease before failing, in ms. Default 60,000. */
  leaseWaitTimeoutMs?: number;
  /** Most candidates the reclaim scan examines per pass (it resumes where it stopped). Default 200. */
  reclaimBatchSize?: number;
  /** How long an uncollected update response is kept, in ms. Default 600,000. */
  updateResponseRetentionMs?: number;
  /**
   * How long a finished run is kept before the retention sweep purges it, in ms after it ended, for types
   * whose definition sets no `retentionMs` of its own. Default: kept forever.
   */
  retentionMs?: number;
  /** How long a start's `idempotencyKey` returns the run it started, in ms. Default 86,400,000 (24 h). */
  idempotencyWindowMs?: number;
  /**
   * Rewrites the stack of a failure of workflow code before it is recorded (an activity attempt's error, an
   * error a workflow body threw, an update's rejection): e.g. maps frames of compiled code to their
   * source, and marks the engine's own frames. Whatever it returns is then bounded to 30 frames and 4,096
   * characters. Called synchronously; a mapper that throws leaves the stack as it was. Default: none (the
   * stack is only bounded).
   */
  mapStack?: (stack: string) => string;
  /**
   * Middleware around work the engine runs for workflows. `activities`: around every activity attempt,
   * outermost first (`ActivityInterceptor`): for timing, logging, tracing, or mocks in tests. `workflows`:
   * around what workflows receive — their execution, signals, updates, queries (`WorkflowInterceptor`).
   */
  interceptors?: EngineInterceptors;
  /**
   * Spans for workflow starts, loads (an engine taking a run up), claims and takeovers, activity attempts,
   * signals, updates and endings, parented on the trace context each workflow stores when it starts, so a
   * trace continues across engines (docs/engine.md, "Observability"). `shuttle/opentelemetry`'s
   * `openTelemetryTracer()` adapts OpenTelemetry. Default: none.
   */
  tracer?: EngineTracer;
  /**
   * Transforms every payload (inputs, results, activity results, signal payloads, update arguments and
   * results, heartbeat details, workflow state, schedule inputs) on its way into the store and back, e.g. to
   * encrypt it (`PayloadCodec`; docs/engine.md, "Payload codec"). Ids, statuses, times, timelines, search
   * attributes and error messages stay readable. Every engine on a store written with a codec needs it: one
   * without is refused (`PayloadCodecRequiredError`). Default: none.
   */
  codec?: PayloadCodec;
  /**
   * Workflow queues, name → limits (`QueueOptions`): a workflow started onto a queue (`start(…, { queue })`,
   * or its definition's `queue`) waits, durably, until the queue has room — its `concurrency` across every
   * engine sharing the store, `perKeyConcurrency` per `concurrencyKey`, `perEngineConcurrency`, and a
   * `rateLimit` — and is admitted by priority, FIFO within one (docs/engine.md, "Queues and flow control").
   * Declare the same queues on every engine that shares the store. Default: none.
   */
  queues?: Record<string, QueueOptions> | readonly QueueDefinition[];
  /**
   * Concurrency limits of activities, by group (docs/engine.md, "Activity concurrency limits"): at most
   * `concurrency` attempts of the group hold a slot at once across every engine sharing the store, and at
   * most `perEngine` on this engine. An activity counts against its `ActivityOptions.limit` group, by default
   * its own name; an activity whose group is not declared here is not limited. Group names are 1–100
   * characters of `A-Z a-z 0-9 _ . : -`. Every engine of a fleet should declare the same limits. Default:
   * none.
   *
   * @example
   * activityLimits: { 'charge-card': { concurrency: 5, perEngine: 2 } }
   */
  activityLimits?: Record<string, ActivityLimit>;
};

/** One group's limit (`EngineOptions.activityLimits`); at least one of the two, each a positive integer. */
export type ActivityLimit = {
  /** Attempts of the group running at once across every engine sharing the store. */
  concurrency?: number;
  /** Attempts of the group running at once on this engine. */
  perEngine?: number;
};

export type EngineInterceptors = {
  activities?: readonly ActivityInterceptor[];
  workflows?: readonly WorkflowInterceptor[];
};

const workflowInterceptorMethods = ['execute', 'signal', 'update', 'query'] as const;

export type ResolvedOptions = {
  storage: Storage;
  workflows: readonly AnyWorkflowDefinition[];
  ownership: OwnershipMode;
  backgroundTasks: 'automatic' | 'manual';
  clock: Clock;
  random: () => number;
  engineId: string | undefined;
  liveness: EngineLiveness | undefined;
  recover: boolean;
  claimWorkflows: boolean;
  maxPayloadBytes: number;
  onWarning: (warning: EngineWarning) => void;
  onEvent: ((event: EngineEvent) => void) | undefined;
  /** Claim (workflow-lease) or lease (lease) TTL; for 'none', the poll interval basis. */
  ttlMs: number;
  renewIntervalMs: number;
  leaseWaitTimeoutMs: number;
  reclaimBatchSize: number;
  updateResponseRetentionMs: number;
  retentionMs: number | undefined;
  idempotencyWindowMs: number;
  mapStack: StackMapper | undefined;
  activityInterceptors: readonly ActivityInterceptor[];
  workflowInterceptors: readonly WorkflowInterceptor[];
  tracer: EngineTracer | undefined;
  /** The payload codec; when set, `storage` is already wrapped in `CodecStorage`. */
  codec: PayloadCodec | undefined;
  /** The declared queues (queues/queue-options.ts). */
  queues: Map<string, QueueDeclaration>;
  /** `activityLimits`, validated (an empty map when none). */
  activityLimits: ReadonlyMap<string, ActivityLimit>;
};

const defaultWarning = (warning: EngineWarning) =>
  console.warn(`[shuttle] ${warning.name}: ${warning.message}`);

function quote(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new InvalidOptionsError(`${name} must be a positive number of milliseconds; got ${quote(value)}.`);
  return value;
}

function ttlAndRenew(ttlName: string, ttl: number, renewName: string, renew: number): void {
  if (renew >= ttl)
    throw new InvalidOptionsError(`${renewName} (${renew}) must be less than ${ttlName} (${ttl}).`);
  if (ttl < 3 * renew)
    throw new InvalidOptionsError(
      `${ttlName} (${ttl}) must be at least 3 × ${renewName} (${renew}) = ${3 * renew}, so one missed renewal does not lose the claim.`,
    );
}

/**
 * Claims, sessions and leases store times and read a time outside 2000–2200 as corrupt (fail closed), so an
 * injected clock outside that range would make every claim look expired to every engine. Such a clock is
 * refused at start rather than half-working: a test clock starts at a real date (SimulatedClock's default is
 * 2026-01-01).
 */
function assertPlausibleClock(clock: Clock): void {
  if (typeof clock?.now !== 'function')
    throw new InvalidOptionsError('options.clock must have now(), setTimeout() and clearTimeout().');
  const now = clock.now();
  if (!isPlausibleTime(now))
    throw new InvalidOptionsError(
      `options.clock.now() returned ${quote(now)}; Shuttle needs epoch milliseconds between ${new Date(plausibleTimes.min).toISOString()} and ${new Date(plausibleTimes.max).toISOString()} (ownership records outside that range read as corrupt). Start a test clock at a real date, e.g. new SimulatedClock(Date.UTC(2026, 0, 1)).`,
    );
}

function resolveActivityLimits(limits: unknown): ReadonlyMap<string, ActivityLimit> {
  const resolved = new Map<string, ActivityLimit>();
  if (limits === undefined) return resolved;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits))
    throw new InvalidOptionsError(
      `options.activityLimits must be an object of groups, like { 'charge-card': { concurrency: 5 } }; got ${quote(limits)}.`,
    );
  for (const [name, limit] of Object.entries(limits)) {
    if (!activityGroupPattern.test(name))
      throw new InvalidOptionsError(
        `options.activityLimits: group name ${quote(name)} must be 1–100 characters of A-Z a-z 0-9 _ . : -.`,
      );
    if (typeof limit !== 'object' || limit === null || Array.isArray(limit))
      throw new InvalidOptionsError(
        `options.activityLimits['${name}'] must be an object like { concurrency: 5, perEngine: 2 }; got ${quote(limit)}.`,
      );
    for (const key of Object.keys(limit))
      if (key !== 'concurrency' && key !== 'perEngine')
        throw new InvalidOptionsError(
          `options.activityLimits['${name}'] has '${key}'; a limit has concurrency (across the fleet) and perEngine (on this engine).`,
        );
    const { concurrency, perEngine } = limit as ActivityLimit;
    for (const [field, value] of [
      ['concurrency', concurrency],
      ['perEngine', perEngine],
    ] as const)
      if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1))
        throw new InvalidOptionsError(
          `options.activityLimits['${name}'].${field} must be a positive integer; got ${quote(value)}.`,
        );
    if (concurrency === undefined && perEngine === undefined)
      throw new InvalidOptionsError(
        `options.activityLimits['${name}'] sets no limit; give concurrency (across the fleet), perEngine (on this engine), or both.`,
      );
    resolved.set(name, {
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(perEngine === undefined ? {} : { perEngine }),
    });
  }
  return resolved;
}

export function resolveOptions(options: EngineOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionsError('createEngine needs an options object with at least { storage }.');
  const storage = options.storage;
  if (!storage || typeof storage.get !== 'function' || typeof storage.conditionalBatch !== 'function')
    throw new InvalidOptionsError(
      'options.storage must be a Storage (e.g. new MemoryStorage() or new IndexedDbStorage()).',
    );
  const ownership = options.ownership ?? 'none';
  if (!ownershipModes.includes(ownership))
    throw new InvalidOptionsError(
      `Unknown ownership mode ${quote(ownership)}; use one of ${ownershipModes.map((m) => `'${m}'`).join(', ')}.`,
    );
  const backgroundTasks = options.backgroundTasks ?? 'automatic';
  if (backgroundTasks !== 'automatic' && backgroundTasks !== 'manual')
    throw new InvalidOptionsError(
      `backgroundTasks must be 'automatic' or 'manual'; got ${quote(backgroundTasks)}.`,
    );
  if (ownership === 'lease' && backgroundTasks === 'manual')
    throw new InvalidOptionsError(
      "ownership 'lease' cannot run with backgroundTasks 'manual': the store-wide lease needs its own renewal timer. Use 'automatic', or 'workflow-lease'.",
    );
  if (
    options.engineId !== undefined &&
    (typeof options.engineId !== 'string' || options.engineId.length === 0 || options.engineId.length > 200)
  )
    throw new InvalidOptionsError(
      `engineId must be a non-empty string of at most 200 characters; got ${quote(options.engineId)}.`,
    );
  if (options.workflows !== undefined && !Array.isArray(options.workflows))
    throw new InvalidOptionsError(
      'options.workflows must be an array of definitions created with defineWorkflow.',
    );

  let ttlMs = 30_000;
  let renewIntervalMs = 5_000;
  let leaseWaitTimeoutMs = 60_000;
  if (ownership === 'workflow-lease') {
    ttlMs = positive('workflowClaimTtlMs', options.workflowClaimTtlMs, 30_000);
    renewIntervalMs = positive('workflowClaimRenewIntervalMs', options.workflowClaimRenewIntervalMs, 5_000);
    ttlAndRenew('workflowClaimTtlMs', ttlMs, 'workflowClaimRenewIntervalMs', renewIntervalMs);
  } else if (ownership === 'lease') {
    ttlMs = positive('leaseTtlMs', options.leaseTtlMs, 30_000);
    renewIntervalMs = positive('leaseRenewIntervalMs', options.leaseRenewIntervalMs, 5_000);
    leaseWaitTimeoutMs = positive('leaseWaitTimeoutMs', options.leaseWaitTimeoutMs, 60_000);
    ttlAndRenew('leaseTtlMs', ttlMs, 'leaseRenewIntervalMs', renewIntervalMs);
  } else if (
    options.workflowClaimRenewIntervalMs !== undefined &&
    typeof options.workflowClaimRenewIntervalMs === 'number' &&
    options.workflowClaimRenewIntervalMs > 0
  ) {
    // 'none' ignores claim options, but a poll interval is still useful for cross-call result waiters.
    renewIntervalMs = options.workflowClaimRenewIntervalMs;
  }
  const clock = options.clock ?? systemClock;
  assertPlausibleClock(clock);
  const maxPayloadBytes = positive(
    'limits.maxPayloadBytes',
    options.limits?.maxPayloadBytes,
    defaultMaxPayloadBytes,
  );
  if (maxPayloadBytes > 900 * 1024)
    throw new InvalidOptionsError(
      `limits.maxPayloadBytes (${maxPayloadBytes}) must be at most 921600 so a record always fits the storage value limit.`,
    );
  if (options.mapStack !== undefined && typeof options.mapStack !== 'function')
    throw new InvalidOptionsError(
      `options.mapStack must be a function (stack: string) => string; got ${quote(options.mapStack)}.`,
    );
  const { interceptors } = options;
  if (interceptors !== undefined) {
    if (typeof interceptors !== 'object' || interceptors === null || Array.isArray(interceptors))
      throw new InvalidOptionsError(
        `options.interceptors must be an object like { activities: [...], workflows: [...] }; got ${quote(interceptors)}.`,
      );
    for (const key of Object.keys(interceptors))
      if (key !== 'activities' && key !== 'workflows')
        throw new InvalidOptionsError(
          `Unknown interceptor kind '${key}' in options.interceptors; the kinds are: activities, workflows.`,
        );
    const { activities } = interceptors;
    if (
      activities !== undefined &&
      (!Array.isArray(activities) || activities.some((interceptor) => typeof interceptor !== 'function'))
    )
      throw new InvalidOptionsError(
        'options.interceptors.activities must be an array of functions (call, next) => result.',
      );
    const { workflows } = interceptors;
    if (workflows !== undefined) {
      if (!Array.isArray(workflows))
        throw new InvalidOptionsError(
          `options.interceptors.workflows must be an array of objects with any of ${workflowInterceptorMethods.join(', ')}; got ${quote(workflows)}.`,
        );
      for (const [index, interceptor] of (workflows as unknown[]).entries()) {
        if (typeof interceptor !== 'object' || interceptor === null || Array.isArray(interceptor))
          throw new InvalidOptionsError(
            `options.interceptors.workflows[${index}] must be an object with any of ${workflowInterceptorMethods.join(', ')} (each a function (call, next) => …); got ${quote(interceptor)}.`,
          );
        for (const [key, method] of Object.entries(interceptor)) {
          if (!(workflowInterceptorMethods as readonly string[]).includes(key))
            throw new InvalidOptionsError(
              `options.interceptors.workflows[${index}] has '${key}'; a workflow interceptor's methods are: ${workflowInterceptorMethods.join(', ')}.`,
            );
          if (method !== undefined && typeof method !== 'function')
            throw new InvalidOptionsError(
              `options.interceptors.workflows[${index}].${key} must be a function (call, next) => …; got ${quote(method)}.`,
            );
        }
      }
    }
  }
  const { tracer } = options;
  if (
    tracer !== undefined &&
    (typeof tracer !== 'object' || tracer === null || typeof tracer.startSpan !== 'function')
  )
    throw new InvalidOptionsError(
      `options.tracer must be an object with startSpan(name, options) (e.g. openTelemetryTracer() from 'shuttle/opentelemetry'); got ${quote(tracer)}.`,
    );
  const codec = options.codec === undefined ? undefined : checkPayloadCodec(options.codec);
  const activityLimits = resolveActivityLimits(options.activityLimits);
  return {
    activityLimits,
    storage: codec ? new CodecStorage(storage, codec) : storage,
    queues: resolveQueues(options.queues),
    codec,
    mapStack: options.mapStack,
    activityInterceptors: [...(interceptors?.activities ?? [])],
    workflowInterceptors: [...(interceptors?.workflows ?? [])],
    tracer,
    workflows: options.workflows ?? [],
    ownership,
    backgroundTasks,
    clock,
    random: options.random ?? systemRandom,
    engineId: options.engineId,
    liveness: options.liveness,
    recover: options.recover ?? true,
    claimWorkflows: options.claimWorkflows ?? true,
    maxPayloadBytes,
    onWarning: options.onWarning ?? defaultWarning,
    onEvent: options.onEvent,
    ttlMs,
    renewIntervalMs,
    leaseWaitTimeoutMs,
    reclaimBatchSize: Math.floor(positive('reclaimBatchSize', options.reclaimBatchSize, 200)),
    idempotencyWindowMs: positive('idempotencyWindowMs', options.idempotencyWindowMs, 86_400_000),
    retentionMs:
      options.retentionMs === undefined ? undefined : positive('retentionMs', options.retentionMs, 0),
    updateResponseRetentionMs: positive(
      'updateResponseRetentionMs',
      options.updateResponseRetentionMs,
      600_000,
    ),
  };
}
