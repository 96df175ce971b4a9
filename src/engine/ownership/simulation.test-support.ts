/**
 * The randomised multi-engine simulation (ownership acceptance scenario 28; docs/ownership.md). A seeded
 * scheduler interleaves engine steps, crashes, freezes longer than the TTL, restarts, clock jumps, storage
 * faults, terminations and signals over one shared store — and the engine's newer features: schedules (a
 * cron every few seconds of simulated time, paused and resumed), purges of finished workflows and of earlier
 * runs, new runs of finished ids (run history), idempotent starts with one key from several engines at once,
 * signal-with-start from several engines, and external activities completed or failed from a random engine
 * at a random time, sometimes twice — then lets the survivors finish.
 *
 * As every write lands, the audited store (simulation-audit.test-support.ts) checks log slots written once
 * and deleted only by a purge of their run, checkpoint replacements appending their commit record, one
 * engine per epoch, epochs only rising, no terminal record overwritten, records and earlier runs deleted only
 * by a purge of a finished workflow, nothing of a purged workflow or run written afterwards (no late owner
 * resurrects it), each schedule slot started once and only with its schedule unpaused, idempotency keys never
 * rewritten.
 *
 * At the end, from the durable record: the five ownership invariants the studio's chaos drills check too
 * (invariants.ts), over every run of every workflow and the refused writes; from the activities' own
 * execution log, that each attempt ran at most once and none ran after a completed one was recorded; that a
 * purged workflow left no key but its epoch, and a purged run none; that every earlier run not purged is
 * readable with `describe(id, { run })`; that each idempotency key maps to exactly one workflow; that every
 * signal sent with signal-with-start was consumed exactly once, by the run it was delivered to; that each
 * external activity accepted one completion, which its run recorded (and every accepted failure too), and
 * that a completion after an accepted one was refused with `ActivityCompletionRefusedError`.
 *
 * Everything is reproducible from the seed; a failing run reports it.
 */
import { isStorageError } from '../../storage/errors';
import { MemoryStorage } from '../../storage/memory';
import type { Storage } from '../../storage/types';
import { TestWorld, seededRandom, type TestEngine } from '../engine.test-support';
import type { JsonObject } from '../codec';
import { parseCompletionToken } from '../external-activities';
import type { WorkflowDescription } from '../inspect';
import { checkOwnershipInvariants, type WorkflowEvidence } from '../invariants';
import { describeStoredKey, keys, unescapeId } from '../keys';
import type { EngineOptions } from '../options';
import { decodeFenceRejection, isTerminal, type TimelineEntry, type WorkflowRecord } from '../records';
import { decodeTombstone } from '../purge';
import type { ScheduleRecord } from '../schedules/records';
import type { ActivityContext } from '../workflow';
import { defineWorkflow } from '../workflow';
import { AuditedStorage } from './simulation-audit.test-support';

export type SimulationOptions = {
  seed: number;
  /** Engines alive at a time; default 3–5 from the seed. */
  engines?: number;
  /**
   * Workflows started at the beginning; default 30 (reruns, schedules, idempotent starts and signal-with-start
   * add more).
   */
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
    schedules: number;
    scheduledStarts: number;
    purges: number;
    runPurges: number;
    purgesRefused: number;
    reruns: number;
    idempotentStarts: number;
    signalsWithStart: number;
    externalCompletions: number;
    completionsRefused: number;
    /** Times every engine's held set was compared with the stored holders after a pass. */
    heldSetChecks: number;
    /** Collector runs that ended by continuing as new. */
    continuedAsNew: number;
  };
};

type Step =
  | { kind: 'activity'; ms: number; failFirst: number }
  | { kind: 'sleep'; ms: number }
  | { kind: 'signal'; ms: number }
  | { kind: 'all'; ms: number }
  | { kind: 'external' };

/** `gen` numbers every start the simulation makes, so each run's activities are told apart. */
type SimInput = { steps: Step[]; gen: number };

/** One call of completeActivity / failActivity, in the order they were issued. */
type CompletionCall = {
  kind: 'complete' | 'fail';
  nonce: string;
  engineId: string;
  /** An earlier call of this token had been accepted (a complete) when this one was issued. */
  afterAccepted: boolean;
  outcome: 'pending' | 'ok' | 'refused' | 'not-found' | 'uncertain' | 'error';
  error?: string;
};

type TokenInfo = { workflowId: string; run: number; name: string; calls: CompletionCall[] };

/** One run of a workflow as stored at the end. */
type RunView = { run: number; record: WorkflowDescription; timeline: TimelineEntry[] };

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

const collectorCount = 3;
const idempotencyKeyCount = 5;
const maxSchedules = 2;
const scheduleEverySeconds = [10, 12, 15, 20];

