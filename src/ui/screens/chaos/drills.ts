/**
 * Chaos drills: scripted scenarios run against the real engines of the open tabs, driven from this tab.
 * Each drill gives another tab's engine workflows to own and breaks that engine on purpose (freeze, crash,
 * graceful shutdown), both through the client's control channel (`client.chaos`), waits for the others to take over,
 * and ends by checking the invariants (invariants.ts) over the durable timelines of its workflows, plus the
 * drill's own expectation (how fast the takeover came, that exactly one start won a race).
 *
 * A drill that needs more engines than are open says so and does not start; the race runs with what there
 * is (three starts from fewer tabs still race). Drills are cancellable between steps, and every wait is
 * bounded, so a drill never hangs: it fails with the step it was waiting on.
 */
import type { FenceRejection, WorkflowDescription } from '../../../public';
import type { ShuttleClient } from '../../../public/browser';
import type { EngineRecord } from '../../../public/browser';
import { queueLimitsText } from '../../components/queue-view';
import { formatDuration } from '../../components/time-format';
import { runChaos, type ChaosEnvironment } from '../../data/chaos';
import { claimTimings, isEngineLive } from '../../data/engine-queries';
import {
  checkOwnershipInvariants,
  type InvariantResult,
  type WorkflowEvidence,
} from '../../../public/browser';
import { isTerminal } from '../../../public/browser';
import { departureFrom, describeDepartures } from './departures';
import { checkQueueLimit, queueHoldFrom, type QueueHold } from './queue-limit';

export type DrillId = 'freeze' | 'crash' | 'handoff' | 'race' | 'queue-crash';

export type StepState = 'running' | 'done' | 'failed';
export type DrillStep = {
  id: number;
  text: string;
  state: StepState;
  startedAt: number;
  endedAt: number | null;
  detail: string | null;
};

/** A check of the drill itself, shown with the invariants. */
export type DrillCheck = { title: string; ok: boolean; summary: string };

export type DrillReport = {
  drillId: DrillId;
  status: 'passed' | 'failed' | 'error' | 'cancelled';
  message: string | null;
  steps: DrillStep[];
  checks: DrillCheck[];
  invariants: InvariantResult[];
  workflowIds: string[];
  startedAt: number;
  endedAt: number;
};

export type DrillDefinition = {
  id: DrillId;
  title: string;
  description: string;
  /** In server mode: what it does to the fleet's worker processes, or null when it needs tab mode. */
  serverTitle: string;
  serverDescription: string;
  /** It cannot run on a server (it needs the engines of several browser tabs). */
  tabModeOnly?: boolean;
  /** Live engine tabs the drill needs (this one included). */
  minEngines: number;
  /** What it does with fewer (null: it cannot run). */
  fallback: string | null;
};

export const drillDefinitions: readonly DrillDefinition[] = [
  {
    id: 'freeze',
    title: 'Owner frozen longer than the TTL, then resumes',
    description:
      'Another tab starts a slow pipeline; mid-step its engine is frozen for TTL + 4 s. A live engine takes the workflow over at a new epoch; when the frozen one wakes up, its late writes are refused by the fence.',
    minEngines: 2,
    fallback: null,
    serverTitle: 'Owner process frozen (SIGSTOP) longer than the TTL, then resumes',
    serverDescription:
      'A slow pipeline starts on the fleet; mid-step the worker process that owns it is stopped with SIGSTOP for TTL + 4 s. A live worker takes it over at a new epoch; after SIGCONT, the frozen worker’s late writes are refused by the fence.',
  },
  {
    id: 'crash',
    title: 'Owner crashes mid-activity',
    description:
      'Another tab starts a slow pipeline; mid-step its worker is terminated. Its Web Lock vanishes, so a live engine takes over well before the TTL and re-runs only the step that was in flight.',
    minEngines: 2,
    fallback: null,
    serverTitle: 'Owner process killed mid-activity (SIGKILL)',
    serverDescription:
      'A slow pipeline starts on the fleet; mid-step its owner process is killed. Its PostgreSQL advisory lock goes with it, so a live worker takes over well before the TTL and re-runs only the step that was in flight. Then one more worker is started.',
  },
  {
    id: 'handoff',
    title: 'Graceful handoff of 20 workflows',
    description:
      'Another tab starts 20 countdowns, then shuts down gracefully: it releases every claim, and the remaining engines take all 20 over within about a second. Then it restarts.',
    minEngines: 2,
    fallback: null,
    serverTitle: 'Graceful handoff when a worker stops (SIGTERM)',
    serverDescription:
      '20 countdowns start on the fleet; the worker that owns the most is stopped gracefully: it releases every claim, and the other workers take its workflows over within about a second. Then one more worker is started.',
  },
  {
    id: 'race',
    title: 'Three tabs race to start one id',
    description:
      'Three engine tabs start a workflow with the same id at the same instant. Exactly one start wins; the others are refused (the id exists, or the winner holds its claim). The winner runs it once.',
    minEngines: 3,
    fallback: 'With fewer tabs, the open engines fire the three starts between them.',
    serverTitle: 'Three engines race to start one id',
    tabModeOnly: true,
    serverDescription:
      'Needs tab mode: the three starts race from three browser engines. Here every start goes through the studio server’s one observer, so there is nothing to race; open the studio with npm start to run it.',
  },
  {
    id: 'queue-crash',
    title: 'Queue limit through a crash',
    description:
      'Another tab starts 6 payments onto the demos’ payments queue (2 at once, 1 per key); once its engine runs some of the admitted ones, its worker is terminated. A live engine takes them over, their slots with them. From the timelines: never more at once than the queue admits, every payment completed, and the queue holds none of their slots at the end.',
    minEngines: 2,
    fallback: null,
    serverTitle: 'Queue limit through a killed worker (SIGKILL)',
    serverDescription:
      '6 payments start on the fleet onto the demos’ payments queue (2 at once, 1 per key); once a worker runs some of the admitted ones, it is killed. A live worker takes them over, their slots with them. From the timelines: never more at once than the queue admits, every payment completed, and the queue holds none of their slots at the end. Then one more worker is started.',
  },
];

