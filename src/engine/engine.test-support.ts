/**
 * Test driver for engine scenarios: a shared MemoryStorage, a SimulatedClock, manual background tasks and an
 * in-memory liveness oracle, so timing is instant and exact. Several engines created from one `TestWorld`
 * share the store exactly as tabs share IndexedDB.
 */
import { MemoryStorage } from '../storage/memory';
import type { Storage } from '../storage/types';
import { SimulatedClock, settle } from './clock';
import { createEngine, type Engine } from './engine';
import type { EngineEvent, EngineWarning } from './events';
import type { EngineOptions } from './options';
import { InMemoryLiveness } from './ownership/liveness';
import type { AnyWorkflowDefinition } from './workflow';

/** A seeded random source (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type TestEngine = Engine & { events: EngineEvent[]; warnings: EngineWarning[] };

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

  /** Creates an engine on the shared store (manual background tasks unless overridden). */
  async engine(
    workflows: readonly AnyWorkflowDefinition[],
    options: Partial<EngineOptions> = {},
  ): Promise<TestEngine> {
    const events: EngineEvent[] = [];
    const warnings: EngineWarning[] = [];
    const engine = (await createEngine({
      storage: this.storage,
      clock: this.clock,
      random: this.random,
      backgroundTasks: 'manual',
      engineId: `engine-${String.fromCharCode(65 + this.#names++)}`,
      workflows,
      onWarning: (warning) => warnings.push(warning),
      ...options,
    })) as TestEngine;
    engine.subscribe((event) => events.push(event));
    Object.assign(engine, { events, warnings });
    this.engines.push(engine);
    return engine;
  }

  /** Lets every engine finish what it is doing. */
  async idle(engines: readonly Engine[] = this.engines): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await settle();
      await Promise.all(engines.map((engine) => engine.idle().catch(() => undefined)));
    }
  }

  /** One maintenance pass on each engine (in order), then idle. */
  async maintain(engines: readonly Engine[] = this.engines): Promise<void> {
    for (const engine of engines) {
      await engine.runMaintenance().catch(() => undefined);
      await this.idle([engine]);
    }
    await this.idle(engines);
  }

  /** Moves time forward in steps of `stepMs`, running maintenance on the given engines after each step. */
  async advance(ms: number, options: { stepMs?: number; engines?: readonly Engine[] } = {}): Promise<void> {
    const step = options.stepMs ?? ms;
    let left = ms;
    while (left > 0) {
      const now = Math.min(step, left);
      await this.clock.advance(now);
      left -= now;
      await this.maintain(options.engines ?? this.engines);
    }
    if (ms === 0) await this.maintain(options.engines ?? this.engines);
  }

  async shutdownAll(): Promise<void> {
    await Promise.all(this.engines.map((engine) => engine.shutdown().catch(() => undefined)));
  }
}