const errorName = (error: unknown) => (error instanceof Error ? error.name : typeof error);
const injectedFault = (error: unknown) => isStorageError(error) && error.code === 'injected-fault';

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const engineCount = options.engines ?? between(3, 5);
  const workflowCount = options.workflows ?? 30;
  const audited = new AuditedStorage((await options.storage?.()) ?? new MemoryStorage());
  const world = new TestWorld({ storage: audited, seed: options.seed });
  audited.takeovers = {
    now: () => world.clock.now(),
    isGone: (engineId) => !world.liveness.isAlive(engineId),
    graceMs: 2 * fencing.workflowClaimRenewIntervalMs,
    renewIntervalMs: fencing.workflowClaimRenewIntervalMs,
  };
  const executions: { workflowId: string; gen: number; name: string; attempt: number }[] = [];
  const tokens = new Map<string, TokenInfo>();
  const clock = world.clock;
  const violations: string[] = [];
  const violate = (message: string) => {
    if (violations.length < 100) violations.push(message);
  };

  const work =
    (workflowId: string, gen: number, name: string, ms: number, failFirst: number) =>
    ({ attempt, signal }: ActivityContext) => {
      executions.push({ workflowId, gen, name, attempt });
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
  /** An external activity's function: it hands its token to the simulation, which completes it later. */
  const handOut =
    (workflowId: string, gen: number, name: string) =>
    ({ attempt, completionToken }: ActivityContext) => {
      executions.push({ workflowId, gen, name, attempt });
      if (completionToken === undefined) return;
      let info = tokens.get(completionToken);
      if (!info) {
        info = { workflowId, run: parseCompletionToken(completionToken).run, name, calls: [] };
        tokens.set(completionToken, info);
      }
      scheduleCompletion(completionToken, info);
    };
  const simulated = defineWorkflow({
    name: 'sim',
    version: 1,
    *run(ctx, input: SimInput) {
      const retry = { maxAttempts: 50, initialIntervalMs: 200, maxIntervalMs: 1000 };
      const { gen } = input;
      for (const [index, step] of input.steps.entries()) {
        ctx.state.step = index;
        if (step.kind === 'activity')
          yield* ctx.activity(`a${index}`, work(ctx.workflowId, gen, `a${index}`, step.ms, step.failFirst), {
            retry,
          });
        else if (step.kind === 'sleep') yield* ctx.sleep(step.ms);
        else if (step.kind === 'signal') yield* ctx.waitForSignal('go', { timeoutMs: step.ms });
        else if (step.kind === 'external') {
          const name = `e${index}`;
          const value = yield* ctx.activity(name, handOut(ctx.workflowId, gen, name), {
            completion: 'external',
            retry,
          });
          ctx.state.ext = { ...((ctx.state.ext as JsonObject | undefined) ?? {}), [name]: value ?? null };
        } else
          yield* ctx.all([
            ctx.activity(`p${index}a`, work(ctx.workflowId, gen, `p${index}a`, step.ms, 0), { retry }),
            ctx.activity(`p${index}b`, work(ctx.workflowId, gen, `p${index}b`, step.ms / 2, 1), { retry }),
            ctx.sleep(step.ms),
          ]);
      }
      return 'done';
    },
  });
  /**
   * Collects `item` signals until one says `stop`; returns them in the order consumed. Every two items it
   * continues as new, carrying what it collected: the signals sent meanwhile stay buffered for the next run.
   */
  const collector = defineWorkflow({
    name: 'collector',
    version: 1,
    *run(ctx, input: { items?: string[] } | undefined) {
      const items: string[] = [...(input?.items ?? [])];
      for (let taken = 0; ; taken++) {
        if (taken === 2) return yield* ctx.continueAsNew({ items });
        const item = yield* ctx.waitForSignal<string>('item');
        if (item === 'stop') return items;
        items.push(String(item));
        ctx.state.items = items.length;
      }
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
    schedules: 0,
    scheduledStarts: 0,
    purges: 0,
    runPurges: 0,
    purgesRefused: 0,
    reruns: 0,
    idempotentStarts: 0,
    signalsWithStart: 0,
    externalCompletions: 0,
    completionsRefused: 0,
    heldSetChecks: 0,
    continuedAsNew: 0,
  };
  let nonces = 0;
  /** One completeActivity / failActivity call, noted when issued and settled when it answers. */
  const completeOne = async (
    engine: TestEngine,
    token: string,
    info: TokenInfo,
    kind: 'complete' | 'fail',
  ) => {
    const nonce = `${kind}-${nonces++}`;
    const afterAccepted = info.calls.some((call) => call.kind === 'complete' && call.outcome === 'ok');
    const faulty = engine.wrapper.enabled;
    const call: CompletionCall = { kind, nonce, engineId: engine.id, afterAccepted, outcome: 'pending' };
    info.calls.push(call);
    try {
      if (kind === 'complete') await engine.completeActivity(token, nonce);
      else await engine.failActivity(token, new Error(`sim-fail ${nonce}`));
      call.outcome = 'ok';
      stats.externalCompletions++;
    } catch (error) {
      const name = errorName(error);
      call.error = `${name}: ${error instanceof Error ? error.message : String(error)}`;
      if (name === 'ActivityCompletionRefusedError') {
        call.outcome = 'refused';
        stats.completionsRefused++;
      } else if (name === 'WorkflowNotFoundError') call.outcome = 'not-found';
      // A fault injected on purpose is no engine error, even when the engine's faults were switched on only
      // while the call was in flight (they were off when it was issued).
      else call.outcome = faulty || injectedFault(error) ? 'uncertain' : 'error';
    }
  };
  /**
   * Each time an external activity's function runs, its token is completed (or, one time in four, failed)
   * at a random later time by a random engine — a frozen one answers when it thaws — and one time in three
   * a second call follows, at once from another engine or later.
   */
  const scheduleCompletion = (token: string, info: TokenInfo) => {
    const kind = (): 'complete' | 'fail' => (random() < 0.25 ? 'fail' : 'complete');
    const fire = () => {
      if (world.engines.length > 0) void completeOne(pick(world.engines), token, info, kind());
    };
    clock.setTimeout(
      () => {
        fire();
        const again = random();
        if (again < 0.15) fire();
        else if (again < 0.3) clock.setTimeout(fire, between(0, 3000));
      },
      between(100, 4000),
    );
  };
  const everyEngine: TestEngine[] = [];
  const start = async () => {
    const engine = await world.engine([simulated, collector], { ...fencing, liveness: world.liveness });
    everyEngine.push(engine);
    stats.engines++;
    return engine;
  };
  const thawAt = new Map<TestEngine, number>();
  for (let i = 0; i < engineCount; i++) await start();

  /**
   * The held-set invariant: what an engine believes it holds follows the store within one pass. After each
   * maintenance round, the workflows an engine holds whose stored holder names another engine or none are
   * noted, with the engine's count of renewal passes then. One still so once the engine has completed two
   * more renewal passes — so at least one that began after it was noted (a pass in flight when it was noted,
   * or shared with a call made before a freeze, may have read its notices earlier) — is a violation: the
   * engine missed a displacement (a rotation, purge or takeover it was not told of).
   */
  const staleSince = new Map<TestEngine, Map<string, number>>();
  /** Engines whose storage faults were switched on since their last check. */
  const faultedSinceCheck = new Set<TestEngine>();
  const maintain = async (engines: readonly TestEngine[] = world.live) => {
    await world.maintain(engines);
    stats.heldSetChecks++;
    for (const engine of engines) {
      if (!world.live.includes(engine)) continue; // crashed or frozen meanwhile
      const held = engine.ownedWorkflows();
      const holders = await audited.getMany(held.map((id) => keys.ownerHolder(id)));
      const renewals = engine.metrics().renewals;
      const noted = staleSince.get(engine) ?? new Map<string, number>();
      const faulty = engine.wrapper.enabled || faultedSinceCheck.has(engine);
      if (!engine.wrapper.enabled) faultedSinceCheck.delete(engine);
      const stale = new Map<string, number>();
      held.forEach((id, index) => {
        const raw = holders[index] ?? null;
        const holder = raw === null ? null : (JSON.parse(raw) as { engineId: string });
        if (holder?.engineId === engine.id) return;
        // Passes with storage faults do not count: the notices' read may have failed.
        const since = faulty ? renewals : (noted.get(id) ?? renewals);
        stale.set(id, since);
        if (renewals - since >= 2)
          violate(
            `held set: ${engine.id} still held ${id} two renewal passes after its stored holder named ${holder ? `engine ${holder.engineId}` : 'no one'} (at ${clock.now()})`,
          );
      });
      staleSince.set(engine, stale);
    }
  };

  let gen = 0;
  const randomSteps = (low: number, high: number): Step[] =>
    Array.from({ length: between(low, high) }, () => {
      const roll = random();
      if (roll < 0.4)
        return { kind: 'activity', ms: between(0, 600), failFirst: random() < 0.25 ? between(1, 2) : 0 };
      if (roll < 0.58) return { kind: 'sleep', ms: between(0, 2000) };
      if (roll < 0.76) return { kind: 'signal', ms: between(1000, 6000) };
      if (roll < 0.88) return { kind: 'external' };
      return { kind: 'all', ms: between(100, 800) };
    });
  const readRecord = async (id: string): Promise<WorkflowRecord | null> => {
    const raw = await audited.get(keys.record(id));
    return raw === null ? null : (JSON.parse(raw) as WorkflowRecord);
  };

  const ids = Array.from({ length: workflowCount }, (_, i) => `wf-${i}`);
  for (const id of ids)
    await pick(world.live)
      .start(simulated, { steps: randomSteps(3, 7), gen: gen++ }, { id })
      .catch(() => undefined);
  // Starts that failed (a storage fault) are retried, so that every id exists (a purged one stays gone).
  const live = () => world.live.filter((engine) => !thawAt.has(engine));
  const ensureStarted = async () => {
    for (const id of ids)
      if (!audited.purgedWorkflows.has(id) && (await audited.get(keys.record(id))) === null)
        await pick(live())
          .start(simulated, { steps: [{ kind: 'sleep', ms: 10 }], gen: gen++ }, { id })
          .catch(() => undefined);
  };
  await ensureStarted();

  // What the operations on the newer features did, for the end checks.
  const schedules = new Map<string, number>(); // name → every N seconds
  const idempotent = new Map<string, { workflowId: string; run: number }[]>(); // key → runs returned
  let idemCalls = 0;
  const collectors = Array.from({ length: collectorCount }, (_, i) => `sws-${i}`);
  const closing = new Set<string>();
  /** Items sent with signal-with-start: the run it reported, or null when the call failed (maybe landed). */
  const sent: { workflowId: string; payload: string; run: number | null; started: boolean }[] = [];
  /** Distinct live engines, one to three of them. */
  const someEngines = (alive: readonly TestEngine[]) =>
    [...alive].sort(() => random() - 0.5).slice(0, Math.min(alive.length, between(1, 3)));

  const scheduleOp = async (alive: readonly TestEngine[]) => {
    const engine = pick(alive);
    if (schedules.size < maxSchedules && (schedules.size === 0 || random() < 0.4)) {
      const name = `sched-${schedules.size}`;
      const every = pick(scheduleEverySeconds);
      await engine
        .schedule(name, {
          cron: `*/${every} * * * * *`,
          workflow: simulated,
          // One short activity: a slot's run is cheap, and often still running at the next slot (overlap).
          input: { steps: [{ kind: 'activity', ms: between(100, 2000), failFirst: 0 }], gen: gen++ },
          overlap: pick(['skip', 'buffer-one', 'allow'] as const),
          catchUp: pick(['none', 'latest', 'all'] as const),
        })
        .catch(() => undefined);
      // A create that failed may still have landed: the stored record says.
      const raw = await audited.get(keys.schedule(name));
      if (raw !== null) {
        const cron = (JSON.parse(raw) as ScheduleRecord).spec.cron;
        schedules.set(name, Number(/^\*\/(\d+) /.exec(cron)![1]));
        stats.schedules++;
      }
      return;
    }
    const name = pick([...schedules.keys()]);
    await (random() < 0.5 ? engine.pauseSchedule(name) : engine.resumeSchedule(name)).catch(() => undefined);
  };

  const purgeOp = async (alive: readonly TestEngine[]) => {
    const candidates = [...new Set(audited.creations.map((creation) => creation.workflowId))].filter(
      (id) => !audited.purgedWorkflows.has(id) && !collectors.includes(id),
    );
    if (candidates.length === 0) return;
    // Often one a frozen engine still believes it drives (its late writes must not bring it back), or one
    // with earlier runs; else any.
    const rerun = new Set(audited.creations.filter((creation) => creation.run > 1).map((c) => c.workflowId));
    const zombies = new Set([...thawAt.keys()].flatMap((engine) => engine.ownedWorkflows()));
    const haunted = candidates.filter((id) => zombies.has(id));
    const withRuns = candidates.filter((id) => rerun.has(id));
    const roll = random();
    const id =
      haunted.length > 0 && roll < 0.5
        ? pick(haunted)
        : withRuns.length > 0 && roll < 0.75
          ? pick(withRuns)
          : pick(candidates);
    const record = await readRecord(id);
    if (!record) return;
    const earlier = Array.from({ length: record.run - 1 }, (_, i) => i + 1).filter(
      (run) => !audited.purgedRuns.has(`${id}#${run}`),
    );
    const run = earlier.length > 0 && random() < 0.5 ? pick(earlier) : undefined;
    await pick(alive)
      .purge(id, run === undefined ? {} : { run })
      .then(() => (run === undefined ? stats.purges++ : stats.runPurges++))
      .catch((error: unknown) => {
        if (errorName(error) === 'InvalidWorkflowStateError') stats.purgesRefused++;
      });
  };

  /** A finished workflow of the main set is started again: its next run. */
  const rerunOp = async (alive: readonly TestEngine[]) => {
    const raws = await audited.getMany(ids.map((id) => keys.record(id)));
    const finished = raws.flatMap((raw) => {
      const record = raw ? (JSON.parse(raw) as WorkflowRecord) : null;
      return record && isTerminal(record.status) ? [record] : [];
    });
    if (finished.length === 0) return;
    const record = pick(finished);
    const id = record.id;
    await pick(alive)
      .start(simulated, { steps: randomSteps(1, 3), gen: gen++ }, { id })
      .then((handle) => {
        stats.reruns++;
        if (handle.run !== record.run + 1)
          violate(`${id} was started again as run ${handle.run}; its latest run was ${record.run}`);
      })
      .catch(() => undefined);
  };

  const idempotentOp = async (alive: readonly TestEngine[]) => {
    const key = `key-${between(0, idempotencyKeyCount - 1)}`;
    const results = await Promise.all(
      someEngines(alive).map((engine) =>
        engine
          .start(
            simulated,
            { steps: randomSteps(1, 2), gen: gen++ },
            { id: `idem-${key}-${idemCalls++}`, idempotencyKey: key },
          )
          .then((handle) => ({ workflowId: handle.workflowId, run: handle.run! }))
          .catch(() => null),
      ),
    );
    for (const result of results)
      if (result) {
        idempotent.set(key, [...(idempotent.get(key) ?? []), result]);
        stats.idempotentStarts++;
      }
  };

  const signalWithStartOp = async (alive: readonly TestEngine[]) => {
    const id = pick(collectors);
    const record = await readRecord(id);
    if (closing.has(id)) {
      if (!record || !isTerminal(record.status)) return;
      closing.delete(id);
    }
    if (record && !isTerminal(record.status) && random() < 0.25) {
      // Ends the run; no item is sent to this id until it has ended (a later item starts the next run).
      closing.add(id);
      await pick(alive)
        .signal(id, 'item', 'stop')
        .catch(() => undefined);
      return;
    }
    await Promise.all(
      someEngines(alive).map((engine) => {
        const payload = `item-${nonces++}`;
        return engine
          .signalWithStart(collector, undefined, 'item', payload, { id })
          .then((handle) => {
            sent.push({ workflowId: id, payload, run: handle.run!, started: handle.started });
            stats.signalsWithStart++;
          })
          .catch(() => sent.push({ workflowId: id, payload, run: null, started: false }));
      }),
    );
  };

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
      await maintain(alive.sort(() => random() - 0.5));
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
      await maintain(alive);
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
      if (rate > 0) faultedSinceCheck.add(engine);
    } else if (roll < 0.72) {
      await pick(alive)
        .terminate(pick(ids), 'simulation')
        .then(() => stats.terminations++)
        .catch(() => undefined);
    } else if (roll < 0.86) {
      const id = pick(ids);
      await pick(alive)
        .signal(id, 'go', step)
        .then(() => stats.signals++)
        .catch(() => undefined);
    } else if (roll < 0.88) await scheduleOp(alive);
    else if (roll < 0.91) await purgeOp(alive);
    else if (roll < 0.94) await rerunOp(alive);
    else if (roll < 0.97) await idempotentOp(alive);
    else await signalWithStartOp(alive);
  }

  // Wind-down: faults off, frozen engines thawed, enough engines alive, schedules paused; then let everything
  // finish: signals for those that wait, the last items' stop for the collectors, completions for external
  // activities still waiting.
  for (const engine of [...thawAt.keys()]) world.thaw(engine);
  thawAt.clear();
  for (const engine of world.engines) engine.wrapper.enabled = false;
  while (world.engines.length < 2) await start();
  for (const name of schedules.keys())
    for (let attempt = 0; attempt < 3; attempt++)
      if (
        await world.engines[0]!.pauseSchedule(name).then(
          () => true,
          () => false,
        )
      )
        break;
  await ensureStarted();
  const existing = () => [...new Set(audited.creations.map((creation) => creation.workflowId))];
  // Rounds settle turns but do not wait for running activities (world.idle would): an activity started by
  // this round's timers waits for simulated time, and an external one for its completion.
  let unfinished: string[] = existing();
  for (let round = 0; round < 400 && unfinished.length > 0; round++) {
    await clock.advance(500);
    // A turn of the event loop, as real time gives every process: the engines' work scheduled as a task
    // (a group commit gathered with setImmediate) runs. The rest of the simulation settles microtasks only,
    // so such a commit could otherwise wait through the whole wind-down (seed 2714: an external completion).
    await new Promise((resolve) => setImmediate(resolve));
    await maintain();
    const candidates = existing().filter((id) => !audited.purgedWorkflows.has(id));
    const records = await audited.getMany(candidates.map((id) => keys.record(id)));
    const open = new Map<string, WorkflowRecord>();
    candidates.forEach((id, index) => {
      const raw = records[index];
      const record = raw ? (JSON.parse(raw) as WorkflowRecord) : null;
      if (record && !isTerminal(record.status)) open.set(id, record);
    });
    unfinished = [...open.keys()];
    for (const [token, info] of tokens) {
      const record = open.get(info.workflowId);
      if (!record || record.run !== info.run) continue;
      // A call made by an engine that crashed before it answered never will (its storage calls hang for
      // good): it may or may not have landed, and no longer holds the activity back.
      for (const call of info.calls)
        if (call.outcome === 'pending' && !world.engines.some((engine) => engine.id === call.engineId)) {
          call.outcome = 'uncertain';
          call.error = 'its engine crashed before it answered';
        }
      if (
        info.calls.some(
          (call) => call.outcome === 'pending' || (call.kind === 'complete' && call.outcome === 'ok'),
        )
      )
        continue;
      await completeOne(pick(world.engines), token, info, 'complete');
    }
    if (round % 4 === 0)
      for (const [id, record] of open)
        await world.engines[0]!.signal(
          id,
          record.type === 'collector' ? 'item' : 'go',
          record.type === 'collector' ? 'stop' : -1,
        ).catch(() => undefined);
  }
  // Purges cut short (an engine crashed half-way) are finished by the next sweep of any engine.
  await clock.advance(61_000);
  await world.maintain();

  violations.push(...audited.violations);
  if (unfinished.length > 0)
    violate(
      `stranded (not terminal at the end): ${unfinished.slice(0, 10).join(', ')}${unfinished.length > 10 ? ', …' : ''}`,
    );

  // Every run of every workflow, as stored now.
  const observer = world.engines[0]!;
  const runs = new Map<string, RunView[]>();
  for (const { value } of await audited.scan(keys.recordPrefix)) {
    const latest = JSON.parse(value) as WorkflowRecord;
    const views: RunView[] = [];
    for (let run = 1; run <= latest.run; run++) {
      const purged = audited.purgedRuns.has(`${latest.id}#${run}`);
      const described = await observer.describe(latest.id, { run }).then(
        (record) => record,
        (error: unknown) => error,
      );
      if (purged) {
        if (errorName(described) !== 'WorkflowNotFoundError')
          violate(
            `run ${run} of ${latest.id} was purged, yet describe(id, { run }) gave ${errorName(described)}`,
          );
        continue;
      }
      if (described instanceof Error || typeof described !== 'object' || described === null) {
        violate(`run ${run} of ${latest.id} is not readable: ${String(described)}`);
        continue;
      }
      const record = described as WorkflowDescription;
      if (record.run !== run) violate(`describe(${latest.id}, { run: ${run} }) answered run ${record.run}`);
      if (run < latest.run && !isTerminal(record.status))
        violate(`earlier run ${run} of ${latest.id} is ${record.status}`);
      const timeline = await observer.timeline(latest.id, { run }).catch(() => [] as TimelineEntry[]);
      if (timeline[0]?.kind !== 'started' && timeline[0]?.kind !== 'scheduled')
        violate(`the timeline of run ${run} of ${latest.id} does not begin with its start`);
      views.push({ run, record, timeline });
    }
    runs.set(latest.id, views);
  }

  // Activity executions against the durable timelines.
  const byActivity = new Map<string, number[]>();
  for (const run of executions) {
    const key = `${run.workflowId}/${run.gen}/${run.name}`;
    byActivity.set(key, [...(byActivity.get(key) ?? []), run.attempt]);
  }
  const evidence: WorkflowEvidence[] = [];
  for (const [id, views] of runs)
    for (const { run, record, timeline } of views) {
      const latest = run === views[views.length - 1]!.run;
      evidence.push({ workflowId: latest ? id : `${id}#${run}`, status: record.status, timeline });
      if (latest) stats.statuses[record.status] = (stats.statuses[record.status] ?? 0) + 1;
      stats.takeovers += timeline.filter((entry) => entry.kind === 'claim-taken-over').length;
      const gen = (record.input as SimInput | undefined)?.gen;
      for (const entry of timeline) {
        if (entry.kind !== 'activity-completed' || gen === undefined) continue;
        const attempts = byActivity.get(`${id}/${gen}/${entry.detail.name}`) ?? [];
        const completed = entry.detail.attempt;
        const later = attempts.filter((attempt) => attempt > completed);
        if (later.length > 0)
          violate(
            `${id} run ${run}/${entry.detail.name} ran attempt(s) ${later.join(', ')} after attempt ${completed} was recorded as completed`,
          );
      }
    }
  for (const [key, attempts] of byActivity) {
    stats.activityRuns += attempts.length;
    const seen = new Set<number>();
    for (const attempt of attempts) {
      if (seen.has(attempt)) violate(`${key} attempt ${attempt} ran more than once`);
      seen.add(attempt);
    }
  }
  const rejections = (await audited.scan(keys.fenceRejectionsPrefix)).map(({ key, value }) =>
    decodeFenceRejection(key, value),
  );
  stats.fenceRejections = rejections.length;
  for (const result of checkOwnershipInvariants(evidence, rejections))
    if (!result.ok) violations.push(...result.violations.map((violation) => `${result.title}: ${violation}`));

  // Purges: a purged workflow keeps only its epoch and tombstones; a purged run keeps only tombstones; no
  // purge is left half-done.
  const left = new Map<string, string[]>();
  for (const { key, value } of await audited.scan('')) {
    const { kind, workflowId } = describeStoredKey(key);
    if (kind === 'purge') violate(`purge marker ${key} was never finished`);
    // Its epoch stays; so does the record of a late owner's write refused after the purge (kept on purpose),
    // and the tombstones of the records that opened an epoch (a late owner's commit meets them).
    // A displacement notice is its engine's mail, not the workflow's: one addressed to a live engine must
    // have been read by its last pass; one to a crashed engine stays until its session is pruned.
    if (kind === 'claim-notice') {
      const addressee = unescapeId(key.slice(keys.ownerNoticesPrefix.length).split(':')[0]!);
      if (world.engines.some((engine) => engine.id === addressee))
        violate(`notice ${key} to a live engine was never read`);
      continue;
    }
    if (workflowId === null || kind === 'claim-epoch' || kind === 'fence-rejection') continue;
    if (kind === 'timeline' && decodeTombstone(value) !== undefined) continue;
    if (audited.purgedWorkflows.has(workflowId)) left.set(workflowId, [...(left.get(workflowId) ?? []), key]);
    else if (kind === 'timeline' || kind === 'history' || kind === 'past-run') {
      const run = Number(key.slice(key.indexOf(':') + 1).split(':')[1]);
      if (audited.purgedRuns.has(`${workflowId}#${run}`)) violate(`${key} outlived the purge of its run`);
    }
  }
  for (const [id, found] of left)
    violate(`purged workflow ${id} still has ${found.length} key(s): ${found.slice(0, 4).join(', ')}`);
  for (const id of audited.purgedWorkflows) if (runs.has(id)) violate(`purged workflow ${id} exists again`);

  // Schedules: each slot started once (checked as it landed), on the cron's own slots.
  for (const creation of audited.creations) {
    const by = creation.scheduledBy;
    if (!by) continue;
    stats.scheduledStarts++;
    const every = schedules.get(by.schedule);
    const second = by.slot / 1000;
    if (every === undefined || !Number.isInteger(second) || (second % 60) % every !== 0)
      violate(
        `${creation.workflowId} was started for ${new Date(by.slot).toISOString()}, not a slot of ${by.schedule}`,
      );
  }

  // Idempotency keys: one workflow per key, whichever engine asked and however often.
  for (let k = 0; k < idempotencyKeyCount; k++) {
    const key = `key-${k}`;
    const returned = new Set(
      (idempotent.get(key) ?? []).map(({ workflowId, run }) => `${workflowId}#${run}`),
    );
    const created = audited.creations.filter(
      (creation) =>
        creation.workflowId.startsWith(`idem-${key}-`) || creation.idempotencyKey === keys.idempotency(key),
    );
    const stored = await audited.get(keys.idempotency(key));
    const named = stored === null ? null : (JSON.parse(stored) as { workflowId: string; run: number });
    if (returned.size > 1) violate(`idempotency key ${key} returned ${[...returned].join(', ')}`);
    if (created.length > 1)
      violate(`idempotency key ${key} created ${created.map((c) => `${c.workflowId}#${c.run}`).join(', ')}`);
    if (
      created.length === 1 &&
      `${named?.workflowId}#${named?.run}` !== `${created[0]!.workflowId}#${created[0]!.run}`
    )
      violate(`idempotency key ${key} names ${stored} but started ${created[0]!.workflowId}`);
    for (const run of returned)
      if (created.length !== 1 || run !== `${created[0]!.workflowId}#${created[0]!.run}`)
        violate(`idempotency key ${key} returned ${run}, which it did not start`);
  }

  // Signal-with-start: every item consumed exactly once, by the run it was delivered to or — that run having
  // continued as new — by the run that ended its chain (which returns the items of the whole chain).
  const consumed = new Map<string, { workflowId: string; run: number }[]>();
  /** `${id}#${run}` → the run that ended its chain. */
  const chainEnd = new Map<string, number>();
  for (const id of collectors) {
    const views = runs.get(id) ?? [];
    let end: number | null = null;
    for (const { run, record } of [...views].reverse()) {
      if (record.status !== 'continued-as-new') end = run;
      else if (end === null || !views.some((view) => view.run === run + 1))
        violate(`collector ${id} run ${run} continued as new, but no run ${run + 1} is stored`);
      if (end !== null) chainEnd.set(`${id}#${run}`, end);
    }
    for (const { run, record } of views) {
      if (record.status === 'continued-as-new') {
        stats.continuedAsNew++;
        continue;
      }
      if (record.status !== 'completed') {
        violate(`collector ${id} run ${run} ended ${record.status}`);
        continue;
      }
      for (const item of (record.result as string[] | undefined) ?? [])
        consumed.set(item, [...(consumed.get(item) ?? []), { workflowId: id, run }]);
    }
  }
  const sentPayloads = new Set(sent.map(({ payload }) => payload));
  for (const [item, where] of consumed) {
    if (where.length > 1)
      violate(
        `signal ${item} was consumed ${where.length} times (${where.map((w) => `${w.workflowId}#${w.run}`).join(', ')})`,
      );
    if (!sentPayloads.has(item)) violate(`signal ${item} was consumed but never sent`);
  }
  const startedRuns = new Set<string>();
  for (const { workflowId, payload, run, started } of sent) {
    if (run === null) continue;
    const where = consumed.get(payload) ?? [];
    const ends = chainEnd.get(`${workflowId}#${run}`) ?? run;
    if (!where.some((w) => w.workflowId === workflowId && w.run === ends))
      violate(
        `signal ${payload} was delivered to ${workflowId} run ${run} but consumed ${where.length === 0 ? 'nowhere' : `by ${where.map((w) => `${w.workflowId}#${w.run}`).join(', ')}`}`,
      );
    if (started && startedRuns.has(`${workflowId}#${run}`))
      violate(`signal-with-start started ${workflowId} run ${run} twice`);
    if (started) startedRuns.add(`${workflowId}#${run}`);
  }

  // External activities: one completion accepted, recorded by its run; later ones refused.
  for (const info of tokens.values()) {
    const { workflowId, run, name, calls } = info;
    const accepted = calls.filter((call) => call.kind === 'complete' && call.outcome === 'ok');
    if (accepted.length > 1)
      violate(`external activity ${name} of ${workflowId}#${run} accepted ${accepted.length} completions`);
    for (const call of calls) {
      if (call.outcome === 'error')
        violate(
          `${call.kind} of ${name} of ${workflowId}#${run} on healthy ${call.engineId} threw ${call.error}`,
        );
      if (!call.afterAccepted) continue;
      if (call.outcome === 'ok')
        violate(`${call.kind} of ${name} of ${workflowId}#${run} was accepted after a completion had been`);
      if (call.outcome === 'not-found' && !audited.purgedWorkflows.has(workflowId))
        violate(`a second ${call.kind} of ${name} of ${workflowId}#${run} got ${call.error}`);
    }
    const view = runs.get(workflowId)?.find((candidate) => candidate.run === run);
    if (!view) continue; // purged
    const { record, timeline } = view;
    const completions = timeline.filter(
      (entry) => entry.kind === 'activity-completed' && entry.detail.name === name,
    );
    const mayHave = new Set(
      calls
        .filter((call) => call.kind === 'complete' && call.outcome !== 'refused')
        .map((call) => call.nonce),
    );
    const value = ((record.state.ext as JsonObject | undefined) ?? {})[name];
    if (completions.length > 1)
      violate(
        `external activity ${name} of ${workflowId}#${run} was recorded completed ${completions.length} times`,
      );
    if (completions.length === 1 && !mayHave.has(String(value)))
      violate(
        `external activity ${name} of ${workflowId}#${run} completed with ${String(value)}, which no accepted call sent`,
      );
    if (accepted.length === 1 && completions.length === 1 && value !== accepted[0]!.nonce)
      violate(
        `external activity ${name} of ${workflowId}#${run} took ${String(value)}, not the accepted ${accepted[0]!.nonce}`,
      );
    if (accepted.length === 1 && record.status === 'completed' && completions.length === 0)
      violate(`the accepted completion of ${name} of ${workflowId}#${run} was lost`);
    const failures = timeline.flatMap((entry) =>
      entry.kind === 'activity-failed' &&
      entry.detail.name === name &&
      entry.detail.error.message.startsWith('sim-fail ')
        ? [entry.detail.error.message.slice('sim-fail '.length)]
        : [],
    );
    const failedOk = calls.filter((call) => call.kind === 'fail' && call.outcome === 'ok');
    const mayFail = new Set(
      calls.filter((call) => call.kind === 'fail' && call.outcome !== 'refused').map((call) => call.nonce),
    );
    for (const nonce of failures)
      if (!mayFail.has(nonce))
        violate(`${name} of ${workflowId}#${run} recorded a failure ${nonce} nobody sent`);
    if (new Set(failures).size !== failures.length)
      violate(`${name} of ${workflowId}#${run} recorded one failure twice: ${failures.join(', ')}`);
    if (record.status === 'completed')
      for (const call of failedOk)
        if (!failures.includes(call.nonce))
          violate(`the accepted failure ${call.nonce} of ${name} of ${workflowId}#${run} was lost`);
  }

  await world.shutdownAll();
  return { seed: options.seed, ok: violations.length === 0, violations, stats };
}
