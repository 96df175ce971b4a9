/**
 * The public workflow API: `defineWorkflow`, the workflow context, and the operations a workflow yields.
 *
 * ## Determinism rules
 *
 * A workflow is a synchronous generator. It holds no durable state of its own: on recovery or handoff the
 * engine re-runs it from the start and feeds it the recorded results of completed operations in order; the
 * first unrecorded operation is where execution continues. Therefore workflow code must:
 *
 * - get time, randomness, ids and waiting only from `ctx` (`yield* ctx.now()`, `ctx.random()`, `ctx.uuid()`,
 *   `ctx.sleep()`), never from `Date`, `Math.random`, `crypto` or `setTimeout`;
 * - do side effects (network, storage, DOM, logging that matters) only inside activities;
 * - yield the same operations (same kind, same name) in the same order for the same input and results.
 *
 * When replay meets a different operation at a recorded position, the workflow fails with
 * `NonDeterminismError`. Change running code behind `ctx.patched(id)`, or ship it under a new definition
 * `version` (workflows keep running on the version they started with; `ctx.continueAsNew` moves a
 * long-lived one onto the newest).
 *
 * Every operation is used as `yield* ctx.<op>(…)`. Operations are also values: pass them unstarted to
 * `ctx.all([...])` or `ctx.race([...])` to run them in parallel.
 */
import type { AttributeDeclarations, AttributeInput, SearchAttribute } from './attributes';
import { assertDeclarations } from './attributes';
import type { Json, JsonObject } from './codec';

/** Options of `ctx.activity`. */
export type ActivityOptions = {
  /** Retry policy. Defaults: 3 attempts, 1,000 ms initial interval, ×2, 30,000 ms cap. */
  retry?: RetryPolicy;
  /** Bound on one attempt, in ms; the attempt's AbortSignal is aborted when it passes. Default: none. */
  timeoutMs?: number;
  /**
   * An attempt that calls `context.heartbeat()` less often than this, in ms (counted from its start, then
   * from each heartbeat), is aborted with `ActivityHeartbeatTimeoutError` and retried by its policy: a hung
   * attempt is noticed long before its `timeoutMs`. Not for `completion: 'external'`. Default: none.
   */
  heartbeatTimeoutMs?: number;
  /**
   * `'external'`: the activity finishes outside the engine — a person approving, a webhook calling back.
   * The function gets `context.completionToken` (hand it to whoever will finish the activity) and its return
   * value is ignored (a throw still fails the attempt); the activity waits until
   * `engine.completeActivity(token, result)` or `engine.failActivity(token, error)` is called, on any
   * engine, exactly once. A function run again (retry, or another engine took the workflow over) gets the
   * same token. Default `'function'`: the function's result completes it.
   */
  completion?: 'function' | 'external';
  /**
   * The concurrency limit group this activity counts against (`EngineOptions.activityLimits`): 1–100
   * characters of `A-Z a-z 0-9 _ . : -`. Default: the activity's name. An attempt of a limited group waits
   * for a slot before its function is called; its `timeoutMs` and `heartbeatTimeoutMs` count from then.
   */
  limit?: string;
};

export type RetryPolicy = {
  /** Total attempts including the first. `1` disables retries. Default 3. */
  maxAttempts?: number;
  /** Wait before the second attempt, in ms. Default 1,000. */
  initialIntervalMs?: number;
  /** Multiplier applied to the wait after each failed attempt. Default 2. */
  backoffCoefficient?: number;
  /** Cap on one wait, in ms. Default 30,000. */
  maxIntervalMs?: number;
  /** Error names (`error.name`) that fail the activity at once, without retrying. */
  nonRetryable?: string[];
};

/** What an activity function receives. */
export type ActivityContext = {
  /** 1 for the first attempt. */
  attempt: number;
  /** Aborted when the attempt times out, the workflow is cancelled, or this engine loses the workflow. */
  signal: AbortSignal;
  /**
   * Reports progress of a long activity: recorded durably (at most once a second; the latest details win),
   * shown by the studio with the pending operation, given to the next attempt as `heartbeatDetails` after a
   * failure, a timeout or a takeover, and — with `heartbeatTimeoutMs` — proof that the attempt is alive.
   */
  heartbeat(details?: Json): void;
  /**
   * The details of the last heartbeat an earlier attempt of this activity recorded (on this engine or
   * another), to resume from; undefined for a first attempt, or when none heartbeat with details.
   */
  heartbeatDetails?: Json;
  /** `completion: 'external'` only: the token that `engine.completeActivity` / `failActivity` take. */
  completionToken?: string;
};

