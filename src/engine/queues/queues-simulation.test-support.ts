/**
 * The randomised multi-engine queue simulation (issue #34; docs/testing.md, "The queue simulation"). Three to
 * five engines under `workflow-lease` share one store and declare the same four queues — a global limit,
 * a per-key limit, a rate limit and a per-engine limit. A seeded scheduler starts workflows onto random queues
 * (random priorities, keys, some with a start delay) from random engines at random times, and interleaves
 * maintenance passes, crashes, freezes longer than the claim TTL, new engines, clock jumps, storage faults,
 * signals, cancels and terminations; then lets everything finish.
 *
 * Two audits, each independent of the engine's own view:
 *
 * - **As writes land** (the ownership simulation's `AuditedStorage`, which applies writes in the order the
 *   store applied them, with its own ownership checks): a shadow of every workflow record, claim holder and
 *   queue slot. After each landed write: per queue, the admitted and unfinished workflows are at most
 *   `concurrency`, hold distinct slots below it, and at most `perKeyConcurrency` per key; per engine, those it
 *   holds are at most `perEngineConcurrency` — except a holding that took it beyond, came from a takeover and
 *   was let go without the engine running an attempt of it (what the queue promises: queue-options.ts);
 *   an admission never passes over a workflow of its queue, priority and key (or both keyless), without a
 *   start delay, whose enqueue landed first and was stamped strictly earlier, unless that one is admitted at
 *   the same instant (one pass issues its admissions together; the group commit lands them in any order) —
 *   FIFO; no workflow is admitted twice.
 * - **At the end, from the durable timelines**: the intervals from each admission (`started` with
 *   `detail.queue`) to the workflow's end overlap at most `concurrency` at any instant (per key: at most
 *   `perKeyConcurrency`); no window of `periodMs` holds more than the rate limit's admissions; each run was
 *   admitted once; every workflow ended and no slot, key slot or wait entry is left (no leak, nothing
 *   stranded).
 *
 * From the activities' own execution log (each engine runs its own copy of the definition, so an attempt
 * knows its engine): no engine runs attempts of more than `perEngineConcurrency` workflows of a queue at once.
 * How many attempts of a queue ran at once across engines is reported, not checked: a frozen engine's
 * attempt may still be running when its workflow was taken over or ended (docs/ownership.md, "Queues under
 * faults").
 *
 * Everything is reproducible from the seed (over MemoryStorage and IndexedDB); a failing run reports it.
 */
import { MemoryStorage } from '../../storage/memory';
import type { Operation, Storage } from '../../storage/types';
import { TestWorld, fencing, seededRandom, type TestEngine } from '../engine.test-support';
import { describeStoredKey, keys, unescapeId } from '../keys';
import type { StartOptions } from '../lifecycle';
import { AuditedStorage } from '../ownership/simulation-audit.test-support';
import { decodeTimelineRecord, isTerminal, type TimelineEntry, type WorkflowRecord } from '../records';
import { defineWorkflow, type ActivityContext } from '../workflow';
import type { QueueOptions } from './queue-options';

/** The queues every engine of the simulation declares. */
export const simulatedQueues = {
  /** A global limit; a short priority step, so priorities interleave with waiting time. */
  a: { concurrency: 3, priorityStepMs: 5_000 },
  /** A per-key limit of one (three keys) under a global limit of four. */
  b: { concurrency: 4, perKeyConcurrency: 1 },
  /** Two admissions per 10 s. */
  c: { concurrency: 5, rateLimit: { limit: 2, periodMs: 10_000 } },
  /** One per engine, two in all. */
  d: { concurrency: 2, perEngineConcurrency: 1 },
} as const satisfies Record<string, QueueOptions>;

type QueueName = keyof typeof simulatedQueues;
const queueNames = Object.keys(simulatedQueues) as QueueName[];
const concurrencyKeys = ['k0', 'k1', 'k2'];

export type QueueSimulationOptions = {
  seed: number;
  /** Engines alive at a time; default 3–5 from the seed. */
  engines?: number;
  /** Workflows started (spread over the run); default 40. */
  workflows?: number;
  /** Scheduler steps before the wind-down; default 220. */
  steps?: number;
  /** The shared store; default a MemoryStorage. */
  storage?: () => Storage | Promise<Storage>;
  /**
   * Rounds of the wind-down (500 simulated ms each) before what has not ended is reported stranded; default
   * 600. A run expected to fail (a broken limit) needs few.
   */
  windDownRounds?: number;
  /**
   * A maintenance round still busy after this many real ms names the engines that never became idle (a hung
   * turn, load or admission pass), reports each as a violation and stops it like a crash, so that the run
   * ends; default 10,000.
   */
  hungAfterMs?: number;
};

