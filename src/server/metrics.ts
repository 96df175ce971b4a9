/**
 * The worker's metrics endpoint (`--metrics-port`): Prometheus text at `/metrics` — the engine's counters and
 * gauges (claims held and lost, takeovers, renewals, fenced writes, workflows started and finished, storage
 * transactions…), read from `engine.metrics()` at each scrape — and a health check at `/healthz`: 200 while
 * the engine runs, 503 otherwise, with a one-line JSON body either way. Workflow ids are never labels.
 *
 * Workflow queues get gauges labelled by queue name, read from `engine.queues()` once per scrape: running (its
 * held slots) and its limit, waiting, how long the next to be admitted has waited, admissions in the current
 * rate window — the same figures from every worker of the store (take `max by (queue)`, not a sum) — and how
 * many this engine drives.
 */
import { createServer, type Server } from 'node:http';
import client from 'prom-client';
import type { EngineMetrics, QueueView } from '../engine';
import type { HostStatus } from '../protocol';

export type MetricsSource = {
  metrics(): EngineMetrics | null;
  status(): HostStatus;
  engineId: string;
  /** The store's queues (`engine.queues()`), for the queue gauges; absent: none are exported. */
  queues?(): Promise<QueueView[]>;
};

/** Registers the engine's figures on a fresh registry (gauges read at scrape time). */
export function engineRegistry(source: MetricsSource): client.Registry {
  const registry = new client.Registry();
  registry.setDefaultLabels({ engine_id: source.engineId });
  const gauge = (name: string, help: string, read: (metrics: EngineMetrics) => number) =>
    new client.Gauge({
      name: `shuttle_${name}`,
      help,
      registers: [registry],
      collect() {
        const metrics = source.metrics();
        if (metrics) this.set(read(metrics));
      },
    });
  gauge('claims_held', 'Workflows whose claim this engine holds now.', (m) => m.claimsHeld);
  gauge(
    'claims_lost_total',
    'Claims this engine lost (taken over, rotated, or refused at a write).',
    (m) => m.claimsLost,
  );
  gauge('renewals_total', 'Session renewals that landed.', (m) => m.renewals);
  gauge(
    'renewal_failures_total',
    'Session renewals that failed (storage errors) or found the session lost.',
    (m) => m.renewalFailures,
  );
  gauge(
    'writes_fenced_out_total',
    'Writes of this engine refused by the epoch fence.',
    (m) => m.writesFencedOut,
  );
  gauge(
    'wakes_discarded_total',
    'Wake-ups discarded because this engine no longer owned the workflow.',
    (m) => m.wakesDiscarded,
  );
  gauge('workflows_started_total', 'Workflows started through this engine.', (m) => m.workflowsStarted);
  gauge(
    'workflows_finished_total',
    'Workflows this engine drove to a terminal status.',
    (m) => m.workflowsFinished,
  );
  gauge(
    'operations_committed_total',
    'Workflow operations committed by this engine.',
    (m) => m.operationsCommitted,
  );
  gauge('activities_run_total', 'Activity attempts started by this engine.', (m) => m.activitiesRun);
  gauge(
    'activity_waits_total',
    'Activity attempts that waited for a slot of their concurrency limit group.',
    (m) => m.activityWaits,
  );
  gauge(
    'storage_transactions_total',
    'Storage transactions this engine committed.',
    (m) => m.storageTransactions,
  );
  gauge('result_waiters_pending', 'result() calls waiting on this engine.', (m) => m.resultWaitersPending);
  const claims = new client.Gauge({
    name: 'shuttle_claim_attempts_total',
    help: 'Claim attempts by outcome.',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const metrics = source.metrics();
      if (!metrics) return;
      for (const [outcome, count] of Object.entries(metrics.claimAttempts)) this.set({ outcome }, count);
    },
  });
  void claims;
  if (source.queues) queueGauges(registry, source.queues.bind(source));
  return registry;
}

/**
 * The queue gauges, labelled by queue: one `engine.queues()` read serves every gauge of a scrape — the first
 * gauge's collect (a scrape collects them in registration order) reads the store, the others take its read.
 */
function queueGauges(registry: client.Registry, read: () => Promise<QueueView[]>): void {
  let current: Promise<QueueView[]> | null = null;
  const refresh = () => (current = read().catch(() => []));
  let first = true;
  const gauge = (name: string, help: string, value: (queue: QueueView, now: number) => number | null) => {
    const reads = first;
    first = false;
    return new client.Gauge({
      name: `shuttle_queue_${name}`,
      help,
      labelNames: ['queue'],
      registers: [registry],
      async collect() {
        const views = await (reads ? refresh() : (current ?? refresh()));
        this.reset();
        const now = Date.now();
        for (const queue of views) {
          const figure = value(queue, now);
          if (figure !== null) this.set({ queue: queue.name }, figure);
        }
      },
    });
  };
  gauge(
    'running',
    'Workflows of the queue admitted and not finished (its held slots; store-wide). Only for queues with a concurrency limit.',
    (queue) => queue.running,
  );
  gauge('concurrency_limit', "The queue's concurrency limit.", (queue) => queue.concurrency);
  gauge(
    'waiting',
    'Workflows waiting in the queue to be admitted (store-wide; counted up to 10,000).',
    (queue) => queue.waiting,
  );
  gauge(
    'next_wait_seconds',
    'How long the workflow next to be admitted has waited (0 when none waits).',
    (queue, now) => (queue.oldestEnqueuedAt === null ? 0 : Math.max(0, now - queue.oldestEnqueuedAt) / 1000),
  );
  gauge(
    'rate_window_admissions',
    "Admissions in the queue's current rate window (rate-limited queues).",
    (queue) => queue.rate?.usedInWindow ?? null,
  );
  gauge('driven_here', "The queue's workflows this engine drives now.", (queue) => queue.drivenHere);
}

/** Serves `/metrics` and `/healthz` on `port` (127.0.0.1 unless `host` says otherwise). */
export async function serveMetrics(source: MetricsSource, port: number, host = '127.0.0.1'): Promise<Server> {
  const registry = engineRegistry(source);
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      registry
        .metrics()
        .then((text) => {
          response.writeHead(200, { 'content-type': registry.contentType });
          response.end(text);
        })
        .catch((error: unknown) => {
          response.writeHead(500, { 'content-type': 'text/plain' });
          response.end(String(error));
        });
      return;
    }
    if (path === '/healthz') {
      const status = source.status();
      const healthy = status.state === 'running';
      response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          status: status.state,
          engineId: source.engineId,
          ...(status.message ? { message: status.message } : {}),
        }),
      );
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('Not found: this server answers /metrics and /healthz.\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