export type ActivityFunction<T> = (context: ActivityContext) => T | Promise<T>;

/** The attempt an activity interceptor wraps: which activity of which run, and the attempt's context. */
export type ActivityCall = {
  readonly workflowId: string;
  readonly workflowType: string;
  readonly run: number;
  /** The activity's name, as given to `ctx.activity(name, …)`. */
  readonly activity: string;
  /** The operation's position in the run's history (and its member inside `all` / `race`). */
  readonly position: number;
  readonly member: number;
  readonly context: ActivityContext;
};

/**
 * Middleware around every activity attempt an engine runs (`createEngine({ interceptors: { activities } })`),
 * outermost first. Call `next(context)` to run the activity (through the interceptors after this one) and
 * return what it returns — timing, logging, tracing, a changed context — or return without calling it (a
 * mock: the test kit's `activities` are such an interceptor), or throw (the attempt fails; its retry
 * policy applies). What it returns is the attempt's result, recorded like any.
 */
export type ActivityInterceptor = (
  call: ActivityCall,
  next: (context: ActivityContext) => unknown,
) => unknown;

/** Which workflow run a workflow interceptor is called for. */
export type WorkflowCall = {
  readonly workflowId: string;
  readonly workflowType: string;
  readonly version: number;
  readonly run: number;
};

/**
 * Middleware around what a workflow receives (`createEngine({ interceptors: { workflows } })`), outermost
 * first; each method is optional, and calls `next` to go on (to the interceptors after it, then the
 * workflow's own code), may change what it passes or returns, or throws.
 *
 * - `execute` wraps the workflow's `run`: it gets the input and returns the generator the engine drives,
 *   usually `yield* next(input)` inside a generator of its own. It runs **on every replay** (recovery,
 *   handoff, every load of the run on any engine), so it must be deterministic and do no I/O — it may yield
 *   `ctx` operations as workflow code may, and is bound by the same rules. A throw fails the workflow.
 * - `signal` wraps the delivery of a signal to `ctx.waitForSignal` (live only: what it returns is
 *   recorded as the signal's payload, and replay reads the record). A throw makes the wait throw it.
 * - `update` wraps an update's handler, on the engine that applies it (live only: replay restores the
 *   state the handler produced). A throw rejects the update.
 * - `query` wraps a query's handler, on the engine the query is called on. A throw fails the query.
 *
 * For timing, logging, tracing, auth checks, payload rewriting — and tests.
 */
export type WorkflowInterceptor = {
  execute?: (
    call: WorkflowCall & { readonly input: unknown; readonly isReplaying: boolean },
    next: (input: unknown) => Generator<Command, unknown, unknown>,
  ) => Generator<Command, unknown, unknown>;
  signal?: (
    call: WorkflowCall & { readonly name: string; readonly payload: unknown; readonly position: number },
    next: (payload: unknown) => unknown,
  ) => unknown;
  update?: (
    call: WorkflowCall & {
      readonly name: string;
      readonly updateId: string;
      readonly arg: unknown;
      readonly state: JsonObject;
    },
    next: (arg: unknown) => unknown,
  ) => unknown;
  query?: (
    call: WorkflowCall & {
      readonly name: string;
      readonly arg: unknown;
      readonly state: Readonly<JsonObject>;
    },
    next: (arg: unknown) => unknown,
  ) => unknown;
};

/** `interceptors` composed around `inner`, outermost first: `compose(list, 'update', call, inner)(arg)`. */
export function composeInterceptors<K extends 'signal' | 'update' | 'query', C>(
  interceptors: readonly WorkflowInterceptor[],
  kind: K,
  call: C,
  inner: (value: unknown) => unknown,
): (value: unknown) => unknown {
  let next = inner;
  for (let index = interceptors.length - 1; index >= 0; index--) {
    const method = interceptors[index]![kind] as
      ((call: C, next: (value: unknown) => unknown) => unknown) | undefined;
    if (!method) continue;
    // The value an interceptor gives `next` is the one the layers inside it see.
    const following = next;
    const self = interceptors[index];
    next = (value) => method.call(self, { ...call, ...valueField(kind, value) } as C, following);
  }
  return next;
}

function valueField(kind: 'signal' | 'update' | 'query', value: unknown): Record<string, unknown> {
  return kind === 'signal' ? { payload: value } : { arg: value };
}

export type ParentClosePolicy = 'await' | 'abandon' | 'terminate';