export type DrillEnvironment = ChaosEnvironment & {
  /** Called with the steps whenever they change. */
  onProgress: (steps: DrillStep[]) => void;
  signal: AbortSignal;
};

class DrillCancelled extends Error {
  override name = 'DrillCancelled';
}

/** A step that did not come true in time. */
class DrillStepFailed extends Error {
  override name = 'DrillStepFailed';
}

/** Runs a drill to its report. Never throws: failures and cancellation are reports too. */
export async function runDrill(drillId: DrillId, env: DrillEnvironment): Promise<DrillReport> {
  const steps: DrillStep[] = [];
  const checks: DrillCheck[] = [];
  const workflowIds: string[] = [];
  const startedAt = Date.now();
  let nextId = 1;
  const publish = () => env.onProgress(steps.map((step) => ({ ...step })));
  const step = async <T>(
    text: string,
    work: () => Promise<T>,
    describe?: (value: T) => string,
  ): Promise<T> => {
    if (env.signal.aborted) throw new DrillCancelled('Cancelled.');
    const entry: DrillStep = {
      id: nextId++,
      text,
      state: 'running',
      startedAt: Date.now(),
      endedAt: null,
      detail: null,
    };
    steps.push(entry);
    publish();
    try {
      const value = await work();
      entry.state = 'done';
      entry.endedAt = Date.now();
      entry.detail = describe ? describe(value) : null;
      publish();
      return value;
    } catch (error) {
      entry.state = 'failed';
      entry.endedAt = Date.now();
      entry.detail = error instanceof Error ? error.message : String(error);
      publish();
      throw error;
    }
  };
  const context: DrillContext = { env, step, checks, workflowIds };
  let status: DrillReport['status'] = 'passed';
  let message: string | null = null;
  let invariants: InvariantResult[] = [];
  try {
    await drills[drillId](context);
    invariants = await step(
      'Check the invariants over the durable timelines',
      () => collectInvariants(env.client, workflowIds),
      (results) => `${results.filter((result) => result.ok).length} of ${results.length} hold`,
    );
    if (invariants.some((result) => !result.ok) || checks.some((check) => !check.ok)) status = 'failed';
  } catch (error) {
    if (error instanceof DrillCancelled || env.signal.aborted) {
      status = 'cancelled';
      message = 'The drill was cancelled; the workflows it started carry on.';
    } else {
      status = error instanceof DrillStepFailed ? 'failed' : 'error';
      message =
        error instanceof Error
          ? `${error.name === 'DrillStepFailed' ? '' : `${error.name}: `}${error.message}`
          : String(error);
      if (workflowIds.length > 0)
        invariants = await collectInvariants(env.client, workflowIds).catch(() => []);
    }
  }
  return { drillId, status, message, steps, checks, invariants, workflowIds, startedAt, endedAt: Date.now() };
}

type DrillContext = {
  env: DrillEnvironment;
  step: <T>(text: string, work: () => Promise<T>, describe?: (value: T) => string) => Promise<T>;
  checks: DrillCheck[];
  workflowIds: string[];
};

/** Reads every workflow's status, timeline and refused writes, and checks the invariants. */
export async function collectInvariants(
  client: ShuttleClient,
  workflowIds: readonly string[],
): Promise<InvariantResult[]> {
  const evidence: WorkflowEvidence[] = [];
  const rejections: FenceRejection[] = [];
  for (const workflowId of workflowIds) {
    const [description, timeline, refused] = await Promise.all([
      client.describe(workflowId),
      client.timeline(workflowId),
      client.fenceRejections(workflowId),
    ]);
    evidence.push({ workflowId, status: description.status, timeline });
    rejections.push(...refused);
  }
  return checkOwnershipInvariants(evidence, rejections);
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new DrillCancelled('Cancelled.'));
      },
      { once: true },
    );
  });
}