export type QueueSimulationReport = {
  seed: number;
  ok: boolean;
  violations: string[];
  stats: {
    engines: number;
    workflows: number;
    crashes: number;
    freezes: number;
    joins: number;
    clockJumps: number;
    faultToggles: number;
    signals: number;
    cancels: number;
    terminations: number;
    takeovers: number;
    statuses: Record<string, number>;
    /** Admissions per queue (from the timelines). */
    admitted: Record<string, number>;
    /** The most admitted and unfinished at once per queue, as the writes landed. */
    maxRunning: Record<string, number>;
    /** The most attempts running at once per queue, across engines (reported, not checked). */
    maxAttemptsAtOnce: Record<string, number>;
    /** Pairs of workflows whose admission order the FIFO check compared. */
    fifoPairs: number;
    /**
     * Times an engine held more of a queue's workflows than its perEngineConcurrency (a takeover, or a claim
     * loading while it admitted), each resolved by letting the extra go without running an attempt of it; and
     * the longest such episode in simulated ms.
     */
    perEngineEpisodes: number;
    perEngineEpisodeMaxMs: number;
    /** Write batches the audit followed. */
    landedWrites: number;
    /** Engines that never became idle (each also a violation). */
    hung: number;
    /** Reads of a queue's waiting line (one per admission round of an engine): a spinning pass shows here. */
    waitScans: number;
  };
};

type Step =
  | { kind: 'activity'; ms: number; failFirst: number }
  | { kind: 'sleep'; ms: number }
  | { kind: 'signal'; ms: number };
type SimInput = { steps: Step[]; fail: boolean };

/** One activity attempt as its function saw it: which engine ran it, from when to when (simulated ms). */
type Attempt = { engineId: string; workflowId: string; queue: string; start: number; end: number | null };

/** What the audit follows of one workflow, as its writes landed. */
type Tracked = {
  id: string;
  queue: string;
  key: string | undefined;
  priority: number;
  enqueuedAt: number;
  notBefore: number | undefined;
  enqueueSeq: number;
  admitSeq: number | null;
  /** When its admission landed (simulated ms). */
  admitAt: number | null;
  admissions: number;
  ended: boolean;
  /** The holding of its claim: engine, since which landed write, from an admission or not. */
  holder: { engineId: string; seq: number; at: number; byAdmission: boolean } | null;
  /** What happened to it, for the messages: `<write>@<time> <what>`. */
  trail: string[];
};

const errorName = (error: unknown) => (error instanceof Error ? error.name : typeof error);

function parse<T>(raw: string): T | null {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return null;
  }
}

