/**
 * The test kit (`shuttle/testing`): an engine for the tests of your own workflows — in memory, on a clock
 * that moves only when told, with activity mocks by name — and the few helpers such tests need: skip time
 * (`advanceTime`: every durable timer in the span fires at its time, in order, and the work it starts settles
 * before the next), wait for a result with time skipped (`result`), settle (`idle`), send signals and read
 * state. Everything else is the engine itself (`env.engine`): the same code, storage contract and replay as in
 * production, so a test that passes here exercises what runs there.
 *
 * Guide: docs/testing-workflows.md.
 */
import {
  SimulatedClock,
  createEngine,
  isTerminal,
  nextTimerDue,
  settle,
  type ActivityCall,
  type ActivityContext,
  type ActivityInterceptor,
  type AnyWorkflowDefinition,
  type Engine,
  type EngineOptions,
  type JsonObject,
  type WorkflowHandle,
} from '../engine';
import { MemoryStorage } from '../storage/memory';
import { seededRandom } from '../storage/seeded-random';

/** A mocked activity: what the activity named like it returns (or throws) instead of running its function. */
export type ActivityMock = (context: ActivityContext, call: ActivityCall) => unknown;

export type TestEnvironmentOptions = {
  /** The definitions to register. */
  workflows: readonly AnyWorkflowDefinition[];
  /**
   * Activity mocks by activity name (`ctx.activity(name, …)`): the mock runs instead of the activity's
   * function — return its result, throw to fail the attempt (the activity's retry policy applies; time is
   * skipped through its waits). Activities without a mock run their own function.
   */
  activities?: Readonly<Record<string, ActivityMock>>;
  /** When the simulated clock starts, in epoch ms. Default 2026-01-01T00:00:00Z. */
  startTime?: number;
  /** Seed of `ctx.random()` and `ctx.uuid()` (and of generated ids). Default 1. */
  seed?: number;
  /** More engine options (`interceptors`, `limits`, `retentionMs`, `mapStack`, …). */
  engine?: Omit<EngineOptions, 'storage' | 'clock' | 'backgroundTasks' | 'workflows' | 'random'>;
};

/** One call of a mocked activity, in the order they were made. */
export type MockedActivityCall = { activity: string; workflowId: string; run: number; attempt: number };

/** `result()` could not finish the workflow by skipping time: what it waits on needs the test. */
export class TestEnvironmentStalledError extends Error {
  override readonly name = 'TestEnvironmentStalledError';

  constructor(
    readonly workflowId: string,
    readonly waitingOn: string | null,
    reason: 'nothing-due' | 'time-limit',
    timeLimitMs: number,
  ) {
    super(
      reason === 'nothing-due'
        ? `Workflow '${workflowId}' is still running and no timer will move it on: it waits on ${waitingOn ?? 'nothing the engine can see'}. Send what it waits for (env.signal, env.engine.update, completeActivity) before awaiting its result.`
        : `Workflow '${workflowId}' is still running after ${timeLimitMs} ms of skipped time (it waits on ${waitingOn ?? 'nothing the engine can see'}). Pass a larger { timeLimitMs } if that is expected.`,
    );
  }
}

export type TestEnvironment = {
  /** The engine under test: start, handle, signal, query, update, describe, timeline, list, … */
  readonly engine: Engine;
  /** The store everything is written to. */
  readonly storage: MemoryStorage;
  /** The simulated time, in epoch ms. */
  now(): number;
  /**
   * Moves time forward `ms`: each durable timer that falls due in the span (sleeps, retry waits, timeouts,
   * delayed starts) fires at its own time, in order, and what it starts — turns, activities, children —
   * settles before the next. Resolves with nothing in flight.
   */
  advanceTime(ms: number): Promise<void>;
  /** Lets everything in flight settle (turns, activities, children) without moving time. */
  idle(): Promise<void>;
  /**
   * The outcome of a workflow (its latest run, or the handle's: following continue-as-new), skipping time
   * from timer to timer while it waits on one. Throws `TestEnvironmentStalledError` when it waits on
   * something only the test can give (a signal, an external completion), or would need more than
   * `timeLimitMs` of skipped time (default: 366 days); rejects like `handle.result()` when it failed.
   */
  result<O = unknown>(workflow: string | WorkflowHandle<O>, options?: { timeLimitMs?: number }): Promise<O>;
  /** Sends a signal and lets the workflow handle it. */
  signal(workflowId: string, name: string, payload?: unknown): Promise<void>;
  /** The workflow's `ctx.state`, as last committed. */
  state<S extends JsonObject = JsonObject>(workflowId: string): Promise<S>;
  /** The calls of mocked activities so far, in order. */
  readonly activityCalls: readonly MockedActivityCall[];
  /** Shuts the engine down. */
  close(): Promise<void>;
};

