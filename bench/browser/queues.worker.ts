/**
 * The browser half of the `queues` part (bench/README.md, Queues): one engine in a bench tab's dedicated
 * worker, set up as a studio tab's (IndexedDbStorage, `workflow-lease` with the studio's claim timings, Web
 * Locks liveness) and declaring the queue `bench-q` (concurrency 10), driven request by request by
 * bench/studio/queues.ts through the page (`shuttleBench.queues`). Every sample is measured here, in the
 * worker, with bench/queues-workload.ts — the same code as the PostgreSQL half.
 */
import { createEngine, type Engine } from '../../src/engine';
import { hostClaimTimings } from '../../src/protocol';
import { IndexedDbStorage } from '../../src/storage';
import { WebLocksLiveness } from '../../src/worker/web-locks-liveness';
import { benchQueues, latencySample, queueWork, throughputRun } from '../queues-workload';
import type { QueuesReply, QueuesRequest } from './protocol';
import { deleteDatabase } from './raw-transactions';

type WorkerScope = {
  postMessage(message: QueuesReply): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<QueuesRequest>) => void): void;
};
const scope = self as unknown as WorkerScope;

let current: { engine: Engine; storage: IndexedDbStorage } | null = null;

function engine(): Engine {
  if (!current) throw new Error('No engine is open in this bench tab (send `open` first).');
  return current.engine;
}

async function handle(request: QueuesRequest): Promise<QueuesReply> {
  switch (request.kind) {
    case 'open': {
      if (current) throw new Error(`An engine is already open in this bench tab (${current.engine.id}).`);
      const storage = new IndexedDbStorage({ databaseName: request.databaseName });
      await storage.open();
      const engine = await createEngine({
        storage,
        workflows: [queueWork],
        queues: benchQueues,
        ownership: 'workflow-lease',
        workflowClaimTtlMs: hostClaimTimings.ttlMs,
        workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
        ...(WebLocksLiveness.isSupported() ? { liveness: new WebLocksLiveness() } : {}),
        onWarning: (warning) => console.warn(`[bench engine] ${warning.name}: ${warning.message}`),
      });
      await engine.idle();
      current = { engine, storage };
      return { kind: 'opened', engineId: engine.id };
    }
    case 'latency':
      return { kind: 'latency', sample: await latencySample(engine(), request.mode) };
    case 'throughput':
      return {
        kind: 'throughput',
        sample: await throughputRun(engine(), request.mode, request.workload),
      };
    case 'close': {
      if (current) {
        await current.engine.shutdown().catch(() => undefined);
        await current.storage.close().catch(() => undefined);
        current = null;
      }
      if (request.deleteDatabase) await deleteDatabase(request.deleteDatabase);
      return { kind: 'closed' };
    }
  }
}

scope.addEventListener('message', (event) => {
  handle(event.data).then(
    (reply) => scope.postMessage(reply),
    (error: unknown) => {
      const failure = error instanceof Error ? error : new Error(String(error));
      scope.postMessage({
        kind: 'failed',
        error: { name: failure.name, message: failure.message, stack: failure.stack },
      });
    },
  );
});
