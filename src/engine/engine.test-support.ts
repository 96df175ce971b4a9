/**
 * Test driver for engine scenarios: a shared MemoryStorage, a SimulatedClock, manual background tasks and an
 * in-memory liveness oracle, so timing is instant and exact. Several engines created from one `TestWorld`
 * share the store exactly as tabs share IndexedDB.
 */
import { FaultInjectingStorage, seededRandom } from '../storage/faults.test-support';
import { MemoryStorage } from '../storage/memory';
import type { Storage } from '../storage/types';
import { SimulatedClock, settle } from './clock';
import { createEngine, type Engine } from './engine';
import type { EngineEvent, EngineWarning } from './events';
import type { EngineOptions } from './options';
import { InMemoryLiveness } from './ownership/liveness';
import type { AnyWorkflowDefinition } from './workflow';

export { seededRandom };

/** The claim timings engine tests use under `workflow-lease`: renew 1 s, TTL 3 s (grace 2 s). */
export const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

export type TestEngine = Engine & {
  events: EngineEvent[];
  warnings: EngineWarning[];
  /** This engine's own view of the shared store, through which crashes and freezes are simulated. */
  wrapper: FaultInjectingStorage;
};

export class TestWorld {
  readonly storage: Storage;
  readonly clock = new SimulatedClock();
  readonly liveness = new InMemoryLiveness();
  readonly engines: TestEngine[] = [];
  readonly random: () => number;
  #names = 0;

  constructor(options: { storage?: Storage; seed?: number } = {}) {
    this.storage = options.storage ?? new MemoryStorage();
    this.random = seededRandom(options.seed ?? 1);
  }

  #nextName(): string {
    const n = this.#names++;
    return n < 26 ? `engine-${String.fromCharCode(65 + n)}` : `engine-${n}`;
  }

  /** Creates an engine on the shared store (manual background tasks unless overridden). */
  async engine(
    workflows: readonly AnyWorkflowDefinition[],
    options: Partial<EngineOptions> = {},
    /**
     * `hears`: which changed keys the engine's change feed reports to it (default: all). A scenario uses it
     * to let a notification arrive late, in the order real time may give: a write in flight before the
     * notice that would have stopped it.
     */
    feed: { hears?: (key: string) => boolean } = {},
  ): Promise<TestEngine> {
    const events: EngineEvent[] = [];
    const warnings: EngineWarning[] = [];
    const wrapper = new FaultInjectingStorage(this.storage, { closeInner: false, enabled: false, seed: 7 });
    const { hears } = feed;
    const watch = wrapper.watch;
    if (hears && watch)
      Object.defineProperty(wrapper, 'watch', {
        value: (prefix: string, listener: (keys: string[]) => void) =>
          watch.call(wrapper, prefix, (changed) => {
            const heard = changed.filter(hears);
            if (heard.length > 0) listener(heard);
          }),
      });
    const engine = (await createEngine({
      storage: wrapper,
      clock: this.clock,
      random: this.random,
      backgroundTasks: 'manual',
      engineId: this.#nextName(),
      workflows,
      onWarning: (warning) => warnings.push(warning),
      ...options,
      // recover after subscribing, so the events of recovery are recorded too
      recover: false,
    })) as TestEngine;
    engine.subscribe((event) => events.push(event));
    Object.assign(engine, { events, warnings, wrapper });
    if (options.recover ?? true) await engine.recoverAll();
    this.engines.push(engine);
    return engine;
  }

  /** Lets every (live) engine finish what it is doing. */
  async idle(engines: readonly Engine[] = this.live): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await this.#settleStore();
      await Promise.all(engines.map((engine) => this.#unlessStopped(engine, engine.idle())));
    }
  }

  /** One maintenance pass on each engine (in order), then idle. */
  async maintain(engines: readonly Engine[] = this.live): Promise<void> {
    for (const engine of engines) {
      await this.#unlessStopped(engine, engine.runMaintenance());
      await this.#settleTurns([engine]);
    }
    await this.#settleTurns(engines);
  }

  /** Like idle, but does not wait for running activities (they may wait on time that has not come). */
  async #settleTurns(engines: readonly Engine[]): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await this.#settleStore();
      await Promise.all(
        engines.map((engine) => this.#unlessStopped(engine, engine.idle({ activities: false }))),
      );
    }
  }

  /** Microtasks run out, and a store with an asynchronous feed (PostgreSQL) has reported every commit. */
  async #settleStore(): Promise<void> {
    await settle();
    await this.storage.syncWatchers?.();
    await settle();
  }

  /** Waits for `work` unless the engine crashes or freezes meanwhile (its work would then never end). */
  #unlessStopped(engine: Engine, work: Promise<unknown>): Promise<unknown> {
    return Promise.race([work.catch(() => undefined), this.#stopSignal(engine as TestEngine)]);
  }

  #stopSignals = new Map<TestEngine, { promise: Promise<void>; resolve: () => void }>();

  #stopSignal(engine: TestEngine): Promise<void> {
    let signal = this.#stopSignals.get(engine);
    if (!signal) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      signal = { promise, resolve };
      this.#stopSignals.set(engine, signal);
    }
    return signal.promise;
  }

  #signalStopped(engine: TestEngine): void {
    this.#stopSignal(engine);
    this.#stopSignals.get(engine)!.resolve();
  }

  /** Moves time forward in steps of `stepMs`, running maintenance on the given engines after each step. */
  async advance(ms: number, options: { stepMs?: number; engines?: readonly Engine[] } = {}): Promise<void> {
    const step = options.stepMs ?? ms;
    let left = ms;
    while (left > 0) {
      const now = Math.min(step, left);
      await this.clock.advance(now);
      left -= now;
      await this.maintain(options.engines ?? this.live);
    }
    if (ms === 0) await this.maintain(options.engines ?? this.live);
  }

  /**
   * Simulates the engine's process dying: every storage call it makes from now on hangs forever (a commit
   * in flight may or may not have landed), and the liveness oracle reports it dead.
   */
  crash(engine: TestEngine): void {
    engine.wrapper.setFaults({
      hangRate: 1,
      readFailureRate: 0,
      writeFailureRate: 0,
      writeFailureAfterApplyRate: 0,
    });
    engine.wrapper.enabled = true;
    this.liveness.kill(engine.id);
    this.#signalStopped(engine);
    this.engines.splice(this.engines.indexOf(engine), 1);
  }

  /** Simulates a frozen engine: its storage calls hang until `thaw`. It stays alive to the oracle. */
  freeze(engine: TestEngine): void {
    engine.wrapper.setFaults({
      hangRate: 1,
      readFailureRate: 0,
      writeFailureRate: 0,
      writeFailureAfterApplyRate: 0,
    });
    engine.wrapper.enabled = true;
    this.#frozen.add(engine);
    this.#signalStopped(engine);
  }

  /** Lets a frozen engine go on: its hung calls now run against the store as it is. */
  thaw(engine: TestEngine): void {
    engine.wrapper.setFaults({ hangRate: 0 });
    engine.wrapper.enabled = false;
    engine.wrapper.releaseHung();
    this.#frozen.delete(engine);
    this.#stopSignals.delete(engine);
  }

  #frozen = new Set<TestEngine>();

  /** Engines that are neither crashed nor frozen. */
  get live(): TestEngine[] {
    return this.engines.filter((engine) => !this.#frozen.has(engine));
  }

  async shutdownAll(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.shutdown().catch(() => undefined)));
  }
}
