/**
 * The browser half of the `long-lived` part (bench/README.md): one engine per bench tab, set up as a studio
 * tab's engine (IndexedDbStorage, `workflow-lease` with the studio's claim timings, Web Locks liveness), driven
 * step by step by bench/studio/long-lived.ts through the page (`shuttleBench.longLived`). Engine X builds the
 * ticker chain and is shut down; engine Y, in another tab over the same database, takes the workflow over
 * when `stop` arrives. Each request is answered with one reply; times are measured here, in the tab.
 */
import { createEngine, type Engine } from '../../src/engine';
import { hostClaimTimings } from '../../src/protocol';
import { IndexedDbStorage } from '../../src/storage';
import { WebLocksLiveness } from '../../src/worker/web-locks-liveness';
import { countingReads, ticker, type Reads } from '../long-lived-workflow';
import type { LongLivedReply, LongLivedRequest } from './protocol';
import { deleteDatabase } from './raw-transactions';

type WorkerScope = {
  postMessage(message: LongLivedReply): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<LongLivedRequest>) => void): void;
};
const scope = self as unknown as WorkerScope;

let current: { engine: Engine; storage: IndexedDbStorage } | null = null;
const reads: Reads = { requests: 0, values: 0, chars: 0 };

/** The machine's clock in ms with sub-ms resolution: comparable between tabs (and workers) of one browser. */
const epochNow = () => performance.timeOrigin + performance.now();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function engine(): Engine {
  if (!current) throw new Error('No engine is open in this bench tab (send `open` first).');
  return current.engine;
}

/** Waits until `id` is parked on its `stop` signal (its last run), polling `describe`. */
async function parked(id: string, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const description = await engine().describe(id);
    if (description.status === 'running' && description.pending?.kind === 'signal') return description.run;
    if (description.status !== 'running')
      throw new Error(`${id} is ${description.status} before it parked (run ${description.run})`);
    if (performance.now() > deadline) throw new Error(`${id} did not park within ${timeoutMs} ms`);
    await sleep(20);
  }
}

async function handle(request: LongLivedRequest): Promise<LongLivedReply> {
  switch (request.kind) {
    case 'open': {
      if (current) throw new Error(`An engine is already open in this bench tab (${current.engine.id}).`);
      const storage = new IndexedDbStorage({ databaseName: request.databaseName });
      await storage.open();
      const engine = await createEngine({
        storage: request.countReads ? countingReads(storage, reads) : storage,
        workflows: [ticker],
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
    case 'build': {
      const started = performance.now();
      await engine().start(
        ticker,
        { done: 0, total: request.total, every: request.every },
        { id: request.id },
      );
      const runs = await parked(request.id, request.timeoutMs);
      const buildMs = performance.now() - started;
      const currentRunOperations = (await engine().describe(request.id)).historyLength;
      return { kind: 'built', buildMs, runs, currentRunOperations };
    }
    case 'holder': {
      await engine().idle();
      const holder = (await engine().claimHolder(request.id))?.engineId ?? null;
      // What this engine reads from here on is the handoff's: it may take the workflow over as soon as the
      // holder's release reaches it, before `stop` is sent.
      Object.assign(reads, { requests: 0, values: 0, chars: 0 });
      return { kind: 'holder', engineId: holder };
    }
    case 'shutdown': {
      const startedAt = epochNow();
      const started = performance.now();
      await engine().shutdown();
      const shutdownMs = performance.now() - started;
      await current?.storage.close().catch(() => undefined);
      current = null;
      return { kind: 'shut-down', shutdownMs, startedAt };
    }
    case 'stop-and-wait': {
      const started = performance.now();
      await engine().signal(request.id, 'stop');
      const result = await engine().handle<number>(request.id).result();
      const signalToCompletedMs = performance.now() - started;
      const completedAt = epochNow();
      const readsDuringHandoff = { ...reads };
      const own = engine().id;
      const timeline = await engine().handle(request.id).timeline();
      const first = timeline.find(
        (entry) =>
          entry.engineId === own && (entry.kind === 'claim-taken-over' || entry.kind === 'claim-acquired'),
      );
      const takeover = !first
        ? null
        : first.kind === 'claim-taken-over'
          ? `taken-over (${(first.detail as { reason?: string }).reason ?? '?'})`
          : 'acquired';
      const chain = (await engine().runs(request.id)).length;
      return {
        kind: 'completed',
        result,
        signalToCompletedMs,
        completedAt,
        reads: readsDuringHandoff,
        takeover,
        chain,
      };
    }
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