export async function runQueueSimulation(options: QueueSimulationOptions): Promise<QueueSimulationReport> {
  const random = seededRandom(options.seed * 7919 + 17);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const engineCount = options.engines ?? between(3, 5);
  const workflowCount = options.workflows ?? 40;
  const audited = new AuditedStorage((await options.storage?.()) ?? new MemoryStorage());
  const world = new TestWorld({ storage: audited, seed: options.seed });
  const clock = world.clock;
  audited.takeovers = {
    now: () => clock.now(),
    isGone: (engineId) => !world.liveness.isAlive(engineId),
    graceMs: 2 * fencing.workflowClaimRenewIntervalMs,
    renewIntervalMs: fencing.workflowClaimRenewIntervalMs,
  };
  const violations: string[] = [];
  const violate = (message: string) => {
    if (violations.length < 150) violations.push(message);
  };
  /**
   * A violation found as writes land, said once per `what` (the same overrun stays one through the writes
   * that follow), and at most 80 of them: the checks at the end always have room.
   */
  const said = new Set<string>();
  const violateOnce = (what: string, message: string) => {
    if (said.has(what) || said.size >= 80) return;
    said.add(what);
    violate(message);
  };
  const stats: QueueSimulationReport['stats'] = {
    engines: 0,
    workflows: 0,
    crashes: 0,
    freezes: 0,
    joins: 0,
    clockJumps: 0,
    faultToggles: 0,
    signals: 0,
    cancels: 0,
    terminations: 0,
    takeovers: 0,
    statuses: {},
    admitted: {},
    maxRunning: {},
    maxAttemptsAtOnce: {},
    fifoPairs: 0,
    perEngineEpisodes: 0,
    perEngineEpisodeMaxMs: 0,
    landedWrites: 0,
    waitScans: 0,
    hung: 0,
  };

  const scan = audited.scan.bind(audited);
  audited.scan = (prefix, scanOptions) => {
    if (prefix.startsWith('queue-wait:')) stats.waitScans++;
    return scan(prefix, scanOptions);
  };

  // ---------------------------------------------------------------------------------------------------------
  // The workflow: each engine runs its own copy, so that an activity attempt knows the engine running it.

  const attempts: Attempt[] = [];
  const queueOf = new Map<string, string>();
  const definitionFor = (engineId: string) =>
    defineWorkflow({
      name: 'queued',
      version: 1,
      *run(ctx, input: SimInput) {
        const retry = { maxAttempts: 50, initialIntervalMs: 200, maxIntervalMs: 1000 };
        for (const [index, step] of input.steps.entries()) {
          ctx.state.step = index;
          if (step.kind === 'activity') {
            const { ms, failFirst } = step;
            const workflowId = ctx.workflowId;
            yield* ctx.activity(
              `a${index}`,
              ({ attempt, signal }: ActivityContext) => {
                const record: Attempt = {
                  engineId,
                  workflowId,
                  queue: queueOf.get(workflowId) ?? '?',
                  start: clock.now(),
                  end: null,
                };
                attempts.push(record);
                return new Promise<string>((resolve, reject) => {
                  const end = () => (record.end ??= clock.now());
                  if (signal.aborted) {
                    end();
                    return reject(signal.reason);
                  }
                  signal.addEventListener(
                    'abort',
                    () => {
                      end();
                      reject(signal.reason);
                    },
                    { once: true },
                  );
                  clock.setTimeout(() => {
                    end();
                    if (attempt <= failFirst) reject(new Error(`attempt ${attempt} fails on purpose`));
                    else resolve(`a${index}#${attempt}`);
                  }, ms);
                });
              },
              { retry },
            );
          } else if (step.kind === 'sleep') yield* ctx.sleep(step.ms);
          else yield* ctx.waitForSignal('go', { timeoutMs: step.ms });
        }
        if (input.fail) throw new Error('this workflow fails on purpose');
        return 'done';
      },
    });

  // ---------------------------------------------------------------------------------------------------------
  // The audit as writes land.

  const tracked = new Map<string, Tracked>();
  const slotShadow = new Map<string, string>();
  let seq = 0;
  /**
   * Per engine and queue (`<engine>|<queue>`), an episode in which the engine held more of the queue's
   * unfinished workflows than its perEngineConcurrency: when it began, the most it held, and which of them it
   * let go (its holding ended while the workflow went on) and when.
   */
  type Episode = {
    engineId: string;
    queue: string;
    seq: number;
    at: number;
    peak: number;
    held: Map<string, Tracked>;
    /** The workflows whose code it ran meanwhile: commits it wrote (claims aside), attempts it began. */
    ran: Set<string>;
    trail: string[];
  };
  const episodes = new Map<string, Episode>();
  const admittedNow = (queue: string) =>
    [...tracked.values()].filter((t) => t.queue === queue && t.admitSeq !== null && !t.ended);
  const records = new Map<string, WorkflowRecord>();

  audited.onLanded = (operations: readonly Operation[]) => {
    seq++;
    stats.landedWrites++;
    const now = clock.now();
    const touchedQueues = new Set<string>();
    const admittedHere: Tracked[] = [];
    const holders = new Map<string, string | null>();
    /**
     * Per workflow, the engines whose timeline entries this write carries, with their kinds: what running its
     * code wrote (an admission's `started` and the claim entries are not code).
     */
    const writers = new Map<string, Map<string, string[]>>();
    for (const operation of operations) {
      const { key } = operation;
      if (key.startsWith('wf-tl:') && operation.type === 'put') {
        const id = describeStoredKey(key).workflowId;
        let entries: TimelineEntry[] = [];
        try {
          entries = decodeTimelineRecord(key, operation.value);
        } catch {
          // a tombstone or an unreadable record: no writer
        }
        for (const entry of entries) {
          if (id === null || entry.kind.startsWith('claim-') || entry.kind === 'started') continue;
          const byEngine = writers.get(id) ?? new Map<string, string[]>();
          byEngine.set(entry.engineId, [...(byEngine.get(entry.engineId) ?? []), entry.kind]);
          writers.set(id, byEngine);
        }
      }
      if (key.startsWith('queue-slot:') || key.startsWith('queue-kslot:')) {
        if (operation.type === 'delete') slotShadow.delete(key);
        else slotShadow.set(key, operation.value);
      } else if (key.startsWith(keys.ownerHoldersPrefix)) {
        const id = unescapeId(key.slice(keys.ownerHoldersPrefix.length));
        const holder = operation.type === 'delete' ? null : parse<{ engineId: string }>(operation.value);
        holders.set(id, holder?.engineId ?? null);
      } else if (key.startsWith(keys.recordPrefix) && operation.type === 'put') {
        const record = parse<WorkflowRecord>(operation.value);
        if (!record) continue;
        records.set(record.id, record);
        const queue = record.queue;
        if (!queue) continue;
        let t = tracked.get(record.id);
        if (!t || (t.ended && !isTerminal(record.status))) {
          t = {
            id: record.id,
            queue: queue.name,
            key: queue.key,
            priority: queue.priority,
            enqueuedAt: queue.enqueuedAt,
            notBefore: queue.notBefore,
            enqueueSeq: seq,
            admitSeq: null,
            admitAt: null,
            admissions: 0,
            ended: false,
            holder: null,
            trail: [`${seq}@${now} enqueued`],
          };
          tracked.set(record.id, t);
        }
        touchedQueues.add(t.queue);
        if (isTerminal(record.status) && !t.ended) {
          t.ended = true;
          t.trail.push(`${seq}@${now} ${record.status}`);
        } else if (record.status !== 'pending' && queue.admittedAt !== undefined && t.admitSeq === null) {
          t.admitSeq = seq;
          t.admitAt = now;
          t.admissions++;
          t.trail.push(`${seq}@${now} admitted (slot ${queue.slot ?? '-'})`);
          admittedHere.push(t);
        } else if (record.status === 'pending' && t.admitSeq !== null) {
          violate(`${t.id} went back to pending after its admission (write ${seq})`);
        }
      }
    }
    const holdersBefore = new Map([...writers.keys()].map((id) => [id, tracked.get(id)?.holder?.engineId]));
    for (const [id, engineId] of holders) {
      const t = tracked.get(id);
      if (!t) continue;
      const byAdmission = admittedHere.includes(t);
      const previous = t.holder;
      t.trail.push(`${seq}@${now} holder ${engineId ?? 'none'}${byAdmission ? ' (admission)' : ''}`);
      t.holder =
        engineId === null
          ? null
          : previous?.engineId === engineId
            ? previous
            : { engineId, seq, at: now, byAdmission };
      touchedQueues.add(t.queue);
    }
    for (const t of tracked.values()) if (t.ended && t.holder) t.holder = null;
    /** Adds this write's commits to the open episodes of the engines that hold (or held) those workflows. */
    const ranNow = (holdersBefore: Map<string, string | undefined>) => {
      for (const [id, engines] of writers) {
        const t = tracked.get(id);
        if (!t) continue;
        for (const [engineId, kinds] of engines)
          if (t.holder?.engineId === engineId || holdersBefore.get(id) === engineId) {
            const episode = episodes.get(`${engineId}|${t.queue}`);
            episode?.ran.add(id);
            episode?.trail.push(`${seq}@${now} ${id}: ${kinds.join(', ')}`);
          }
      }
    };
    for (const t of admittedHere) {
      if (t.admissions > 1) violate(`${t.id} was admitted ${t.admissions} times (write ${seq})`);
      fifo(t, now);
    }
    ranNow(holdersBefore);
    for (const queue of touchedQueues) checkLimits(queue, now);
    ranNow(holdersBefore);
  };

  /**
   * An episode over the per-engine limit ended: meanwhile the engine may have run the code of at most
   * `perEngineConcurrency` of them — it let the extra go (a takeover, or a claim still loading when it
   * admitted) before running any of their code.
   */
  const closeEpisode = (episode: Episode, now: number) => {
    episodes.delete(`${episode.engineId}|${episode.queue}`);
    stats.perEngineEpisodes++;
    stats.perEngineEpisodeMaxMs = Math.max(stats.perEngineEpisodeMaxMs, now - episode.at);
    const limit = (simulatedQueues[episode.queue as QueueName] as QueueOptions).perEngineConcurrency!;
    for (const a of attempts)
      if (
        a.engineId === episode.engineId &&
        a.queue === episode.queue &&
        a.start >= episode.at &&
        a.start <= now
      ) {
        episode.ran.add(a.workflowId);
        episode.trail.push(`@${a.start} ${a.workflowId}: an attempt`);
      }
    if (episode.ran.size > limit)
      violate(
        `perEngineConcurrency of '${episode.queue}' (${limit}) exceeded from ${episode.at} (write ${episode.seq}) to ${now}: ${episode.engineId} held ${episode.peak} at once and ran ${[...episode.ran].join(', ')}: ${[
          ...episode.held.values(),
        ]
          .map((t) => `${t.id} (${t.trail.slice(-5).join('; ')})`)
          .join(', ')}; it wrote ${episode.trail.join('; ')}`,
      );
  };

  const fifo = (b: Tracked, now: number) => {
    for (const a of tracked.values()) {
      if (a === b || a.queue !== b.queue || a.priority !== b.priority || a.key !== b.key) continue;
      if (a.notBefore !== undefined || b.notBefore !== undefined) continue;
      if (!(a.enqueuedAt < b.enqueuedAt) || a.enqueueSeq >= b.enqueueSeq) continue;
      stats.fifoPairs++;
      if (a.admitSeq === null && !a.ended)
        overtaken.push({
          a,
          b,
          at: now,
          message: `FIFO in '${b.queue}': ${b.id} (enqueued ${b.enqueuedAt}, priority ${b.priority}${b.key ? `, key ${b.key}` : ''}) was admitted at ${now} (write ${seq}) while ${a.id}, enqueued at ${a.enqueuedAt}, still waited`,
        });
    }
  };
  /**
   * Admissions that landed while an earlier workflow of the same line still waited. One admission pass issues
   * its admissions together (the store's group commit may land them in any order), so the earlier one
   * admitted at the same instant is no overtaking; one admitted later, or never, is.
   */
  const overtaken: { a: Tracked; b: Tracked; at: number; message: string }[] = [];

  const checkLimits = (queue: string, now: number) => {
    const declared = simulatedQueues[queue as QueueName] as QueueOptions | undefined;
    if (!declared) return;
    const running = admittedNow(queue);
    stats.maxRunning[queue] = Math.max(stats.maxRunning[queue] ?? 0, running.length);
    const where = `at ${now} (write ${seq})`;
    if (declared.concurrency !== undefined) {
      if (running.length > declared.concurrency)
        violateOnce(
          `concurrency ${queue} ${running.map((t) => t.id).join()}`,
          `concurrency of '${queue}' (${declared.concurrency}) exceeded ${where}: ${running.length} admitted and unfinished (${running.map((t) => t.id).join(', ')})`,
        );
      const bySlot = new Map<number, string[]>();
      for (const t of running) {
        const slot = records.get(t.id)?.queue?.slot;
        if (slot === undefined || slot >= declared.concurrency)
          violateOnce(
            `no slot ${t.id}`,
            `${t.id} runs in '${queue}' without a slot below ${declared.concurrency} (slot ${slot}) ${where}`,
          );
        else bySlot.set(slot, [...(bySlot.get(slot) ?? []), t.id]);
      }
      for (const [slot, ids] of bySlot)
        if (ids.length > 1)
          violateOnce(
            `slot ${queue} ${slot} ${ids.join()}`,
            `slot ${slot} of '${queue}' is held by ${ids.join(' and ')} ${where}`,
          );
    }
    if (declared.perKeyConcurrency !== undefined) {
      const byKey = new Map<string, string[]>();
      for (const t of running) if (t.key !== undefined) byKey.set(t.key, [...(byKey.get(t.key) ?? []), t.id]);
      for (const [key, ids] of byKey)
        if (ids.length > declared.perKeyConcurrency)
          violateOnce(
            `key ${queue} ${key} ${ids.join()}`,
            `perKeyConcurrency of '${queue}' (${declared.perKeyConcurrency}) exceeded for key ${key} ${where}: ${ids.join(', ')}`,
          );
    }
    if (declared.perEngineConcurrency !== undefined) {
      const limit = declared.perEngineConcurrency;
      const byEngine = new Map<string, Tracked[]>();
      for (const t of running)
        if (t.holder) byEngine.set(t.holder.engineId, [...(byEngine.get(t.holder.engineId) ?? []), t]);
      for (const [engineId, held] of byEngine) {
        if (held.length <= limit) continue;
        const name = `${engineId}|${queue}`;
        let episode = episodes.get(name);
        if (!episode) {
          episode = { engineId, queue, seq, at: now, peak: 0, held: new Map(), ran: new Set(), trail: [] };
          episodes.set(name, episode);
        }
        episode.peak = Math.max(episode.peak, held.length);
        for (const t of held) episode.held.set(t.id, t);
      }
      for (const episode of [...episodes.values()])
        if (episode.queue === queue && (byEngine.get(episode.engineId)?.length ?? 0) <= limit)
          closeEpisode(episode, now);
    }
  };

  // ---------------------------------------------------------------------------------------------------------
  // The engines and the scheduler.

  const engineOptions = { ...fencing, liveness: world.liveness, queues: simulatedQueues };
  let engineNames = 0;
  const definitions = new Map<string, ReturnType<typeof definitionFor>>();
  const join = async () => {
    const engineId = `engine-${String.fromCharCode(65 + (engineNames % 26))}${engineNames >= 26 ? engineNames : ''}`;
    engineNames++;
    const definition = definitionFor(engineId);
    definitions.set(engineId, definition);
    const engine = await world.engine([definition], { ...engineOptions, engineId });
    stats.engines++;
    return engine;
  };
  for (let i = 0; i < engineCount; i++) await join();

  /**
   * One maintenance pass on each engine, then idle (TestWorld.maintain), watched: an engine still busy after
   * `hungAfterMs` of real time is reported and stopped like a crash (its work then never ends).
   */
  const hungAfterMs = options.hungAfterMs ?? 10_000;
  const maintain = async (engines: readonly TestEngine[] = world.live) => {
    let finished = false;
    const work = world.maintain(engines).then(() => {
      finished = true;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, hungAfterMs)))]);
    clearTimeout(timer);
    if (finished) return;
    for (const engine of engines) {
      if (!world.engines.includes(engine)) continue;
      let idle = false;
      await Promise.race([
        engine.idle({ activities: false }).then(() => (idle = true)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, 100))),
      ]);
      clearTimeout(timer);
      if (idle) continue;
      stats.hung++;
      violate(
        `${engine.id} never became idle (a turn, load or admission pass that does not end) after a maintenance pass at ${clock.now()}; stopped like a crash`,
      );
      world.crash(engine);
    }
    await work;
  };
  const thawAt = new Map<TestEngine, number>();
  const live = () => world.live.filter((engine) => !thawAt.has(engine));

  /** The starts, planned up front from the seed: queue, key, priority, delay and the workflow's steps. */
  const planned = Array.from({ length: workflowCount }, (_, i) => {
    const queue = pick(queueNames);
    const key =
      queue === 'b'
        ? pick(concurrencyKeys)
        : queue === 'a' && random() < 0.3
          ? pick(concurrencyKeys)
          : undefined;
    const priority = pick([1, 3, 5, 5, 5, 5, 8, 10]);
    const delay = random() < 0.15 ? between(500, 6000) : 0;
    const steps: Step[] = Array.from({ length: between(1, 4) }, () => {
      const roll = random();
      if (roll < 0.5) return { kind: 'activity', ms: between(0, 1500), failFirst: random() < 0.2 ? 1 : 0 };
      if (roll < 0.8) return { kind: 'sleep', ms: between(0, 3000) };
      return { kind: 'signal', ms: between(1000, 6000) };
    });
    const id = `q${i}`;
    queueOf.set(id, queue);
    const startOptions: StartOptions = {
      id,
      queue,
      priority,
      ...(key === undefined ? {} : { concurrencyKey: key }),
      ...(delay > 0 ? { startDelayMs: delay } : {}),
    };
    return { id, input: { steps, fail: random() < 0.15 } satisfies SimInput, options: startOptions };
  });
  let nextStart = 0;
  const startOne = async (engine: TestEngine, plan: (typeof planned)[number]) => {
    await engine.start(definitions.get(engine.id)!, plan.input, plan.options).catch(() => undefined);
  };
  /** Starts that failed (a storage fault, a frozen engine) and did not land are made again. */
  const ensureStarted = async () => {
    for (const plan of planned.slice(0, nextStart))
      if (!records.has(plan.id) && live().length > 0) await startOne(pick(live()), plan);
  };

  const steps = options.steps ?? 220;
  const startEvery = Math.max(1, Math.floor((steps * 0.8) / workflowCount));
  for (let step = 0; step < steps; step++) {
    for (const [engine, at] of thawAt)
      if (clock.now() >= at) {
        world.thaw(engine);
        thawAt.delete(engine);
      }
    const alive = live();
    // Starts spread over the first four fifths of the run, a few at a time.
    if (alive.length > 0 && step % startEvery === 0 && nextStart < planned.length) {
      for (let n = between(1, 2); n > 0 && nextStart < planned.length; n--)
        await startOne(pick(alive), planned[nextStart++]!);
      continue;
    }
    const roll = random();
    if (roll < 0.42 || alive.length === 0) {
      await clock.advance(between(50, 400));
      await maintain([...alive].sort(() => random() - 0.5));
    } else if (roll < 0.48 && alive.length > 1) {
      world.crash(pick(alive));
      stats.crashes++;
    } else if (roll < 0.55 && world.engines.length < engineCount + 1) {
      await join();
      stats.joins++;
    } else if (roll < 0.61 && alive.length > 1) {
      const engine = pick(alive);
      world.freeze(engine);
      thawAt.set(engine, clock.now() + between(4000, 9000));
      stats.freezes++;
    } else if (roll < 0.65) {
      await clock.advance(between(2000, 7000));
      stats.clockJumps++;
      await maintain(alive);
    } else if (roll < 0.7) {
      const engine = pick(alive);
      const rate = random() < 0.5 ? 0 : random() * 0.06;
      engine.wrapper.setFaults({
        readFailureRate: rate,
        writeFailureRate: rate,
        writeFailureAfterApplyRate: rate,
        hangRate: 0,
      });
      engine.wrapper.enabled = rate > 0;
      stats.faultToggles++;
    } else if (roll < 0.73 && nextStart > 0) {
      await pick(alive)
        .cancel(planned[between(0, nextStart - 1)]!.id, 'simulation')
        .then(() => stats.cancels++)
        .catch(() => undefined);
    } else if (roll < 0.75 && nextStart > 0) {
      await pick(alive)
        .terminate(planned[between(0, nextStart - 1)]!.id, 'simulation')
        .then(() => stats.terminations++)
        .catch(() => undefined);
    } else if (nextStart > 0) {
      await pick(alive)
        .signal(planned[between(0, nextStart - 1)]!.id, 'go', step)
        .then(() => stats.signals++)
        .catch(() => undefined);
    }
  }

  // Wind-down: faults off, frozen engines thawed, at least two engines, the remaining starts made; then time
  // runs and maintenance passes until every workflow has ended (signals for those that wait).
  for (const engine of [...thawAt.keys()]) world.thaw(engine);
  thawAt.clear();
  for (const engine of world.engines) engine.wrapper.enabled = false;
  while (world.engines.length < 2) await join();
  while (nextStart < planned.length) await startOne(pick(live()), planned[nextStart++]!);
  await ensureStarted();
  let open: string[] = planned.map((plan) => plan.id);
  const rounds = options.windDownRounds ?? 600;
  for (let round = 0; round < rounds && open.length > 0; round++) {
    await clock.advance(500);
    await new Promise((resolve) => setImmediate(resolve));
    await maintain();
    await ensureStarted();
    open = planned
      .map((plan) => plan.id)
      .filter((id) => {
        const record = records.get(id);
        return !record || !isTerminal(record.status);
      });
    if (round % 4 === 0)
      for (const id of open) await world.engines[0]!.signal(id, 'go', -1).catch(() => undefined);
  }
  await clock.advance(5_000);
  await maintain();

  violations.push(...audited.violations);
  for (const { a, at, message } of overtaken)
    if (a.admitAt !== at)
      violate(
        `${message}; ${a.id} ${a.admitAt === null ? 'was never admitted' : `was admitted at ${a.admitAt}`} (${a.trail.slice(-6).join('; ')})`,
      );
  for (const episode of [...episodes.values()]) {
    violate(`perEngineConcurrency of '${episode.queue}': ${episode.engineId} was still beyond it at the end`);
    closeEpisode(episode, clock.now());
  }

  // ---------------------------------------------------------------------------------------------------------
  // The audit from the durable record.

  if (open.length > 0)
    violate(
      `stranded (not ended at the end): ${open.slice(0, 10).join(', ')}${open.length > 10 ? ', …' : ''}`,
    );
  for (const prefix of ['queue-slot:', 'queue-kslot:', 'queue-wait:'])
    for (const { key, value } of await audited.scan(prefix))
      violate(`left at the end (a leak): ${key} = ${value}`);

  const observer = world.engines[0]!;
  type Interval = { id: string; key: string | undefined; from: number; to: number };
  const intervals = new Map<string, Interval[]>();
  const admissionsAt = new Map<string, { id: string; at: number }[]>();
  for (const plan of planned) {
    const described = await observer.describe(plan.id).then(
      (description) => description,
      (error: unknown) => error as Error,
    );
    if (described instanceof Error) {
      violate(`${plan.id} is not readable at the end: ${errorName(described)}`);
      continue;
    }
    const description = described;
    stats.workflows++;
    stats.statuses[description.status] = (stats.statuses[description.status] ?? 0) + 1;
    const timeline: TimelineEntry[] = await observer.timeline(plan.id).catch(() => []);
    stats.takeovers += timeline.filter((entry) => entry.kind === 'claim-taken-over').length;
    const admissions = timeline.flatMap((entry) =>
      entry.kind === 'started' && entry.detail.queue ? [{ entry, queue: entry.detail.queue }] : [],
    );
    // It begins waiting in its queue, or admitted at once by its start (a queue with room and nobody waiting).
    const first = timeline[0];
    const firstQueue =
      first?.kind === 'scheduled' || first?.kind === 'started' ? first.detail.queue?.name : undefined;
    if (firstQueue !== plan.options.queue)
      violate(`${plan.id}'s timeline does not begin with its start onto '${plan.options.queue}'`);
    if (admissions.length > 1)
      violate(
        `${plan.id} was admitted ${admissions.length} times: at ${admissions.map((a) => a.entry.at).join(', ')}`,
      );
    const end = timeline.find((entry) => isTerminal(entry.kind as WorkflowRecord['status']));
    const admission = admissions[0];
    if (!admission) {
      if (!isTerminal(description.status))
        violate(
          `${plan.id} is still ${description.status} in queue '${plan.options.queue}'${plan.options.concurrencyKey ? ` (key ${plan.options.concurrencyKey})` : ''}: never admitted`,
        );
      else if (description.status !== 'cancelled' && description.status !== 'terminated')
        violate(`${plan.id} ended ${description.status} without being admitted`);
      continue;
    }
    const queue = admission.queue.name;
    stats.admitted[queue] = (stats.admitted[queue] ?? 0) + 1;
    admissionsAt.set(queue, [...(admissionsAt.get(queue) ?? []), { id: plan.id, at: admission.entry.at }]);
    if (!end) {
      violate(`${plan.id} was admitted at ${admission.entry.at} and never ended`);
      continue;
    }
    intervals.set(queue, [
      ...(intervals.get(queue) ?? []),
      { id: plan.id, key: plan.options.concurrencyKey, from: admission.entry.at, to: end.at },
    ]);
  }

  // Overlaps of [admission, end): at each admission, how many intervals cover it (an end at the same instant
  // as an admission frees the slot first: the admission read it free).
  for (const [queue, list] of intervals) {
    const declared = simulatedQueues[queue as QueueName] as QueueOptions;
    const covering = (at: number, filter: (i: Interval) => boolean) =>
      list.filter((i) => filter(i) && i.from <= at && at < i.to);
    for (const { from, key } of list) {
      if (declared.concurrency !== undefined) {
        const over = covering(from, () => true);
        if (over.length > declared.concurrency)
          violate(
            `timelines: ${over.length} workflows of '${queue}' ran at ${from} (concurrency ${declared.concurrency}): ${over
              .map((i) => `${i.id} [${i.from}, ${i.to})`)
              .join(', ')}`,
          );
      }
      if (declared.perKeyConcurrency !== undefined && key !== undefined) {
        const over = covering(from, (i) => i.key === key);
        if (over.length > declared.perKeyConcurrency)
          violate(
            `timelines: ${over.length} workflows of '${queue}' with key ${key} ran at ${from} (perKeyConcurrency ${declared.perKeyConcurrency}): ${over
              .map((i) => `${i.id} [${i.from}, ${i.to})`)
              .join(', ')}`,
          );
      }
    }
  }

  // Rate limits: no window [t, t + periodMs) holds more than `limit` admissions.
  for (const queue of queueNames) {
    const rate = (simulatedQueues[queue] as QueueOptions).rateLimit;
    if (!rate) continue;
    const times = (admissionsAt.get(queue) ?? []).sort((x, y) => x.at - y.at);
    for (const [index, { at }] of times.entries()) {
      const inWindow = times.slice(index).filter((other) => other.at < at + rate.periodMs);
      if (inWindow.length > rate.limit)
        violate(
          `rate limit of '${queue}' (${rate.limit} per ${rate.periodMs} ms): ${inWindow.length} admitted in [${at}, ${at + rate.periodMs}): ${inWindow
            .map((a) => `${a.id}@${a.at}`)
            .join(', ')}`,
        );
    }
  }

  // Attempts: per engine, at most perEngineConcurrency workflows of a queue running attempts at once; across
  // engines, the most at once is reported.
  for (const queue of queueNames) {
    const mine = attempts.filter((a) => a.queue === queue);
    const at = (t: number, filter: (a: Attempt) => boolean) =>
      new Set(
        mine.filter((a) => filter(a) && a.start <= t && t < (a.end ?? Infinity)).map((a) => a.workflowId),
      );
    let most = 0;
    for (const a of mine) most = Math.max(most, at(a.start, () => true).size);
    stats.maxAttemptsAtOnce[queue] = most;
    const limit = (simulatedQueues[queue] as QueueOptions).perEngineConcurrency;
    if (limit === undefined) continue;
    for (const a of mine) {
      const running = at(a.start, (other) => other.engineId === a.engineId);
      if (running.size > limit)
        violate(
          `perEngineConcurrency of '${queue}' (${limit}): ${a.engineId} ran attempts of ${[...running].join(', ')} at once at ${a.start}`,
        );
    }
  }

  await world.shutdownAll();
  return { seed: options.seed, ok: violations.length === 0, violations, stats };
}
