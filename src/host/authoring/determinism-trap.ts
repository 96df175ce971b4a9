/**
 * The runtime backstop of the determinism check (determinism.ts): an authored module sees guarded versions
 * of the globals a workflow body may not use, and its definition's body runs in "body steps" during which
 * those guards throw `NonDeterministicCallError` instead of reading the clock, drawing randomness, starting
 * timers or doing I/O.
 *
 * - A body step is one synchronous resumption of the body generator (`next`, `throw`, `return`) and one
 *   evaluation of a `ctx.waitUntil` predicate. Everything the body calls synchronously — module-level
 *   helpers included, which the static check does not follow — runs inside the step.
 * - Activity functions run outside body steps (the engine calls them after the body yielded), so in them the
 *   guards do what the real globals do. So does the module's top level, query and update handlers, and code
 *   the body leaves to run later (a promise callback), which the static check reports instead.
 * - A step that tripped a guard fails, even when the body caught the error: the step's caller gets the
 *   error, so the workflow fails with it and a non-deterministic body never carries on silently.
 * - The error names the call and, when the stack shows it, the author's line and column.
 * - `import()` is syntax and cannot be trapped; `globalThis.Date` and the like reach the real globals. The
 *   static check reports the first; the second is beyond what this guards against (it is not a sandbox).
 */
import { defineWorkflow, type AnyWorkflowDefinition, type WorkflowContext } from '../../engine';
import { nonDeterministicApis, type NonDeterministicApi, type NonDeterministicApiName } from './determinism';

export type SourcePosition = { line: number; column: number };

/** Thrown when a workflow body uses time, randomness, timers or I/O other than through `ctx`. */
export class NonDeterministicCallError extends Error {
  override name = 'NonDeterministicCallError';

  constructor(
    /** What was called, e.g. `Date.now()` or `crypto.randomUUID`. */
    readonly call: string,
    readonly api: NonDeterministicApiName,
    /** Where the author's code made the call, when known. */
    readonly position: (SourcePosition & { fileName: string }) | null,
  ) {
    const { instead, reason }: NonDeterministicApi = nonDeterministicApis[api];
    const where = position
      ? ` (line ${position.line}, column ${position.column} of ${position.fileName})`
      : '';
    const fix = instead
      ? `use ${instead} instead, or move this into an activity`
      : `it ${reason}; move this into an activity`;
    super(
      `Workflow code must be deterministic: ${call} was called while the workflow body ran${where} — ${fix}.`,
    );
  }
}

let inStep = false;
let tripped: NonDeterministicCallError | null = null;

/** Runs `step` as a body step: see the module header. */
export function runAsBodyStep<T>(step: () => T): T {
  if (inStep) return step();
  inStep = true;
  tripped = null;
  let result: T;
  try {
    result = step();
  } catch (error) {
    if (tripped === null) throw error;
  } finally {
    inStep = false;
  }
  const error = tripped;
  tripped = null;
  if (error) throw error;
  return result!;
}

/** The definition, with its body run in body steps (see the module header). */
export function runBodyInSteps<D extends AnyWorkflowDefinition>(definition: D): D {
  const run = definition.run;
  function* steppedRun(this: unknown, ctx: WorkflowContext, input: unknown) {
    const body = run.call(this, steppedContext(ctx), input);
    const steps: Iterator<unknown, unknown, unknown> & Iterable<unknown> = {
      [Symbol.iterator]: () => steps,
      next: (value?: unknown) => runAsBodyStep(() => body.next(value)),
      throw: (error?: unknown) => runAsBodyStep(() => body.throw(error)),
      return: (value?: unknown) => runAsBodyStep(() => body.return(value)),
    };
    return yield* steps;
  }
  return defineWorkflow({ ...definition, run: steppedRun }) as D;
}

function steppedContext(ctx: WorkflowContext): WorkflowContext {
  const stepped = Object.create(ctx) as WorkflowContext;
  const waitUntil: WorkflowContext['waitUntil'] = (predicate, options) =>
    ctx.waitUntil(
      typeof predicate === 'function' ? () => runAsBodyStep(() => predicate()) : predicate,
      options,
    );
  Object.defineProperty(stepped, 'waitUntil', { value: waitUntil });
  return stepped;
}

/** Finds where the author's code is in a stack; null when it is not there. */
export type Locate = (error: Error) => SourcePosition | null;

/** Throws (and remembers, for the step) when called during a body step. */
export function barredInBody(
  call: string,
  api: NonDeterministicApiName,
  fileName: string,
  locate: Locate,
): void {
  if (!inStep) return;
  const position = locate(new Error());
  const error = new NonDeterministicCallError(call, api, position && { ...position, fileName });
  tripped ??= error;
  throw error;
}

type AnyFunction = (...args: unknown[]) => unknown;

/**
 * The guarded globals an authored module of `fileName` sees instead of the real ones, by name: only for
 * globals this environment has (a missing one stays missing).
 */
export function guardedGlobals(fileName: string, locate: Locate): Record<string, unknown> {
  const bar = (call: string, api: NonDeterministicApiName) => barredInBody(call, api, fileName, locate);
  const real = globalThis as unknown as Record<string, unknown>;
  const guards: Record<string, unknown> = {};

  const RealDate = Date;
  const now = () => {
    bar('Date.now()', 'Date.now()');
    return RealDate.now();
  };
  guards.Date = new Proxy(RealDate, {
    apply(target, thisArg, args) {
      bar('Date()', 'Date()');
      return Reflect.apply(target, thisArg, args) as unknown;
    },
    construct(target, args, newTarget) {
      if (args.length === 0) bar('new Date()', 'new Date()');
      return Reflect.construct(target, args, newTarget) as object;
    },
    get: (target, key) => (key === 'now' ? now : (Reflect.get(target, key) as unknown)),
  });

  const RealMath = Math;
  const random = () => {
    bar('Math.random()', 'Math.random()');
    return RealMath.random();
  };
  guards.Math = new Proxy(RealMath, {
    get: (target, key) => (key === 'random' ? random : (Reflect.get(target, key) as unknown)),
  });

  for (const name of ['performance', 'crypto', 'process', 'localStorage'] as const) {
    const value = real[name];
    if (typeof value !== 'object' || value === null) continue;
    guards[name] = new Proxy(value, {
      get(target, key) {
        bar(`${name}.${String(key)}`, name);
        const property = Reflect.get(target, key) as unknown;
        return typeof property === 'function' ? (property as AnyFunction).bind(target) : property;
      },
    });
  }

  for (const name of [
    'setTimeout',
    'setInterval',
    'setImmediate',
    'queueMicrotask',
    'fetch',
    'XMLHttpRequest',
    'WebSocket',
  ] as const) {
    const value = real[name];
    if (typeof value !== 'function') continue;
    guards[name] = new Proxy(value as AnyFunction, {
      apply(target, thisArg, args) {
        bar(`${name}()`, name);
        return Reflect.apply(target, thisArg ?? globalThis, args) as unknown;
      },
      construct(target, args, newTarget) {
        bar(`new ${name}()`, name);
        return Reflect.construct(target, args, newTarget) as object;
      },
    });
  }
  return guards;
}
