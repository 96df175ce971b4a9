/**
 * The randomised multi-engine simulation (ownership acceptance scenario 28; docs/ownership.md). A seeded
 * scheduler interleaves engine steps, crashes, freezes longer than the TTL, restarts, clock jumps, storage
 * faults, terminations and signals over one shared store, then lets the survivors finish. It checks, as every
 * write lands:
 *
 * - each replay-history slot and timeline slot (commit record) is written once and never rewritten;
 * - every write that replaces a checkpoint of a run appends the commit record that checkpoint names (what
 *   makes a run's commit, conditioned on that record's absence, a fenced write: workflow-writes.ts);
 * - every epoch's timeline entries came from one engine, and epoch keys only rose (never deleted);
 * - no terminal record was ever overwritten;
 *
 * and at the end, the five ownership invariants the studio's chaos drills check too (invariants.ts: epochs
 * only rose, one writer per epoch, no recorded operation ran twice, every workflow finished, no terminal
 * state overwritten), over every workflow's durable timeline and the refused writes; plus, from the
 * activities' own execution log, that each activity attempt ran at most once and none ran after a completed
 * one was recorded.
 *
 * Everything is reproducible from the seed; a failing run reports it.
 */
import { MemoryStorage } from '../../storage/memory';
import type { CommitGroup, Condition, Operation, ScanOptions, Storage } from '../../storage/types';
import { TestWorld, seededRandom, type TestEngine } from '../engine.test-support';
import type { EngineOptions } from '../options';
import { checkOwnershipInvariants, type WorkflowEvidence } from '../invariants';
import { describeStoredKey, keys } from '../keys';
import {
  decodeFenceRejection,
  decodeTimelineRecord,
  isTerminal,
  type Checkpoint,
  type TimelineEntry,
  type WorkflowRecord,
} from '../records';
import { defineWorkflow } from '../workflow';
import { commitRecordKey } from '../workflow-writes';

export type SimulationOptions = {
  seed: number;
  /** Engines alive at a time; default 3–5 from the seed. */
  engines?: number;
  /** Workflows started; default 50. */
  workflows?: number;
  /** Scheduler steps before the wind-down; default 250. */
  steps?: number;
  /** The shared store; default a MemoryStorage. */
  storage?: () => Storage | Promise<Storage>;
};

export type SimulationReport = {
  seed: number;
  ok: boolean;
  violations: string[];
  stats: {
    engines: number;
    workflows: number;
    crashes: number;
    freezes: number;
    restarts: number;
    clockJumps: number;
    terminations: number;
    signals: number;
    activityRuns: number;
    fenceRejections: number;
    takeovers: number;
    statuses: Record<string, number>;
  };
};

type Step =
  | { kind: 'activity'; ms: number; failFirst: number }
  | { kind: 'sleep'; ms: number }
  | { kind: 'signal'; ms: number }
  | { kind: 'all'; ms: number };

/** Sees every write that lands on the shared store, in the order it lands, and checks invariants. */
class AuditedStorage implements Storage {
  readonly capabilities: Storage['capabilities'];
  readonly violations: string[] = [];
  readonly #shadow = new Map<string, string>();
  readonly #epochOwners = new Map<string, string>();
  readonly watch?: Storage['watch'];
  readonly syncWatchers?: Storage['syncWatchers'];

  constructor(private readonly inner: Storage) {
    this.capabilities = inner.capabilities;
    if (inner.watch) this.watch = (prefix, listener) => inner.watch!(prefix, listener);
    if (inner.syncWatchers) this.syncWatchers = () => inner.syncWatchers!();
  }