const defaultTimeLimitMs = 366 * 24 * 60 * 60 * 1000;

export async function createTestEnvironment(options: TestEnvironmentOptions): Promise<TestEnvironment> {
  if (typeof options !== 'object' || options === null || !Array.isArray(options.workflows))
    throw new TypeError('createTestEnvironment needs { workflows: [...definitions] }.');
  const mocks = options.activities ?? {};
  for (const [name, mock] of Object.entries(mocks))
    if (typeof mock !== 'function')
      throw new TypeError(`The mock of activity '${name}' must be a function (context, call) => result.`);
  const clock = new SimulatedClock(options.startTime);
  const storage = new MemoryStorage();
  const activityCalls: MockedActivityCall[] = [];
  /** Completions of mocked external activities on their way (`idle` waits for them). */
  const completing = new Set<Promise<unknown>>();
  const mocking: ActivityInterceptor = (call, next) => {
    const mock = Object.prototype.hasOwnProperty.call(mocks, call.activity)
      ? mocks[call.activity]
      : undefined;
    if (!mock) return next(call.context);
    const { activity, workflowId, run, context } = call;
    activityCalls.push({ activity, workflowId, run, attempt: context.attempt });
    const token = context.completionToken;
    if (token === undefined) return mock(context, call);
    // An external activity: what the mock returns (or throws) completes (or fails) it, as the outside would.
    const done: Promise<unknown> = Promise.resolve()
      .then(() => mock(context, call))
      .then(
        (value) => engine.completeActivity(token, value),
        (error: unknown) => engine.failActivity(token, error),
      )
      .catch(() => undefined)
      .finally(() => completing.delete(done));
    completing.add(done);
    return undefined;
  };
  const more = options.engine ?? {};
  const engine = await createEngine({
    ...more,
    storage,
    clock,
    random: seededRandom(options.seed ?? 1),
    backgroundTasks: 'manual',
    workflows: options.workflows,
    // The mocks are innermost: interceptors given here see a mocked activity like any other.
    // Workflow interceptors given here are kept as they are.
    interceptors: {
      ...more.interceptors,
      activities: [...(more.interceptors?.activities ?? []), mocking],
    },
  });

  const idle = async () => {
    for (let round = 0; round < 3; round++) {
      await settle();
      while (completing.size > 0) await Promise.all([...completing]);
      await engine.idle();
    }
  };
  const pass = async () => {
    await engine.runMaintenance();
    await idle();
  };
  /**
   * Moves the clock to `target`, firing each timer due on the way at its own time (a timer due already that
   * a pass did not fire — its workflow is driven nowhere — is passed over).
   */
  const advanceTo = async (target: number) => {
    for (;;) {
      await pass();
      const due = await nextTimerDue(storage, clock.now());
      if (due === null || due > target) break;
      await clock.advance(due - clock.now());
    }
    if (target > clock.now()) await clock.advance(target - clock.now());
    await pass();
  };

  const env: TestEnvironment = {
    engine,
    storage,
    activityCalls,
    now: () => clock.now(),
    idle,
    async advanceTime(ms) {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
        throw new TypeError(`advanceTime takes a number of milliseconds ≥ 0; got ${String(ms)}.`);
      await advanceTo(clock.now() + ms);
    },
    async result<O>(workflow: string | WorkflowHandle<O>, resultOptions: { timeLimitMs?: number } = {}) {
      const handle = typeof workflow === 'string' ? engine.handle<O>(workflow) : workflow;
      const timeLimitMs = resultOptions.timeLimitMs ?? defaultTimeLimitMs;
      const limit = clock.now() + timeLimitMs;
      for (;;) {
        await pass();
        const description = await engine.describe(handle.workflowId);
        if (isTerminal(description.status)) return handle.result();
        const due = await nextTimerDue(storage, clock.now());
        const waitingOn =
          description.status === 'suspended'
            ? 'a resume (it is suspended)'
            : (description.pending?.summary ?? null);
        if (description.status === 'suspended')
          throw new TestEnvironmentStalledError(handle.workflowId, waitingOn, 'nothing-due', timeLimitMs);
        if (due === null)
          throw new TestEnvironmentStalledError(handle.workflowId, waitingOn, 'nothing-due', timeLimitMs);
        if (due > limit)
          throw new TestEnvironmentStalledError(handle.workflowId, waitingOn, 'time-limit', timeLimitMs);
        await advanceTo(due);
      }
    },
    async signal(workflowId, name, payload) {
      await engine.signal(workflowId, name, payload);
      await idle();
    },
    async state<S extends JsonObject>(workflowId: string) {
      return (await engine.describe(workflowId)).state as S;
    },
    async close() {
      await engine.shutdown();
    },
  };
  await idle();
  return env;
}