/** Polls `check` until it returns a value (not undefined), or fails after `timeoutMs` saying what it waited for. */
async function waitFor<T>(
  env: DrillEnvironment,
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  intervalMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new DrillStepFailed(
        `Gave up after ${formatDuration(timeoutMs)} waiting for ${what}${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}.`,
      );
    await sleep(intervalMs, env.signal);
  }
}

/** The live engine tabs of the database (viewers excluded), this tab first. */
export async function liveEngineTabs(client: ShuttleClient): Promise<EngineRecord[]> {
  const engines = await client.engines();
  return engines
    .filter((engine) => isEngineLive(engine) && engine.mode === 'engine' && engine.status === 'running')
    .sort((a, b) => Number(b.thisTab) - Number(a.thisTab) || a.startedAt - b.startedAt);
}

/** The engine a drill breaks: another tab's, so this tab keeps watching. */
async function pickVictim(context: DrillContext): Promise<EngineRecord> {
  const { env, step } = context;
  return step(
    'Pick another tab’s engine to break',
    async () => {
      const engines = await liveEngineTabs(env.client);
      const other = engines.find((engine) => engine.engineId !== env.selfEngineId);
      if (!other)
        throw new DrillStepFailed('This drill needs a second engine tab: open one and run it again.');
      return other;
    },
    (engine) => `${engine.label} (${engine.engineId.slice(0, 8)})`,
  );
}

/**
 * Starts workflows and picks the engine the drill breaks. Tab mode: another tab's engine, which starts them
 * (`client.chaos.start`). Server mode: the studio cannot choose which worker claims a workflow, so they
 * are started through the server and the victim is the worker that owns the most of them once all are owned.
 */
async function startOnVictim(
  context: DrillContext,
  workflowType: string,
  inputs: readonly { id: string; input: unknown }[],
): Promise<{ victim: EngineRecord; victimIds: string[] }> {
  const { env, step, workflowIds } = context;
  if (!env.server) {
    const victim = await pickVictim(context);
    await step(
      inputs.length === 1
        ? `Start a ${workflowType} workflow on ${victim.label}`
        : `Start ${inputs.length} ${workflowType} workflows on ${victim.label}`,
      () =>
        Promise.all(
          inputs.map(({ id, input }) => startOn(env, victim.engineId, workflowType, input, { id })),
        ),
      (ids) => (ids.length === 1 ? ids[0]! : `${ids.length} started`),
    );
    workflowIds.push(...inputs.map(({ id }) => id));
    return { victim, victimIds: inputs.map(({ id }) => id) };
  }
  const workers = await step(
    'Find the worker processes',
    () => liveEngineTabs(env.client),
    (list) => list.map((engine) => engine.label).join(', '),
  );
  if (workers.length < 2)
    throw new DrillStepFailed('This drill needs two live worker processes: start one more and run it again.');
  await step(
    inputs.length === 1
      ? `Start a ${workflowType} workflow on the fleet`
      : `Start ${inputs.length} ${workflowType} workflows on the fleet`,
    () => Promise.all(inputs.map(({ id, input }) => env.client.start(workflowType, input, { id }))),
    (ids) => (ids.length === 1 ? ids[0]! : `${ids.length} started`),
  );
  workflowIds.push(...inputs.map(({ id }) => id));
  const owners = await step('Wait until a worker owns each', () =>
    waitFor(
      env,
      'every workflow to be claimed',
      15_000,
      async () => {
        const descriptions = await Promise.all(inputs.map(({ id }) => env.client.describe(id)));
        return descriptions.every((description) => description.owner)
          ? descriptions.map((description) => ({ id: description.workflowId, owner: description.owner! }))
          : undefined;
      },
      200,
    ),
  );
  const counts = new Map<string, number>();
  for (const { owner } of owners) counts.set(owner.engineId, (counts.get(owner.engineId) ?? 0) + 1);
  const [victimId] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
  const victim = (await env.client.engines()).find((engine) => engine.engineId === victimId);
  if (!victim)
    throw new DrillStepFailed(`The owner ${victimId.slice(0, 8)} is not listed among the engines.`);
  return { victim, victimIds: owners.filter(({ owner }) => owner.engineId === victimId).map(({ id }) => id) };
}

/** Whether `engineId` is frozen now: its process is stopped (server mode), or its presence says so. */
async function isFrozen(env: DrillEnvironment, engineId: string): Promise<boolean> {
  if (env.server) {
    const fleet = await env.client.fleet();
    return fleet.processes.some((process) => process.engineId === engineId && process.state === 'frozen');
  }
  const engine = (await env.client.engines()).find((candidate) => candidate.engineId === engineId);
  return engine?.status === 'frozen';
}

