/**
 * The engine's browser throughput: workflows of sequential trivial activities on the real engine, set up as
 * the studio sets up a tab's engine (IndexedDbStorage, ownership `workflow-lease` with the studio's claim
 * timings, Web Locks liveness), in the bench worker.
 *
 * Every measurement gets its own engine on its own fresh database, created before the clock starts and shut
 * down (and the database deleted) after it stops, so no engine runs in the worker while the raw ceiling is
 * measured and rounds do not slow down as a database grows. The elapsed time runs from the first `start`
 * call to the last result, so it includes each workflow's start and completion commits; only activity steps
 * are counted.
 */
import { createEngine, defineWorkflow, type Engine } from '../../src/engine';
import { hostClaimTimings } from '../../src/protocol';
import { IndexedDbStorage, type IndexedDbDurability } from '../../src/storage';

import { WebLocksLiveness } from '../../src/worker/web-locks-liveness';
import { countDuplicateCommits } from '../timeline-audit';
import type { EngineSample, WorkerAudit } from './protocol';
import { deleteDatabase } from './raw-transactions';

/** How many times each (workflow, step) activity ran: an activity running twice would show here. */
const activityRuns = new Map<string, number>();

/** The bench workflow: `steps` sequential activities that return at once. */
export const benchSteps = defineWorkflow({
  name: 'bench-steps',
  version: 1,
  *run(ctx, input: { steps: number }) {
    let sum = 0;
    for (let step = 0; step < input.steps; step++)
      sum += yield* ctx.activity('step', () => {
        const key = `${ctx.workflowId}#${step}`;
        activityRuns.set(key, (activityRuns.get(key) ?? 0) + 1);
        return step;
      });
    return sum;
  },
});

let databaseCounter = 0;

function freshDatabaseName(label: string): string {
  databaseCounter++;
  return `shuttle-bench-${label}-${Date.now().toString(36)}-${databaseCounter}`;
}

async function openEngine(
  databaseName: string,
  durability: IndexedDbDurability,
): Promise<{ engine: Engine; storage: IndexedDbStorage }> {
  const storage = new IndexedDbStorage({ databaseName, durability });
  await storage.open();
  const engine = await createEngine({
    storage,
    workflows: [benchSteps],
    ownership: 'workflow-lease',
    // The studio's claim timings, so the bench measures the engine as the studio runs it.
    workflowClaimTtlMs: hostClaimTimings.ttlMs,
    workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
    ...(WebLocksLiveness.isSupported() ? { liveness: new WebLocksLiveness() } : {}),
    onWarning: (warning) => console.warn(`[bench engine] ${warning.name}: ${warning.message}`),
  });
  return { engine, storage };
}

/** Audits what the measurement committed: duplicate commits in each timeline, activities run twice. */
async function auditWorkflows(engine: Engine, ids: readonly string[], steps: number, audit: WorkerAudit) {
  for (const id of ids) {
    const timeline = await engine.timeline(id);
    const result = countDuplicateCommits(timeline, { kind: 'activity-completed', count: steps });
    audit.workflows++;
    audit.duplicateCommits += result.duplicates;
    for (const finding of result.findings) audit.findings.push(`${id}: ${finding}`);
    for (let step = 0; step < steps; step++) {
      const runs = activityRuns.get(`${id}#${step}`) ?? 0;
      if (runs > 1) {
        audit.activityReruns += runs - 1;
        audit.findings.push(`${id}: activity ${step} ran ${runs} times`);
      }
      activityRuns.delete(`${id}#${step}`);
    }
  }
}

/**
 * Runs `workflows` bench workflows of `stepsPerWorkflow` steps at once on a fresh engine and database, and
 * reports the step rate. `workflows: 1` is the sequential figure. `clock` is told when the measured time
 * starts and stops (the profile brackets exactly that).
 */
export async function measureEngineSteps(
  workflows: number,
  stepsPerWorkflow: number,
  audit: WorkerAudit,
  clock: { started?: () => void; stopped?: () => void } = {},
  durability: IndexedDbDurability = 'default',
): Promise<EngineSample> {
  const databaseName = freshDatabaseName(workflows === 1 ? 'sequential' : 'parallel');
  const { engine, storage } = await openEngine(databaseName, durability);
  try {
    const before = engine.metrics();
    clock.started?.();
    const started = performance.now();
    const handles = await Promise.all(
      Array.from({ length: workflows }, () => engine.start(benchSteps, { steps: stepsPerWorkflow })),
    );
    const startsMs = performance.now() - started;
    const results = await Promise.all(handles.map((handle) => handle.result()));
    const elapsedMs = performance.now() - started;
    clock.stopped?.();
    const after = engine.metrics();
    const expectedSum = (stepsPerWorkflow * (stepsPerWorkflow - 1)) / 2;
    if (results.some((sum) => sum !== expectedSum))
      throw new Error(
        `a bench workflow returned a wrong sum (expected ${expectedSum}): ${results.join(', ')}`,
      );
    await auditWorkflows(
      engine,
      handles.map((handle) => handle.workflowId),
      stepsPerWorkflow,
      audit,
    );
    const operations = workflows * stepsPerWorkflow;
    return {
      operations,
      elapsedMs,
      perSecond: (operations * 1000) / elapsedMs,
      workflows,
      stepsPerWorkflow,
      startsMs,
      transactions: after.storageTransactions - before.storageTransactions,
      groupedTransactions: after.groupedTransactions - before.groupedTransactions,
      groupedBatches: after.groupedBatches - before.groupedBatches,
    };
  } finally {
    await engine.shutdown().catch(() => undefined);
    await storage.close().catch(() => undefined);
    await deleteDatabase(databaseName);
  }
}