export type ChildOptions = {
  /**
   * The child's workflow id. Default: derived from the parent's id, its run (after the first: `.r<run>`) and
   * the operation position — `<parent>.child-<pos>`, `<parent>.r2.child-<pos>`.
   */
  id?: string;
  /**
   * `'await'` (default): the parent waits for the child's result; a child failure throws in the parent.
   * `'abandon'`: returns the child id at once; the child lives on independently.
   * `'terminate'`: returns the child id at once; the child is terminated when the parent ends.
   */
  parentClosePolicy?: ParentClosePolicy;
};

/** The leaf commands a workflow yields. Composite `all`/`race` contain leaves. */
export type LeafCommand =
  | { kind: 'activity'; name: string; fn: ActivityFunction<unknown>; options: ActivityOptions }
  | { kind: 'sleep'; name: string; durationMs: number }
  | { kind: 'signal'; name: string; timeoutMs: number | undefined }
  | { kind: 'until'; name: string; predicate: () => boolean; timeoutMs: number | undefined }
  | { kind: 'child'; name: string; input: unknown; options: ChildOptions };

export type Command =
  | LeafCommand
  | { kind: 'all'; name: string; members: LeafCommand[] }
  | { kind: 'race'; name: string; members: LeafCommand[] }
  | { kind: 'now'; name: string }
  | { kind: 'random'; name: string }
  | { kind: 'uuid'; name: string }
  /** `ctx.patched(name)` (or `ctx.deprecatePatch(name)`: `deprecated`): see docs/engine.md, "Patching". */
  | { kind: 'patch'; name: string; deprecated?: boolean }
  /** `ctx.signalWorkflow(id, name, payload)`: buffers a signal for another workflow (run/messages.ts). */
  | { kind: 'signal-workflow'; name: string; workflowId: string; payload: unknown }
  /** `ctx.cancelWorkflow(id, reason)`: asks another workflow to cancel (run/messages.ts). */
  | { kind: 'cancel-workflow'; name: string; workflowId: string; reason: string | undefined }
  /** `ctx.setAttributes(changes)`: the workflow's search attributes, typed (run/attributes.ts). */
  | { kind: 'set-attributes'; name: string; changes: Record<string, SearchAttribute | null> }
  /** `ctx.continueAsNew(input)`: ends the run and starts the next one (never recorded: see finish.ts). */
  | { kind: 'continue-as-new'; name: string; input: unknown; version?: number };

export type OperationKind = Command['kind'];

/**
 * A durable operation. `yield*` it inside a workflow to run it and get its result, or pass it to
 * `ctx.all` / `ctx.race`.
 */
export class Operation<T> {
  constructor(readonly command: Command) {}

  *[Symbol.iterator](): Generator<Command, T, unknown> {
    return (yield this.command) as T;
  }
}

type OperationResult<O> = O extends Operation<infer T> ? T : never;