/** After a break: restarts the victim's tab (tab mode), or starts one more worker (server mode). */
async function replaceVictim(context: DrillContext, victim: EngineRecord): Promise<void> {
  const { env, step } = context;
  if (env.server) {
    await step(
      'Start one more worker in its place',
      () => env.client.startWorker(),
      (started) => `${started.label}, pid ${started.pid}`,
    );
    return;
  }
  await step(`Restart ${victim.label}’s tab with a new engine`, () =>
    runChaos(env.client, { type: 'restart', engineId: victim.engineId }).catch(
      () => 'its tab did not answer',
    ),
  );
}

/**
 * Starts a workflow on `engineId`'s engine (this tab's, or another tab's through the control channel), no
 * earlier than `notBefore` when given.
 */
async function startOn(
  env: DrillEnvironment,
  engineId: string,
  workflowType: string,
  input: unknown,
  options: { id?: string; notBefore?: number } = {},
): Promise<string> {
  const { workflowId } = await env.client.chaos.start(engineId, workflowType, {
    input,
    ...(options.id ? { options: { id: options.id } } : {}),
    ...(options.notBefore === undefined ? {} : { notBefore: options.notBefore }),
  });
  return workflowId;
}

function drillId(prefix: string): string {
  return `drill-${prefix}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
}

async function waitForTerminal(
  context: DrillContext,
  workflowIds: readonly string[],
  timeoutMs: number,
): Promise<WorkflowDescription[]> {
  const { env } = context;
  return waitFor(
    env,
    `${workflowIds.length === 1 ? 'the workflow' : `all ${workflowIds.length} workflows`} to finish`,
    timeoutMs,
    async () => {
      const descriptions = await Promise.all(workflowIds.map((id) => env.client.describe(id)));
      return descriptions.every((description) => isTerminal(description.status)) ? descriptions : undefined;
    },
    300,
  );
}

/**
 * How a start that lost the race is told: the id exists (the winner's record landed first), or the winner
 * holds the claim at that very moment.
 */
const raceLosses: ReadonlySet<string> = new Set([
  'WorkflowAlreadyExistsError',
  'WorkflowClaimUnavailableError',
]);

const slowInput = (stepMs: number) => ({
  steps: [
    { name: 'extract', ms: 600 },
    { name: 'transform', ms: stepMs },
    { name: 'validate', ms: 600 },
    { name: 'load', ms: 800 },
  ],
});

/** The queue the queue drill starts onto: the demos' (src/workflows/payment.ts), declared by every engine. */
const drillQueue = 'payments';
const queuedPayments = 6;
/** Real time each payment works: long enough that a crash lands while admitted ones run, short for a drill. */
const paymentWorkMs = 4_000;

/**
 * The queue drill's break: the engine that runs admitted payments of `ids` (each with an activity started
 * there), once one does. Tab mode: `victim`, which started them (this tab's engine may admit some too, so it
 * waits for one of the victim's). Server mode: the worker that runs the most of them.
 */
async function waitForQueuedOnVictim(
  context: DrillContext,
  ids: readonly string[],
  victim: EngineRecord | null,
  timeoutMs: number,
): Promise<{ victimId: string; held: string[] }> {
  const { env } = context;
  const found = await waitFor(
    env,
    victim ? `${victim.label} to run an admitted payment` : 'a worker to run an admitted payment',
    timeoutMs,
    async () => {
      const descriptions = await Promise.all(ids.map((id) => env.client.describe(id)));
      if (descriptions.every((description) => isTerminal(description.status))) return 'all ended' as const;
      const running = descriptions.filter(
        (description) =>
          description.status === 'running' &&
          description.owner !== null &&
          description.owner !== undefined &&
          (victim === null || description.owner.engineId === victim.engineId),
      );
      const underWay: { id: string; engineId: string }[] = [];
      for (const description of running) {
        const engineId = description.owner!.engineId;
        const timeline = await env.client.timeline(description.workflowId);
        if (timeline.some((entry) => entry.kind === 'activity-started' && entry.engineId === engineId))
          underWay.push({ id: description.workflowId, engineId });
      }
      if (underWay.length === 0) return undefined;
      const counts = new Map<string, number>();
      for (const { engineId } of underWay) counts.set(engineId, (counts.get(engineId) ?? 0) + 1);
      const [victimId] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
      return {
        victimId,
        held: running
          .filter((description) => description.owner!.engineId === victimId)
          .map((description) => description.workflowId),
      };
    },
    100,
  );
  if (found === 'all ended')
    throw new DrillStepFailed(
      `Every payment ended before ${victim ? victim.label : 'a worker'} was seen running one; run the drill again.`,
    );
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// The drills

const drills: Record<DrillId, (context: DrillContext) => Promise<void>> = {
  async freeze(context) {
    const { env, step, checks } = context;
    const id = drillId('freeze');
    // Short steps back to back: an activity is always in flight, so when the victim wakes up its activity
    // completes and it tries to commit — which the fence refuses.
    const steps = Array.from({ length: 36 }, (_, index) => ({ name: `step-${index + 1}`, ms: 250 }));
    const { victim } = await startOnVictim(context, 'slow-steps', [{ id, input: { steps } }]);
    await step(`Wait until ${victim.label} is under way`, () =>
      waitFor(env, 'two steps to complete', 15_000, async () => {
        const timeline = await env.client.timeline(id);
        return timeline.filter(
          (entry) => entry.kind === 'activity-completed' && entry.engineId === victim.engineId,
        ).length >= 2
          ? true
          : undefined;
      }),
    );
    const freezeSeconds = Math.ceil((claimTimings.ttlMs + claimTimings.graceMs) / 1000) + 4;
    const frozenAt = Date.now();
    await step(`Freeze ${victim.label} for ${freezeSeconds} s${env.server ? ' (SIGSTOP)' : ''}`, () =>
      runChaos(env.client, { type: 'freeze', engineId: victim.engineId, seconds: freezeSeconds }),
    );
    const newOwner = await step(
      'Wait for another engine to take it over',
      () =>
        waitFor(env, 'a takeover', claimTimings.ttlMs + claimTimings.graceMs + 10_000, async () => {
          const description = await env.client.describe(id);
          return description.owner && description.owner.engineId !== victim.engineId
            ? description.owner
            : undefined;
        }),
      (owner) => `epoch ${owner.epoch}, ${formatDuration(Date.now() - frozenAt)} after the freeze`,
    );
    const takeoverMs = Date.now() - frozenAt;
    checks.push({
      title: 'Taken over after the TTL, not before',
      ok: takeoverMs >= claimTimings.ttlMs - claimTimings.renewIntervalMs && newOwner.epoch >= 2,
      summary: `taken over at epoch ${newOwner.epoch} after ${formatDuration(takeoverMs)} (TTL ${formatDuration(claimTimings.ttlMs)})`,
    });
    await step(`Wait for ${victim.label} to wake up`, () =>
      waitFor(env, `${victim.label} to resume`, freezeSeconds * 1000 + 15_000, async () =>
        Date.now() > frozenAt + freezeSeconds * 1000 && !(await isFrozen(env, victim.engineId))
          ? true
          : undefined,
      ),
    );
    await step(
      'Wait for the workflow to finish',
      () => waitForTerminal(context, [id], 60_000),
      (done) => done[0]!.status,
    );
    const refused = await env.client.fenceRejections(id);
    const victimRefused = refused.filter((rejection) => rejection.engineId === victim.engineId);
    const victimNow = (await env.client.engines()).find((engine) => engine.engineId === victim.engineId);
    const lost = victimNow?.counters?.claimsLost ?? 0;
    checks.push({
      title: 'The frozen engine learnt it was deposed',
      ok: victimRefused.length > 0 || lost > 0,
      summary:
        victimRefused.length > 0
          ? `${victimRefused.length} late write${victimRefused.length === 1 ? '' : 's'} of ${victim.label} refused by the fence`
          : lost > 0
            ? `${victim.label} found its claim gone (${lost} lost) before writing anything`
            : `no refused write and no lost claim recorded for ${victim.label}`,
    });
  },

  async crash(context) {
    const { env, step, checks } = context;
    const id = drillId('crash');
    const { victim } = await startOnVictim(context, 'slow-steps', [{ id, input: slowInput(5_000) }]);
    await step(`Wait until ${victim.label} is in the middle of a step`, () =>
      waitFor(env, 'an activity to start', 15_000, async () => {
        const timeline = await env.client.timeline(id);
        return timeline.some(
          (entry) =>
            entry.kind === 'activity-started' &&
            entry.detail.name === 'transform' &&
            entry.engineId === victim.engineId,
        )
          ? true
          : undefined;
      }),
    );
    const crashedAt = Date.now();
    await step(env.server ? `Kill ${victim.label} (SIGKILL)` : `Crash ${victim.label}’s worker`, () =>
      runChaos(env.client, { type: 'crash', engineId: victim.engineId }),
    );
    const owner = await step(
      'Wait for another engine to take it over',
      () =>
        waitFor(
          env,
          'a takeover',
          claimTimings.ttlMs + claimTimings.graceMs + 10_000,
          async () => {
            const description = await env.client.describe(id);
            return description.owner && description.owner.engineId !== victim.engineId
              ? description.owner
              : undefined;
          },
          50,
        ),
      (holder) => `epoch ${holder.epoch}, ${formatDuration(Date.now() - crashedAt)} after the crash`,
    );
    const takeoverMs = Date.now() - crashedAt;
    // The oracle's word moves it before its claim expires: the takeover's reason says which it was.
    const departure = departureFrom(await env.client.timeline(id), victim.engineId);
    checks.push({
      title: `Taken over before the TTL, on the ${env.server ? 'advisory lock' : 'Web Locks'}’ word`,
      ok: departure === 'holder-dead',
      summary: `taken over at epoch ${owner.epoch} after ${formatDuration(takeoverMs)} (TTL ${formatDuration(claimTimings.ttlMs)}), reason ${departure ?? 'none recorded'}`,
    });
    await step(
      'Wait for the workflow to finish',
      () => waitForTerminal(context, [id], 60_000),
      (done) => done[0]!.status,
    );
    await replaceVictim(context, victim);
  },

  async handoff(context) {
    const { env, step, checks } = context;
    const prefix = drillId('handoff');
    const ids = Array.from({ length: 20 }, (_, index) => `${prefix}-${String(index + 1).padStart(2, '0')}`);
    const { victim, victimIds } = await startOnVictim(
      context,
      'countdown',
      ids.map((id) => ({ id, input: { from: 12, tickMs: 500 } })),
    );
    const moved = victimIds.length;
    if (!env.server)
      await step(`Wait until ${victim.label} owns all 20`, () =>
        waitFor(
          env,
          `${victim.label} to own all 20`,
          15_000,
          async () => {
            const descriptions = await Promise.all(ids.map((id) => env.client.describe(id)));
            return descriptions.every(
              (description) =>
                description.owner?.engineId === victim.engineId || isTerminal(description.status),
            )
              ? true
              : undefined;
          },
          200,
        ),
      );
    const shutAt = Date.now();
    await step(
      env.server
        ? `Stop ${victim.label} gracefully (SIGTERM), with ${moved} of them`
        : `Shut ${victim.label} down gracefully`,
      () => runChaos(env.client, { type: 'shutdown', engineId: victim.engineId }),
      (value) => {
        const released = (value as { claimsReleased?: number } | null)?.claimsReleased;
        return released === undefined || env.server ? 'done' : `${released} claims released`;
      },
    );
    await step(
      `Wait for the other engines to take ${moved === 20 ? 'all 20' : `its ${moved}`} over`,
      () =>
        waitFor(
          env,
          'every workflow to have a new owner',
          15_000,
          async () => {
            const descriptions = await Promise.all(victimIds.map((id) => env.client.describe(id)));
            return descriptions.every(
              (description) =>
                isTerminal(description.status) ||
                (description.owner && description.owner.engineId !== victim.engineId),
            )
              ? true
              : undefined;
          },
          50,
        ),
      () => `${formatDuration(Date.now() - shutAt)} after the shutdown`,
    );
    const handoffMs = Date.now() - shutAt;
    // Released claims (or the claims of an ended session) move at once, not when the claims expire. How each
    // moved is in its timeline; the wall-clock time is reported beside it (a busy machine stretches it).
    // (A workflow that never left had finished on the victim before the shutdown.)
    const departures = await Promise.all(
      victimIds.map(async (id) => {
        const [timeline, description] = await Promise.all([env.client.timeline(id), env.client.describe(id)]);
        const departure = departureFrom(timeline, victim.engineId);
        return { departure, finishedThere: departure === null && isTerminal(description.status) };
      }),
    );
    checks.push({
      title: `${moved === 20 ? 'All 20' : `All ${moved} of its workflows`} handed over without waiting for the TTL`,
      ok: departures.every(
        ({ departure, finishedThere }) => finishedThere || (departure !== null && departure !== 'expired'),
      ),
      summary:
        `${describeDepartures(departures.map(({ departure }) => departure))}; every workflow had a new owner ${formatDuration(handoffMs)} after ` +
        `the shutdown (TTL ${formatDuration(claimTimings.ttlMs)})`,
    });
    await replaceVictim(context, victim);
    await step(
      'Wait for all 20 to finish',
      () => waitForTerminal(context, ids, 60_000),
      (done) => `${done.filter((description) => description.status === 'completed').length} completed`,
    );
  },

  async race(context) {
    const { env, step, checks, workflowIds } = context;
    const engines = await step(
      'Find the engine tabs',
      () => liveEngineTabs(env.client),
      (list) => list.map((engine) => engine.label).join(', '),
    );
    if (engines.length === 0) throw new DrillStepFailed('No live engine tab.');
    const racers = [0, 1, 2].map((index) => engines[index % engines.length]!);
    const id = drillId('race');
    const notBefore = Date.now() + 400;
    const outcomes = await step(
      `Start ${id.slice(0, 18)}… from ${racers.map((engine) => engine.label).join(', ')} at one instant`,
      () =>
        Promise.all(
          racers.map((engine) =>
            startOn(env, engine.engineId, 'countdown', { from: 3, tickMs: 200 }, { id, notBefore }).then(
              () => ({ engine, ok: true as const, error: null }),
              (error: unknown) => ({
                engine,
                ok: false as const,
                error: error instanceof Error ? error : new Error(String(error)),
              }),
            ),
          ),
        ),
      (results) =>
        results
          .map((result) => `${result.engine.label}: ${result.ok ? 'started it' : result.error.name}`)
          .join(' · '),
    );
    workflowIds.push(id);
    const winners = outcomes.filter((outcome) => outcome.ok);
    const losers = outcomes.filter((outcome) => !outcome.ok);
    checks.push({
      title: 'Exactly one start won',
      ok:
        winners.length === 1 &&
        losers.every((outcome) => outcome.error !== null && raceLosses.has(outcome.error.name)),
      summary: `${winners.length} won; ${losers.map((outcome) => `${outcome.engine.label} got ${outcome.error?.name}`).join(', ') || 'none lost'}`,
    });
    await step(
      'Wait for the workflow to finish',
      () => waitForTerminal(context, [id], 30_000),
      (done) => done[0]!.status,
    );
    const timeline = await env.client.timeline(id);
    const starts = timeline.filter((entry) => entry.kind === 'started').length;
    checks.push({
      title: 'It was started and run once',
      ok: starts === 1,
      summary: `${starts} 'started' entr${starts === 1 ? 'y' : 'ies'} on its timeline`,
    });
  },

  async 'queue-crash'(context) {
    const { env, step, checks, workflowIds } = context;
    const queue = await step(
      `Read the ${drillQueue} queue’s limits`,
      () => env.client.api.describeQueue({ name: drillQueue }),
      queueLimitsText,
    );
    if (queue.concurrency === null)
      throw new DrillStepFailed(
        `The ${drillQueue} queue has no concurrency limit, so there is no limit to check; declare it with one (src/workflows/payment.ts).`,
      );
    const prefix = drillId('queue');
    // Three keys, two payments each, interleaved: the queue's limit binds, and its per-key limit too.
    const payments = Array.from({ length: queuedPayments }, (_, index) => {
      const customer = ['a', 'b', 'c'][index % 3]!;
      return {
        id: `${prefix}-${index + 1}`,
        input: { customer: `drill-${customer}`, amount: 10 + index, workMs: paymentWorkMs },
        concurrencyKey: `${prefix}-${customer}`,
      };
    });
    const ids = payments.map(({ id }) => id);
    let victim: EngineRecord | null = null;
    if (env.server) {
      const workers = await step(
        'Find the worker processes',
        () => liveEngineTabs(env.client),
        (list) => list.map((engine) => engine.label).join(', '),
      );
      if (workers.length < 2)
        throw new DrillStepFailed(
          'This drill needs two live worker processes: start one more and run it again.',
        );
      await step(
        `Start ${queuedPayments} payments on the fleet onto ${drillQueue}`,
        async () => {
          // One at a time: the queue admits in the order they were enqueued.
          for (const { id, input, concurrencyKey } of payments)
            await env.client.start('payment', input, { id, concurrencyKey });
        },
        () => `${queuedPayments} started, keys ${prefix.slice(0, 12)}…-a, -b, -c`,
      );
    } else {
      const other = await pickVictim(context);
      victim = other;
      await step(`Start ${queuedPayments} payments on ${other.label} onto ${drillQueue}`, async () => {
        for (const { id, input, concurrencyKey } of payments)
          await env.client.chaos.start(other.engineId, 'payment', {
            input,
            options: { id, concurrencyKey },
          });
      });
    }
    workflowIds.push(...ids);
    // A rate-limited queue may hold them back until its window turns (another run of the drill, the demos).
    const admissionMs = 30_000 + (queue.rateLimit?.periodMs ?? 0);
    const { victimId, held } = await step(
      victim
        ? `Wait until ${victim.label} runs admitted payments`
        : 'Wait until a worker runs admitted payments',
      () => waitForQueuedOnVictim(context, ids, victim, admissionMs),
      (found) => `${found.held.length} running there`,
    );
    if (!victim) {
      victim = (await env.client.engines()).find((engine) => engine.engineId === victimId) ?? null;
      if (!victim)
        throw new DrillStepFailed(`The owner ${victimId.slice(0, 8)} is not listed among the engines.`);
    }
    const broken = victim;
    const crashedAt = Date.now();
    await step(
      env.server
        ? `Kill ${broken.label} (SIGKILL), with ${held.length} admitted payment${held.length === 1 ? '' : 's'}`
        : `Crash ${broken.label}’s worker, with ${held.length} admitted payment${held.length === 1 ? '' : 's'}`,
      () => runChaos(env.client, { type: 'crash', engineId: broken.engineId }),
    );
    await step(
      `Wait for the others to take ${held.length === 1 ? 'it' : `its ${held.length}`} over`,
      () =>
        waitFor(
          env,
          'a takeover',
          claimTimings.ttlMs + claimTimings.graceMs + 10_000,
          async () => {
            const descriptions = await Promise.all(held.map((id) => env.client.describe(id)));
            return descriptions.every(
              (description) =>
                isTerminal(description.status) ||
                (description.owner && description.owner.engineId !== broken.engineId),
            )
              ? true
              : undefined;
          },
          50,
        ),
      () => `${formatDuration(Date.now() - crashedAt)} after the crash`,
    );
    const ended = await step(
      `Wait for all ${queuedPayments} to finish`,
      // Two at a time, a few seconds each, behind the rate window if it is spent.
      () => waitForTerminal(context, ids, 90_000 + (queue.rateLimit?.periodMs ?? 0)),
      (done) => `${done.filter((description) => description.status === 'completed').length} completed`,
    );
    await replaceVictim(context, broken);

    const timelines = new Map(
      await Promise.all(ids.map(async (id) => [id, await env.client.timeline(id)] as const)),
    );
    const holds = payments
      .map(({ id, concurrencyKey }) => queueHoldFrom(id, timelines.get(id)!, drillQueue, concurrencyKey))
      .filter((hold): hold is QueueHold => hold !== null);
    const limit = checkQueueLimit(holds, queue);
    // The payments it ran when it crashed moved to another engine (their timelines say it left them) and
    // finished there, admitted once: the slot moved with the workflow, it was not admitted again.
    const moved = ids
      .map((id) => {
        const timeline = timelines.get(id)!;
        const hold = holds.find((one) => one.workflowId === id);
        return {
          id,
          departure: departureFrom(timeline, broken.engineId),
          admissions: timeline.filter((entry) => entry.kind === 'started').length,
          endedElsewhere: hold?.endedBy != null && hold.endedBy !== broken.engineId,
        };
      })
      .filter((one) => one.departure !== null);
    const completed = ended.filter((description) => description.status === 'completed').length;
    const perKey =
      queue.perKeyConcurrency === null
        ? ''
        : ` (at most ${limit.peakPerKey} of ${queue.perKeyConcurrency} per key)`;
    const notAdmitted = ids.filter((id) => !holds.some((hold) => hold.workflowId === id));
    checks.push({
      title: `Never more than the queue admits at once (${queueLimitsText(queue)})`,
      ok: limit.violations.length === 0 && notAdmitted.length === 0,
      summary:
        limit.violations.length > 0
          ? `${limit.violations[0]}${limit.violations.length > 1 ? ` (and ${limit.violations.length - 1} more)` : ''}`
          : notAdmitted.length > 0
            ? `${notAdmitted.length} not admitted from ${drillQueue}: ${notAdmitted.join(', ')}`
            : `at most ${limit.peak} of ${queue.concurrency} at once${perKey}; ${completed} of ${queuedPayments} completed; ${broken.label} held ${moved.length} of them when it ${env.server ? 'was killed' : 'crashed'}`,
    });
    checks.push({
      title: `All ${queuedPayments} payments completed`,
      ok: completed === queuedPayments,
      summary:
        completed === queuedPayments
          ? `${completed} of ${queuedPayments} completed`
          : `${completed} of ${queuedPayments} completed; ${ended
              .filter((description) => description.status !== 'completed')
              .map((description) => `${description.workflowId} ${description.status}`)
              .join(', ')}`,
    });
    const notElsewhere = moved.filter((one) => !one.endedElsewhere).map((one) => one.id);
    const readmitted = moved.filter((one) => one.admissions !== 1).map((one) => one.id);
    checks.push({
      title: `The crashed ${env.server ? 'worker' : 'tab'}’s payments finished elsewhere, admitted once`,
      ok: moved.length > 0 && notElsewhere.length === 0 && readmitted.length === 0,
      summary:
        moved.length === 0
          ? `no payment left ${broken.label} (it ran ${held.length} a moment before the crash)`
          : `${moved.length} taken from ${broken.label} (${describeDepartures(moved.map((one) => one.departure))}); ` +
            `${moved.length - notElsewhere.length} ended on another engine` +
            (notElsewhere.length > 0 ? `; not: ${notElsewhere.join(', ')}` : '') +
            (readmitted.length > 0 ? `; admitted more than once: ${readmitted.join(', ')}` : ''),
    });
    const after = await step(
      `Read the ${drillQueue} queue`,
      () => env.client.api.describeQueue({ name: drillQueue }),
      (view) => `${view.running ?? 0} running, ${view.waiting} waiting`,
    );
    const ours = new Set(ids);
    const stillHeld = after.slots.filter((slot) => ours.has(slot.workflowId));
    const stillWaiting = after.next.filter((entry) => ours.has(entry.workflowId));
    checks.push({
      title: 'The queue holds none of their slots at the end',
      ok: stillHeld.length === 0 && stillWaiting.length === 0,
      summary:
        stillHeld.length === 0 && stillWaiting.length === 0
          ? `${drillQueue}: ${after.running ?? 0} running, ${after.waiting} waiting, none of the drill’s`
          : [
              stillHeld.length > 0
                ? `slot${stillHeld.length === 1 ? '' : 's'} still held by ${stillHeld.map((slot) => `${slot.workflowId} (slot ${slot.slot})`).join(', ')}`
                : null,
              stillWaiting.length > 0
                ? `still waiting: ${stillWaiting.map((entry) => entry.workflowId).join(', ')}`
                : null,
            ]
              .filter((part) => part !== null)
              .join('; '),
    });
  },
};
