/**
 * Cross-tab latency in the studio: a signal sent from one tab to a workflow another tab owns, and a result
 * awaited in one tab for a workflow another tab runs. Three tabs — A owns the workflows, B signals, C waits —
 * on one fresh database.
 *
 * - Signal: A starts an `order` (the built-in demo that waits for the `approve` signal after two short
 *   activities); once A's describe says it waits for the signal, B takes `t0 = Date.now()` in its page and
 *   calls `shuttle.signal`. The figure is the `at` of the `signal-consumed` entry A commits, minus t0.
 *   The order then finishes (its packing and transit are shortened to 10 ms).
 * - Result: A starts a short countdown and C at once calls `shuttle.result(id)`. The figure is `Date.now()` in
 *   C's page when the call settles, minus the workflow's `endedAt` (A's clock when it committed the end).
 *   The waiter's own record in C's engine (`resultWaiters()`: how it settled — change feed or poll — and the
 *   engine-side latency) goes to the details. A run whose waiter registered after the end is not counted.
 */
import type { BrowserContext } from '@playwright/test';
import { summarize, type SampleSummary } from '../stats';
import { auditDatabase, type DatabaseAudit } from './audit';
import { pollUntil, StudioTab } from './tab';

export type SignalRun = {
  run: number;
  workflowId: string;
  sentAt: number;
  receivedAt: number | null;
  consumedAt: number | null;
  latencyMs: number | null;
  consumedBy: string | null;
  completed: boolean;
  error?: string;
};

export type ResultRun = {
  run: number;
  workflowId: string;
  endedAt: number | null;
  settledAt: number | null;
  latencyMs: number | null;
  waiterSince: number | null;
  settledVia: string | null;
  engineLatencyMs: number | null;
  error?: string;
};

export type CrossTabFigures = {
  databaseName: string;
  tabs: { owner: string; signaller: string; waiter: string };
  signal: { runs: SignalRun[]; latencyMs: SampleSummary };
  result: { runs: ResultRun[]; latencyMs: SampleSummary; engineLatencyMs: SampleSummary };
  audit: DatabaseAudit | null;
};

export type CrossTabOptions = {
  signalRuns: number;
  resultRuns: number;
  log: (message: string) => void;
};

function orderInput(run: number): Record<string, unknown> {
  return {
    orderId: `BENCH-${run}`,
    customer: 'bench@example.com',
    items: [{ sku: 'TEA-GREEN-250G', quantity: 1, unitPriceCents: 850 }],
    shippingAddress: '1 Benchmark Lane',
    paymentGatewayFailures: 0,
    approvalTimeoutMs: 120_000,
    packingMs: 10,
    transitMs: 10,
  };
}

async function measureSignal(owner: StudioTab, signaller: StudioTab, run: number): Promise<SignalRun> {
  const workflowId = `signal-${run}`;
  const record: SignalRun = {
    run,
    workflowId,
    sentAt: 0,
    receivedAt: null,
    consumedAt: null,
    latencyMs: null,
    consumedBy: null,
    completed: false,
  };
  try {
    await owner.start('order', orderInput(run), { id: workflowId });
    const waiting = await pollUntil(
      'the order to wait for its approve signal',
      async () => {
        const description = await owner.describe(workflowId);
        if (description.status !== 'running') throw new Error(`the order is ${description.status}`);
        return description.pending?.kind === 'signal' ? description : undefined;
      },
      { intervalMs: 50 },
    );
    if (waiting.owner?.engineId !== owner.engineId)
      throw new Error(`the order is owned by ${waiting.owner?.engineId ?? 'nobody'}, not tab A`);
    record.sentAt = await signaller.signalAt(workflowId, 'approve', { ok: true, by: 'bench' });
    const consumed = await pollUntil(
      'the signal to be consumed',
      async () => (await owner.timeline(workflowId)).find((entry) => entry.kind === 'signal-consumed'),
      { intervalMs: 50 },
    );
    const timeline = await owner.timeline(workflowId);
    record.receivedAt = timeline.find((entry) => entry.kind === 'signal-received')?.at ?? null;
    record.consumedAt = consumed.at;
    record.consumedBy = consumed.engineId;
    record.latencyMs = consumed.at - record.sentAt;
    await pollUntil(
      'the order to complete',
      async () => ((await owner.describe(workflowId)).status === 'completed' ? true : undefined),
      { intervalMs: 100 },
    );
    record.completed = true;
  } catch (error) {
    record.error = error instanceof Error ? error.message : String(error);
  }
  return record;
}