export interface WorkflowContext<S extends JsonObject = JsonObject> {
  readonly workflowId: string;
  readonly workflowType: string;
  readonly version: number;
  /** JSON object saved with every checkpoint; queries read it, update handlers may change it. */
  readonly state: S;
  /** True while the engine is re-running recorded history (e.g. skip logging). */
  readonly isReplaying: boolean;
  activity<T>(name: string, fn: ActivityFunction<T>, options?: ActivityOptions): Operation<Awaited<T>>;
  sleep(ms: number): Operation<void>;
  waitForSignal<T = Json>(name: string, options?: { timeoutMs?: number }): Operation<T | undefined>;
  waitUntil(predicate: () => boolean, options?: { timeoutMs?: number }): Operation<boolean>;
  startChild<D extends AnyWorkflowDefinition>(
    workflow: D | string,
    input: WorkflowInput<D>,
    options?: ChildOptions,
  ): Operation<WorkflowOutput<D>>;
  all<const Ops extends readonly Operation<unknown>[]>(
    operations: Ops,
  ): Operation<{ -readonly [K in keyof Ops]: OperationResult<Ops[K]> }>;
  race<const Ops extends readonly Operation<unknown>[]>(
    operations: Ops,
  ): Operation<{ index: number; value: OperationResult<Ops[number]> }>;
  now(): Operation<number>;
  random(): Operation<number>;
  uuid(): Operation<string>;
  /**
   * A safe change of running code: true when this run takes the code added under `patchId` — it reached
   * this call live — and false when it replays a history recorded before the patch existed (that run keeps
   * the old branch). Recorded, when true, as an operation of its own.
   *
   * @example
   * if (yield* ctx.patched('charge-with-tax')) yield* ctx.activity('charge', () => charge(total * 1.2));
   * else yield* ctx.activity('charge', () => charge(total));
   */
  patched(patchId: string): Operation<boolean>;
  /**
   * The second step of removing a patch, once no run that took the old branch is left: replaces
   * `if (yield* ctx.patched(id)) … else …` by `yield* ctx.deprecatePatch(id)` and the new branch alone.
   * Histories recorded with the patch still replay; new runs record nothing. When no run recorded with the
   * patch is left either, the call can go.
   */
  deprecatePatch(patchId: string): Operation<void>;
  /**
   * Ends this run and starts the next run of the same workflow id with `input`, in the same commit: a
   * workflow that loops for ever (a subscription, a poller, an agent) keeps its history — and so its replay,
   * recovery and handoff cost — bounded by one run. Nothing else is carried: state, timers and history start
   * afresh; signals not consumed yet stay buffered for the new run; the execution deadline, the parent link
   * and the schedule are kept. The new run takes the newest registered version of the type (or `version`):
   * this is where a long-lived workflow moves onto new code. Result waiters follow the chain to its last run.
   * After a delivered cancel, the workflow ends `cancelled` instead.
   *
   * @example
   * for (let i = 0; i < 1_000; i++) yield* ctx.activity('poll', () => poll(input.cursor));
   * return yield* ctx.continueAsNew({ cursor: nextCursor });
   */
  continueAsNew<I = unknown>(input: I, options?: ContinueAsNewOptions): Operation<never>;
  /**
   * Sends signal `name` to workflow `workflowId` (another, or this one), exactly once: the signal is buffered
   * for it in the same commit that records this operation, so neither a crash nor a handoff sends it twice or
   * loses it. Throws (a recorded failure the workflow may catch) `WorkflowNotFoundError` when no such
   * workflow exists, `InvalidWorkflowStateError` when it has finished, `PayloadTooLargeError` for a payload
   * over the limit.
   */
  signalWorkflow(workflowId: string, name: string, payload?: unknown): Operation<void>;
  /**
   * Asks workflow `workflowId` to cancel (cooperatively, as `engine.cancel` does), exactly once, recorded
   * like `signalWorkflow`. Resolves `'requested'`, or `'already-finished'` for a workflow that has ended;
   * throws `WorkflowNotFoundError` when none exists.
   */
  cancelWorkflow(workflowId: string, reason?: string): Operation<'requested' | 'already-finished'>;
  /**
   * Sets search attributes of this workflow — `engine.list({ attributes })`, the studio's filters and the
   * CLI's `--where` find workflows by them through an index. Names must be declared on the definition
   * (`attributes: { customer: 'string' }`) and values of the declared type (a `time` takes a `Date`, epoch
   * ms or an ISO-8601 string); `null` removes a name; the latest value wins. Recorded like any operation, so
   * a replay writes nothing again. A bad name or value throws `InvalidSearchAttributeError` at the call.
   *
   * @example
   * yield* ctx.setAttributes({ customer: input.customer, amount: input.total, vip: false });
   */
  setAttributes(changes: Record<string, AttributeInput>): Operation<void>;
}

/** Options of `ctx.continueAsNew`. */
export type ContinueAsNewOptions = {
  /** The version the next run takes. Default: the newest version of the type registered on the engine. */
  version?: number;
};

export type QueryHandler<S> = (state: Readonly<S>, arg: unknown) => unknown;

export type UpdateDefinition<S> = {
  /** Runs at the caller before anything is stored; throw to reject the update. */
  validate?: (arg: unknown) => void;
  /** Runs once, on the owning engine; may change `state`; its return value is the update's result. */
  handle: (state: S, arg: unknown) => unknown;
};

