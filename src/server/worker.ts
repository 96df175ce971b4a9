/**
 * `shuttle worker`: one engine in this Node process, running the workflows of the definitions it was given,
 * sharing a store (PostgreSQL, or the embedded one) with every other engine on it.
 *
 * What it does, in order: loads and checks the definitions (a broken file stops it before anything is
 * written), opens the store, starts the engine (`workflow-lease`: per-workflow claims kept alive by the
 * process's session, fenced by epochs) behind the same host a studio tab uses — so it has a presence record,
 * the studio lists it, and its custody shows in every timeline — then serves metrics if asked.
 *
 * Guarantees:
 * - On PostgreSQL the process holds its liveness lock for its whole life: killed with `kill -9`, its
 *   workflows move at once; other processes' deaths reach it within a fraction of a second (a polling death
 *   watch) and it takes their work.
 * - `SIGTERM`/`SIGINT`: stop claiming, end the session (every claim is free at once), exit within 2 s; a
 *   second signal exits at once. Logs are JSON lines (log.ts).
 * - Definitions saved in the studio are not loaded unless `loadStudioDefinitions` is set: the browser cannot
 *   make a server run code.
 */
import { hostname } from 'node:os';
import type { Server } from 'node:http';
import type { AnyWorkflowDefinition, Engine, EngineOptions, ShutdownReport } from '../engine';
import { PollingDeathWatch } from '../host/death-watch';
import { serveEngineHost, type EngineHost } from '../host/engine-host';
import { allocateProcessIdentity } from '../host/presence';
import { hostClaimTimings } from '../protocol';
import { loadDefinitions, serverQueues } from './definitions';
import { createLogger, logEngineEvent, type Logger } from './log';
import { serveMetrics } from './metrics';
import { openStore, type OpenedStore, type StoreOptions } from './store';
import { builtInActivityLimits } from '../workflows';

/** Options of `startWorker` (the flags of `shuttle worker`). */
export type WorkerOptions = StoreOptions & {
  /** Definition files or folders (`--workflows`); none: the built-in demos. */
  workflows?: readonly string[];
  /** Also run the built-in demos besides `workflows` (`--demos`). */
  demos?: boolean;
  /**
   * Definitions given in code, for a program that runs a worker in its own process: used as given instead of
   * `workflows` and `demos` (no file is read or compiled; their determinism is the program's lint's job).
   */
  definitions?: readonly AnyWorkflowDefinition[];
  /** The process's label in the studio (`--label`). Default `worker-<n>`. */
  label?: string;
  /** Serve Prometheus metrics and a health check on this port (`--metrics-port`). */
  metricsPort?: number;
  /** How long a silent process keeps its workflows, in ms (`--claim-ttl-ms`). Default 6,000. */
  claimTtlMs?: number;
  /** How often the process renews its session, in ms (`--renew-interval-ms`). Default 1,000. */
  renewIntervalMs?: number;
  /**
   * How long a finished run is kept, in ms after it ended, for types whose definition sets no `retentionMs`
   * of its own (`--retention`). Default: kept forever.
   */
  retentionMs?: number;
  /** Spans for the worker's engine (`createEngine`'s `tracer`, e.g. `openTelemetryTracer()` from `shuttle/opentelemetry`). */
  tracer?: EngineOptions['tracer'];
  /** Middleware around activities and workflows (`createEngine`'s `interceptors`). */
  interceptors?: EngineOptions['interceptors'];
  /** Encodes payloads before they are stored, e.g. encryption (`createEngine`'s `codec`). */
  codec?: EngineOptions['codec'];
  /**
   * Workflow queues the engine declares (`createEngine`'s `queues`: `defineQueue(…)`s, or name → options),
   * besides those the `workflows` modules export. Declare the same on every engine that shares the store.
   */
  queues?: EngineOptions['queues'];
  /**
   * Activity concurrency limits (`createEngine`'s `activityLimits`: group → `{ concurrency?, perEngine? }`).
   * Declare the same on every engine that runs the activities: they are not stored, and each engine enforces
   * the limits it was given.
   */
  activityLimits?: EngineOptions['activityLimits'];
  /** Run definitions saved in the studio too (`--load-studio-definitions`). Default false. */
  loadStudioDefinitions?: boolean;
  /**
   * A store this process already has open, to run on instead of opening one from the options (`shuttle
   * serve --engines N` shares its own, which is how an embedded store serves several engines of one
   * process). It stays open when the worker stops: whoever opened it closes it.
   */
  store?: OpenedStore;
  logger?: Logger;
};

export type RunningWorker = {
  readonly engineId: string;
  readonly label: string;
  readonly store: OpenedStore;
  readonly host: EngineHost;
  readonly engine: Engine;
  /** Stops gracefully (ends the session, closes the store): waits up to `patienceMs` (default 1,500) for the shutdown, then up to 300 ms for the store to close. */
  stop(patienceMs?: number): Promise<ShutdownReport | null>;
};

