/**
 * What a step costs the store, counted: `node --import tsx bench/server/step-calls.ts [steps] [workflows]`.
 *
 * On a throwaway PostgreSQL server (fsync on), one `workflow-lease` engine with the liveness oracle runs one
 * workflow (or `workflows` at once) of N sequential activities (default 1,000) over PostgresStorage, and this prints the storage calls
 * per step by method (every SQL statement the adapter's data path sends, the change feed's reads excepted)
 * beside the steps per second. A diagnostic, not part of `npm run bench`.
 */
import { createEngine } from '../../src/engine';
import { hostClaimTimings } from '../../src/protocol';
import { startLocalPostgres } from '../../src/server/local-postgres';
import { PostgresLiveness } from '../../src/server/postgres-liveness';
import { PostgresStorage } from '../../src/storage/postgres';
import type { Storage } from '../../src/storage/types';
import { steps } from '../steps-workflow';

const stepsEach = Number(process.argv[2] ?? 1000);
const workflows = Number(process.argv[3] ?? 1);

/** `storage` with every call counted by method (and a commit's groups counted apart). */
function counted(storage: Storage, calls: Map<string, number>): Storage {
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  return new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || property === 'watch') return value;
      return (...args: unknown[]) => {
        count(String(property));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const server = await startLocalPostgres({ durable: true });
try {
  const storage = await PostgresStorage.open({ connectionString: server.url, schema: 'step_calls' });
  const liveness = new PostgresLiveness({ connectionString: server.url, schema: 'step_calls' });
  const calls = new Map<string, number>();
  const engine = await createEngine({
    storage: counted(storage, calls),
    workflows: [steps],
    ownership: 'workflow-lease',
    workflowClaimTtlMs: hostClaimTimings.ttlMs,
    workflowClaimRenewIntervalMs: hostClaimTimings.renewIntervalMs,
    liveness,
  });
  const warm = await engine.start(steps, { steps: 50 });
  await warm.result();
  calls.clear();
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: workflows }, () => engine.start(steps, { steps: stepsEach })),
  );
  await Promise.all(handles.map((handle) => handle.result()));
  const elapsedMs = performance.now() - started;
  const total = stepsEach * workflows;
  console.log(
    `${workflows} × ${stepsEach} steps in ${Math.round(elapsedMs)} ms: ${Math.round((total / elapsedMs) * 1000)} steps/s`,
  );
  for (const [method, n] of [...calls].sort((a, b) => b[1] - a[1]))
    console.log(`  ${method}: ${n} (${(n / total).toFixed(3)} per step)`);
  await engine.shutdown();
  await liveness.close();
  await storage.close();
} finally {
  await server.stop();
}