  get(key: string) {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.inner.getMany(keys);
  }
  scan(prefix: string, options?: ScanOptions) {
    return this.inner.scan(prefix, options);
  }
  async batch(operations: readonly Operation[]) {
    await this.inner.batch(operations);
    this.#landed(operations);
  }
  async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    const ok = await this.inner.conditionalBatch(conditions, operations);
    if (ok) this.#landed(operations);
    return ok;
  }
  async commitGroups(groups: readonly CommitGroup[]) {
    const results = await this.inner.commitGroups!(groups);
    groups.forEach((group, index) => results[index] && this.#landed(group.operations));
    return results;
  }
  close() {
    return this.inner.close();
  }

  #violate(message: string) {
    if (this.violations.length < 50) this.violations.push(message);
  }

  #landed(operations: readonly Operation[]) {
    for (const operation of operations) {
      if (operation.type !== 'put' || !operation.key.startsWith(keys.checkpointPrefix)) continue;
      const previous = this.#shadow.get(operation.key);
      if (previous === undefined) continue;
      const before = JSON.parse(previous) as Checkpoint;
      if ((JSON.parse(operation.value) as Checkpoint).run !== before.run) continue;
      const workflowId = describeStoredKey(operation.key).workflowId ?? '?';
      const record = commitRecordKey(workflowId, before.run, before);
      if (!operations.some((other) => other.type === 'put' && other.key === record))
        this.#violate(`${operation.key} was replaced without appending ${record}`);
    }
    for (const operation of operations) {
      const { key } = operation;
      const { kind, workflowId } = describeStoredKey(key);
      const written = kind === 'history' || kind === 'timeline';
      const previous = this.#shadow.get(key);
      if (operation.type === 'delete') {
        if (kind === 'claim-epoch') this.#violate(`epoch key ${key} was deleted`);
        if (written) this.#violate(`${key} was deleted`);
        this.#shadow.delete(key);
        continue;
      }
      const value = operation.value;
      if (kind === 'claim-epoch' && previous !== undefined && !(Number(value) > Number(previous)))
        this.#violate(`epoch ${key} went from ${previous} to ${value}`);
      if (written && previous !== undefined && previous !== value)
        this.#violate(`${key} was rewritten:\n  was ${previous}\n  now ${value}`);
      if (kind === 'record' && previous !== undefined && previous !== value) {
        const before = JSON.parse(previous) as WorkflowRecord;
        const after = JSON.parse(value) as WorkflowRecord;
        if (isTerminal(before.status) && after.run === before.run)
          this.#violate(`terminal record ${key} (${before.status}) was overwritten with ${after.status}`);
      }
      if (kind === 'timeline')
        for (const entry of decodeTimelineRecord(key, value)) {
          const workflow = workflowId ?? '?';
          if (entry.epoch > 0) {
            const owner = this.#epochOwners.get(`${workflow}@${entry.epoch}`);
            if (owner !== undefined && owner !== entry.engineId)
              this.#violate(
                `workflow ${workflow} epoch ${entry.epoch} has timeline entries from ${owner} and ${entry.engineId} (${entry.kind})`,
              );
            this.#epochOwners.set(`${workflow}@${entry.epoch}`, entry.engineId);
          }
        }
      this.#shadow.set(key, value);
    }
  }
}

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const engineCount = options.engines ?? between(3, 5);
  const workflowCount = options.workflows ?? 50;
  const audited = new AuditedStorage((await options.storage?.()) ?? new MemoryStorage());
  const world = new TestWorld({ storage: audited, seed: options.seed });
  const executions: { workflowId: string; name: string; attempt: number }[] = [];
  const clock = world.clock;

  const work =
    (workflowId: string, name: string, ms: number, failFirst: number) =>
    ({ attempt, signal }: { attempt: number; signal: AbortSignal }) => {
      executions.push({ workflowId, name, attempt });
      return new Promise<string>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        clock.setTimeout(
          () =>
            attempt <= failFirst
              ? reject(new Error(`${name} attempt ${attempt} fails on purpose`))
              : resolve(`${name}#${attempt}`),
          ms,
        );
      });
    };
  const simulated = defineWorkflow({
    name: 'sim',
    version: 1,
    *run(ctx, input: { steps: Step[] }) {
      const retry = { maxAttempts: 50, initialIntervalMs: 200, maxIntervalMs: 1000 };
      for (const [index, step] of input.steps.entries()) {
        ctx.state.step = index;
        if (step.kind === 'activity')
          yield* ctx.activity(`a${index}`, work(ctx.workflowId, `a${index}`, step.ms, step.failFirst), {
            retry,
          });
        else if (step.kind === 'sleep') yield* ctx.sleep(step.ms);
        else if (step.kind === 'signal') yield* ctx.waitForSignal('go', { timeoutMs: step.ms });
        else
          yield* ctx.all([
            ctx.activity(`p${index}a`, work(ctx.workflowId, `p${index}a`, step.ms, 0), { retry }),
            ctx.activity(`p${index}b`, work(ctx.workflowId, `p${index}b`, step.ms / 2, 1), { retry }),
            ctx.sleep(step.ms),
          ]);
      }
      return 'done';
    },
  });

  const stats: SimulationReport['stats'] = {
    engines: 0,
    workflows: workflowCount,
    crashes: 0,
    freezes: 0,
    restarts: 0,
    clockJumps: 0,
    terminations: 0,
    signals: 0,
    activityRuns: 0,
    fenceRejections: 0,
    takeovers: 0,
    statuses: {},
  };
  const everyEngine: TestEngine[] = [];
  const start = async () => {
    const engine = await world.engine([simulated], { ...fencing, liveness: world.liveness });
    everyEngine.push(engine);
    stats.engines++;
    return engine;
  };
  const thawAt = new Map<TestEngine, number>();
  for (let i = 0; i < engineCount; i++) await start();

  const ids = Array.from({ length: workflowCount }, (_, i) => `wf-${i}`);
  for (const id of ids) {
    const steps: Step[] = Array.from({ length: between(3, 7) }, () => {
      const roll = random();
      if (roll < 0.45)
        return { kind: 'activity', ms: between(0, 600), failFirst: random() < 0.25 ? between(1, 2) : 0 };
      if (roll < 0.65) return { kind: 'sleep', ms: between(0, 2000) };
      if (roll < 0.85) return { kind: 'signal', ms: between(1000, 6000) };
      return { kind: 'all', ms: between(100, 800) };
    });
    await pick(world.live)
      .start(simulated, { steps }, { id })
      .catch(() => undefined);
  }
  // Starts that failed (a storage fault) are retried, so that every id exists.
  const live = () => world.live.filter((engine) => !thawAt.has(engine));
  const ensureStarted = async () => {
    for (const id of ids)
      if ((await audited.get(keys.record(id))) === null)
        await pick(live())
          .start(simulated, { steps: [{ kind: 'sleep', ms: 10 }] }, { id })
          .catch(() => undefined);
  };
  await ensureStarted();

  const steps = options.steps ?? 250;
  for (let step = 0; step < steps; step++) {
    for (const [engine, at] of thawAt)
      if (clock.now() >= at) {
        world.thaw(engine);
        thawAt.delete(engine);
      }
    const roll = random();
    const alive = live();
    if (roll < 0.4 || alive.length === 0) {
      await clock.advance(between(50, 400));
      await world.maintain(alive.sort(() => random() - 0.5));
    } else if (roll < 0.47 && alive.length > 1) {
      world.crash(pick(alive));
      stats.crashes++;
    } else if (roll < 0.55 && world.engines.length < engineCount + 1) {
      await start();
      stats.restarts++;
    } else if (roll < 0.6 && alive.length > 1) {
      const engine = pick(alive);
      world.freeze(engine);
      thawAt.set(engine, clock.now() + between(5500, 9000));
      stats.freezes++;
    } else if (roll < 0.64) {
      await clock.advance(between(2000, 7000));
      stats.clockJumps++;
      await world.maintain(alive);
    } else if (roll < 0.7) {
      const engine = pick(alive);
      const rate = random() < 0.5 ? 0 : random() * 0.08;
      engine.wrapper.setFaults({
        readFailureRate: rate,
        writeFailureRate: rate,
        writeFailureAfterApplyRate: rate,
        hangRate: 0,
      });
      engine.wrapper.enabled = rate > 0;
    } else if (roll < 0.72) {
      await pick(alive)
        .terminate(pick(ids), 'simulation')
        .then(() => stats.terminations++)
        .catch(() => undefined);
    } else {
      const id = pick(ids);
      await pick(alive)
        .signal(id, 'go', step)
        .then(() => stats.signals++)
        .catch(() => undefined);
    }
  }

  // Wind-down: faults off, frozen engines thawed, enough engines alive; then let everything finish.
  for (const engine of [...thawAt.keys()]) world.thaw(engine);
  thawAt.clear();
  for (const engine of world.engines) engine.wrapper.enabled = false;
  while (world.engines.length < 2) await start();
  await ensureStarted();
  let unfinished: string[] = ids;
  for (let round = 0; round < 400 && unfinished.length > 0; round++) {
    await clock.advance(500);
    await world.maintain();
    await world.idle();
    const records = await audited.getMany(unfinished.map((id) => keys.record(id)));
    unfinished = unfinished.filter((_, index) => {
      const raw = records[index];
      return !raw || !isTerminal((JSON.parse(raw) as WorkflowRecord).status);
    });
    if (round % 4 === 0)
      for (const id of unfinished) await world.engines[0]!.signal(id, 'go', -1).catch(() => undefined);
  }

  const violations = [...audited.violations];
  if (unfinished.length > 0)
    violations.push(
      `stranded (not terminal at the end): ${unfinished.slice(0, 10).join(', ')}${unfinished.length > 10 ? ', …' : ''}`,
    );
  // Activity executions against the durable timelines.
  const byActivity = new Map<string, number[]>();
  for (const run of executions) {
    const key = `${run.workflowId}/${run.name}`;
    byActivity.set(key, [...(byActivity.get(key) ?? []), run.attempt]);
  }
  const evidence: WorkflowEvidence[] = [];
  for (const id of ids) {
    const timeline = await world.engines[0]!.timeline(id).catch(() => [] as TimelineEntry[]);
    const record = JSON.parse((await audited.get(keys.record(id))) ?? '{}') as WorkflowRecord;
    evidence.push({ workflowId: id, status: record.status, timeline });
    stats.statuses[record.status] = (stats.statuses[record.status] ?? 0) + 1;
    stats.takeovers += timeline.filter((entry) => entry.kind === 'claim-taken-over').length;
    for (const entry of timeline) {
      if (entry.kind !== 'activity-completed') continue;
      const attempts = byActivity.get(`${id}/${entry.detail.name}`) ?? [];
      const completed = entry.detail.attempt;
      const later = attempts.filter((attempt) => attempt > completed);
      if (later.length > 0)
        violations.push(
          `${id}/${entry.detail.name} ran attempt(s) ${later.join(', ')} after attempt ${completed} was recorded as completed`,
        );
    }
  }
  for (const [key, attempts] of byActivity) {
    stats.activityRuns += attempts.length;
    const seen = new Set<number>();
    for (const attempt of attempts) {
      if (seen.has(attempt)) violations.push(`${key} attempt ${attempt} ran more than once`);
      seen.add(attempt);
    }
  }
  const rejections = (await audited.scan(keys.fenceRejectionsPrefix)).map(({ key, value }) =>
    decodeFenceRejection(key, value),
  );
  stats.fenceRejections = rejections.length;
  for (const result of checkOwnershipInvariants(evidence, rejections))
    if (!result.ok) violations.push(...result.violations.map((violation) => `${result.title}: ${violation}`));
  await world.shutdownAll();
  return { seed: options.seed, ok: violations.length === 0, violations, stats };
}
