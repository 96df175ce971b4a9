/**
 * The browser half of the `queues` part (bench/README.md, Queues): the rounds of bench/queues-rounds.ts, run
 * in one bench tab whose engine lives in a dedicated worker set up as a studio tab's, over a fresh IndexedDB
 * database (bench/browser/queues.worker.ts). Every time is taken in the worker; the Playwright round trip of
 * each request is outside every measured interval. Commits: the engine's IndexedDB transactions that wrote
 * (`metrics().storageTransactions`) during each run.
 */
import type { BrowserContext, Page } from '@playwright/test';
import type { QueuesReply, QueuesRequest } from '../browser/protocol';
import {
  halfDetails,
  halfFigures,
  runQueueRounds,
  type QueueRoundsOptions,
  type RunSample,
} from '../queues-rounds';
import type { QueuesHalfInput } from '../queues-results';
import type { QueueWorkload } from '../queues-workload';

export type BrowserQueuesOptions = QueueRoundsOptions & { workload: QueueWorkload };

async function send<K extends QueuesReply['kind']>(
  page: Page,
  request: QueuesRequest,
  expected: K,
): Promise<Extract<QueuesReply, { kind: K }>> {
  const reply = await page.evaluate((message) => window.shuttleBench!.queues(message), request);
  if (reply.kind !== expected)
    throw new Error(`The bench tab answered '${reply.kind}' to '${request.kind}', not '${expected}'.`);
  return reply as Extract<QueuesReply, { kind: K }>;
}

export async function measureQueuesBrowser(
  context: BrowserContext,
  baseUrl: string,
  options: BrowserQueuesOptions,
): Promise<{ figures: QueuesHalfInput; details: unknown }> {
  const { log } = options;
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      log(`page ${message.type()}: ${message.text()}`);
  });
  const databaseName = `shuttle-bench-queues-${Date.now().toString(36)}`;
  try {
    await page.goto(`${baseUrl}/bench.html`);
    await page.waitForFunction(() => window.shuttleBench !== undefined, undefined, { timeout: 30_000 });
    const opened = await send(page, { kind: 'open', databaseName }, 'opened');
    const result = await runQueueRounds(
      {
        latency: async (mode) => (await send(page, { kind: 'latency', mode }, 'latency')).sample,
        throughput: async (mode): Promise<RunSample> => {
          const { sample } = await send(
            page,
            { kind: 'throughput', mode, workload: options.workload },
            'throughput',
          );
          if (sample.audit.incomplete > 0 || sample.audit.badSlots > 0)
            throw new Error(
              `${mode}: ${sample.audit.incomplete} timelines without a start or an end, ${sample.audit.badSlots} admissions without a slot of the queue`,
            );
          return {
            kind: mode,
            workflows: sample.workflows,
            elapsedMs: sample.elapsedMs,
            workflowsPerSecond: sample.workflowsPerSecond,
            commits: sample.storageTransactions,
            commitsPerSecond: Math.round((sample.storageTransactions / sample.elapsedMs) * 1000),
            maxConcurrent: sample.audit.maxConcurrent,
            extra: { audit: sample.audit },
          };
        },
      },
      options,
    );
    const { log: _log, ...recorded } = options;
    return {
      figures: halfFigures(result),
      details: {
        options: recorded,
        engineId: opened.engineId,
        databaseName,
        ...halfDetails(result, ['queued', 'batched']),
      },
    };
  } finally {
    await send(page, { kind: 'close', deleteDatabase: databaseName }, 'closed').catch(() => undefined);
    await page.close().catch(() => undefined);
  }
}