async function measureResult(owner: StudioTab, waiter: StudioTab, run: number): Promise<ResultRun> {
  const workflowId = `result-${run}`;
  const record: ResultRun = {
    run,
    workflowId,
    endedAt: null,
    settledAt: null,
    latencyMs: null,
    waiterSince: null,
    settledVia: null,
    engineLatencyMs: null,
  };
  try {
    await owner.start('countdown', { from: 10, tickMs: 20 }, { id: workflowId });
    const settled = await waiter.resultSettledAt(workflowId);
    if (!settled.ok) throw new Error('shuttle.result rejected');
    const description = await owner.describe(workflowId);
    if (description.endedAt === undefined) throw new Error('the workflow has no endedAt');
    record.endedAt = description.endedAt;
    record.settledAt = settled.settledAt;
    const info = (await waiter.resultWaiters()).find((candidate) => candidate.workflowId === workflowId);
    record.waiterSince = info?.since ?? null;
    record.settledVia = info?.settled?.via ?? null;
    record.engineLatencyMs = info?.settled?.latencyMs ?? null;
    if (record.waiterSince !== null && record.waiterSince >= description.endedAt)
      throw new Error('the waiter registered only after the workflow ended');
    record.latencyMs = settled.settledAt - description.endedAt;
  } catch (error) {
    record.error = error instanceof Error ? error.message : String(error);
  }
  return record;
}

/** Measures cross-tab signal and result latency on a fresh database with three tabs. */
export async function measureCrossTab(
  context: BrowserContext,
  baseUrl: string,
  options: CrossTabOptions,
): Promise<CrossTabFigures> {
  const databaseName = `bench-cross-tab-${Date.now().toString(36)}`;
  const owner = await StudioTab.open(context, baseUrl, databaseName);
  const signaller = await StudioTab.open(context, baseUrl, databaseName);
  const waiter = await StudioTab.open(context, baseUrl, databaseName);
  try {
    const signalRuns: SignalRun[] = [];
    for (let run = 1; run <= options.signalRuns; run++) {
      const record = await measureSignal(owner, signaller, run);
      signalRuns.push(record);
      options.log(
        `cross-tab signal ${run}/${options.signalRuns}: ${record.error ? `failed: ${record.error}` : `${record.latencyMs} ms`}`,
      );
    }
    const resultRuns: ResultRun[] = [];
    for (let run = 1; run <= options.resultRuns; run++) {
      const record = await measureResult(owner, waiter, run);
      resultRuns.push(record);
      options.log(
        `cross-tab result ${run}/${options.resultRuns}: ` +
          (record.error
            ? `failed: ${record.error}`
            : `${record.latencyMs} ms (settled via ${record.settledVia})`),
      );
    }
    const measured = <T extends { latencyMs: number | null; error?: string }>(runs: T[]) =>
      runs.flatMap((run) => (run.latencyMs === null || run.error ? [] : [run.latencyMs]));
    return {
      databaseName,
      tabs: { owner: owner.engineId, signaller: signaller.engineId, waiter: waiter.engineId },
      signal: { runs: signalRuns, latencyMs: summarize(measured(signalRuns)) },
      result: {
        runs: resultRuns,
        latencyMs: summarize(measured(resultRuns)),
        engineLatencyMs: summarize(
          resultRuns.flatMap((run) =>
            run.engineLatencyMs === null || run.error ? [] : [run.engineLatencyMs],
          ),
        ),
      },
      audit: await auditDatabase(owner, databaseName),
    };
  } finally {
    for (const tab of [owner, signaller, waiter]) await tab.page.close().catch(() => undefined);
  }
}