/** A worker process's claim timings unless told otherwise: every host's (`hostClaimTimings`), defined once. */
export const defaultWorkerTimings = {
  claimTtlMs: hostClaimTimings.ttlMs,
  renewIntervalMs: hostClaimTimings.renewIntervalMs,
} as const;

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const logger = options.logger ?? createLogger({ component: 'worker' });
  const definitions = options.definitions
    ? { workflows: [...options.definitions], queues: [], info: new Map(), sources: ['(given in code)'] }
    : await loadDefinitions(options.workflows ?? [], options.demos ?? false);
  const queues = serverQueues(definitions, options.queues);
  // The demos' activity limits (a worker that runs the demos declares them, as the studio's tabs do), and
  // those given in code.
  const activityLimits =
    options.demos || options.activityLimits
      ? { ...(options.demos ? builtInActivityLimits : {}), ...options.activityLimits }
      : undefined;
  const store = options.store ?? (await openStore(options));
  /** Closes the store if this worker opened it. */
  const closeStore = () => (options.store ? Promise.resolve() : store.close());
  const liveness = store.liveness;
  const host = serveEngineHost({
    config: { databaseName: store.label, mode: 'engine' },
    openStorage: async () => store.storage,
    storageOwner: 'caller',
    storeLabel: () => store.label,
    workflows: definitions.workflows,
    builtInInfo: definitions.info,
    runtime: { kind: 'server', hostName: hostname(), pid: process.pid },
    allocateIdentity: (storage, engineId) => allocateProcessIdentity(storage, engineId, options.label),
    loadAuthoredDefinitions: options.loadStudioDefinitions ?? false,
    allowFreeze: false,
    workflowClaimTtlMs: options.claimTtlMs ?? defaultWorkerTimings.claimTtlMs,
    workflowClaimRenewIntervalMs: options.renewIntervalMs ?? defaultWorkerTimings.renewIntervalMs,
    ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
    ...(options.tracer ? { tracer: options.tracer } : {}),
    ...(options.interceptors ? { interceptors: options.interceptors } : {}),
    ...(options.codec ? { codec: options.codec } : {}),
    ...(queues.length > 0 ? { queues } : {}),
    ...(activityLimits ? { activityLimits } : {}),
    ...(liveness
      ? {
          liveness,
          deathWatch: (selfId: string, onDeath: (engineId: string) => void) =>
            new PollingDeathWatch({ liveEngineIds: () => liveness.liveEngineIds(), selfId, onDeath }),
        }
      : {}),
    onWarning: (warning) =>
      logger.warn(warning.message, { warning: warning.name, workflowId: warning.workflowId }),
    onEvent: (event) => logEngineEvent(logger, event),
  });
  let engine: Engine;
  try {
    engine = await host.engine();
  } catch (error) {
    await host.dispose().catch(() => undefined);
    await closeStore().catch(() => undefined);
    throw error;
  }
  const label = host.identity().label;
  let metrics: Server | null = null;
  if (options.metricsPort !== undefined)
    metrics = await serveMetrics(
      {
        engineId: host.engineId,
        metrics: () => engine.metrics(),
        status: () => host.status(),
        queues: () => engine.queues(),
      },
      options.metricsPort,
    );
  logger.info('worker started', {
    engineId: host.engineId,
    label,
    store: store.label,
    workflows: definitions.workflows.map((definition) => `${definition.name}@${definition.version}`),
    from: definitions.sources,
    ...(queues.length > 0 ? { queues: queues.map((queue) => queue.name) } : {}),
    ...(activityLimits ? { activityLimits: Object.keys(activityLimits) } : {}),
    ...(options.metricsPort !== undefined ? { metricsPort: options.metricsPort } : {}),
    ...(options.retentionMs !== undefined ? { retentionMs: options.retentionMs } : {}),
  });
  let stopping: Promise<ShutdownReport | null> | null = null;
  return {
    engineId: host.engineId,
    label,
    store,
    host,
    engine,
    // A signalled worker exits within 2 s (README): at most 1.5 s for the shutdown's terminal commits, 0.3 s to
    // close the store, and the rest for the process to exit.
    stop: (patienceMs = 1_500) =>
      (stopping ??= (async () => {
        logger.info('worker stopping', { engineId: host.engineId });
        let timer: ReturnType<typeof setTimeout> | undefined;
        const report = await Promise.race([
          host.shutdown().catch(() => null),
          new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), patienceMs))),
        ]);
        clearTimeout(timer);
        metrics?.close();
        void host.dispose().catch(() => undefined);
        await Promise.race([
          closeStore().catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, 300)),
        ]);
        logger.info('worker stopped', {
          engineId: host.engineId,
          claimsHandedOver: report?.claimsReleased ?? null,
        });
        return report;
      })()),
  };
}