export type WorkflowDefinition<I = unknown, O = unknown, S extends JsonObject = JsonObject> = {
  /** The workflow type. Letters, digits, `-`, `_`, `.`; at most 100 characters. */
  readonly name: string;
  /** A positive integer. Running workflows stay on the version they started with. */
  readonly version: number;
  readonly run: (ctx: WorkflowContext<S>, input: I) => Generator<Command, O, unknown>;
  readonly queries?: Record<string, QueryHandler<S>>;
  readonly updates?: Record<string, UpdateDefinition<S>>;
  /** Shown by the studio. */
  readonly description?: string;
  /** Prefilled in the studio's start dialog. */
  readonly sampleInput?: NoInfer<I>;
  /**
   * How long a finished run of this type is kept, in ms after it ended; then the retention sweep purges it.
   * Default: the engine's `retentionMs` (kept forever when neither is set).
   */
  readonly retentionMs?: number;
  /**
   * The search attributes this type may set (`ctx.setAttributes`), name → `'string' | 'number' | 'boolean' |
   * 'time'`. One name should mean one type across the types of a store (an engine refuses definitions that
   * disagree).
   */
  readonly attributes?: AttributeDeclarations;
  /**
   * The queue its starts go onto unless a start names another (`start(…, { queue })`): declared in
   * `createEngine({ queues })` on the engines that start it. Default: none (it starts at once).
   */
  readonly queue?: string;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWorkflowDefinition = WorkflowDefinition<any, any, any>;
// Every parameter is inferred: a definition with a typed input is not assignable to one with `unknown`
// input (its `run` takes the narrower type), so matching against a fixed `unknown` would yield `unknown`.
export type WorkflowInput<D> = D extends WorkflowDefinition<infer I, infer _O, infer _S> ? I : unknown;
export type WorkflowOutput<D> = D extends WorkflowDefinition<infer _I, infer O, infer _S> ? O : unknown;

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * Declares a workflow type.
 *
 * @example
 * export const greet = defineWorkflow({
 *   name: 'greet',
 *   version: 1,
 *   *run(ctx, input: { name: string }) {
 *     const text = yield* ctx.activity('compose', () => `Hello, ${input.name}`);
 *     yield* ctx.sleep(1_000);
 *     return text;
 *   },
 * });
 */
export function defineWorkflow<I, O, S extends JsonObject = JsonObject>(
  definition: WorkflowDefinition<I, O, S>,
): WorkflowDefinition<I, O, S> {
  assertDefinition(definition);
  return Object.freeze({ ...definition });
}

/** Throws a `TypeError` naming what is wrong with a would-be definition. */
export function assertDefinition(definition: unknown): asserts definition is AnyWorkflowDefinition {
  if (typeof definition !== 'object' || definition === null)
    throw new TypeError(
      'A workflow definition must be an object created with defineWorkflow({ name, version, run }).',
    );
  const { name, version, run, queries, updates, retentionMs, attributes, queue } = definition as Record<
    string,
    unknown
  >;
  if (typeof name !== 'string' || !namePattern.test(name))
    throw new TypeError(
      `Workflow name ${JSON.stringify(name)} is invalid: use 1–100 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1)
    throw new TypeError(
      `Workflow '${name}' has version ${JSON.stringify(version)}; the version must be a positive integer.`,
    );
  if (
    retentionMs !== undefined &&
    (typeof retentionMs !== 'number' || !Number.isFinite(retentionMs) || retentionMs <= 0)
  )
    throw new TypeError(
      `Workflow '${name}' has retentionMs ${JSON.stringify(retentionMs)}; it must be a positive number of milliseconds (omit it to use the engine's).`,
    );
  if (attributes !== undefined) assertDeclarations(name, attributes);
  if (queue !== undefined && (typeof queue !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(queue)))
    throw new TypeError(
      `Workflow '${name}' has queue ${JSON.stringify(queue)}; a queue name is 1 to 100 letters, digits, '_', '.' or '-'.`,
    );
  if (typeof run !== 'function')
    throw new TypeError(`Workflow '${name}' needs a generator function \`*run(ctx, input)\`.`);
  if (run.constructor?.name !== 'GeneratorFunction')
    throw new TypeError(
      `Workflow '${name}': run must be a generator function (write \`*run(ctx, input) { … }\`).`,
    );
  for (const [label, table] of [
    ['queries', queries],
    ['updates', updates],
  ] as const) {
    if (table === undefined) continue;
    if (typeof table !== 'object' || table === null)
      throw new TypeError(`Workflow '${name}': ${label} must be an object of handlers.`);
    for (const [handlerName, handler] of Object.entries(table)) {
      const fn = label === 'queries' ? handler : (handler as { handle?: unknown } | null)?.handle;
      if (typeof fn !== 'function')
        throw new TypeError(
          `Workflow '${name}': ${label}.${handlerName} must be ${label === 'queries' ? 'a function' : 'an object with handle(state, arg)'}.`,
        );
    }
  }
}

/** The workflow-type name of a definition or a name. */
export function workflowTypeOf(workflow: AnyWorkflowDefinition | string): string {
  return typeof workflow === 'string' ? workflow : workflow.name;
}

/** A short human description of a command, as used in NonDeterminismError and "waiting on" displays. */
export function describeCommand(command: { kind: string; name: string }): string {
  return command.name && command.name !== command.kind ? `${command.kind} '${command.name}'` : command.kind;
}
