/**
 * Benchmark fixture, run as its own OS process by bench/queues.ts (`node --import tsx`): DBOS Transact's
 * `WorkflowQueue` beside Shuttle's queue, on the same PostgreSQL server, in a database of its own (DBOS's
 * system database, created and migrated by `DBOS.launch`).
 *
 * Arguments: the connection string of that database, and the queue's polling interval in ms (DBOS's
 * `minPollingIntervalMs`; absent: DBOS's default, 1,000 ms). After `DBOS.launch()` the queue `bench-q` is
 * registered with `globalConcurrency: 10` (DBOS stores queue settings in its database, so after launch, as
 * its README does). The workflow is the peer of `bench-queue-work` (bench/queues-workload.ts): `steps`
 * steps (`DBOS.runStep`, each checkpointed before the next) that each wait `delayMs`.
 *
 * JSON lines on stdout: `{ event: 'ready', version, launchMs, pollIntervalMs }`, then one answer per command
 * read from stdin:
 * - `{ op: 'run', workflows, steps, delayMs }` → `{ event: 'ran', … }`: `workflows` enqueued at once
 *   (`DBOS.startWorkflow(…, { queueName })`). `elapsedMs` is the first enqueue → the last workflow's
 *   durable completion as DBOS recorded it (`completedAt`, else `updatedAt`, of its workflow_status row, on
 *   this machine's clock); `bodiesMs` is the first enqueue → the last workflow function returning, in this
 *   process. Completion is waited for by polling `DBOS.listWorkflows` every 10 ms, not `getResult()`, whose
 *   own poll (1 s by default for a workflow run from a queue) would only delay the answer. `maxConcurrent`:
 *   the most workflows running at once from the rows (`dequeuedAt` → completion), and `maxBodies` the most
 *   workflow functions running at once in this process.
 * - `{ op: 'stop' }`: `DBOS.shutdown()`, exit 0.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';

const [systemDatabaseUrl, pollArgument] = process.argv.slice(2);
if (!systemDatabaseUrl)
  throw new Error('usage: dbos-queue-peer.ts <system database connection string> [polling interval ms]');
const pollIntervalMs = pollArgument ? Number(pollArgument) : undefined;
const queueName = 'bench-q';
const concurrency = 10;

function installedVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@dbos-inc/dbos-sdk');
  const marker = `${path.sep}@dbos-inc${path.sep}dbos-sdk${path.sep}`;
  const folder = entry.slice(0, entry.indexOf(marker) + marker.length);
  return (JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version: string }).version;
}

function say(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...message, at: Date.now() })}\n`);
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let running = 0;
let maxBodies = 0;
const bodyEnds: number[] = [];

async function queueWork(steps: number, delayMs: number): Promise<number> {
  running++;
  maxBodies = Math.max(maxBodies, running);
  try {
    for (let i = 0; i < steps; i++) await DBOS.runStep(() => wait(delayMs), { name: 'work' });
    return steps;
  } finally {
    running--;
    bodyEnds.push(performance.now());
  }
}

const workflow = DBOS.registerWorkflow(queueWork, { name: 'bench-queue-work' });

DBOS.setConfig({ name: 'shuttle-bench-queue-peer', systemDatabaseUrl, logLevel: 'error' });
const launchStarted = performance.now();
await DBOS.launch();
await DBOS.registerQueue(queueName, {
  globalConcurrency: concurrency,
  ...(pollIntervalMs ? { minPollingIntervalMs: pollIntervalMs } : {}),
});
say({
  event: 'ready',
  version: installedVersion(),
  launchMs: Math.round(performance.now() - launchStarted),
  pollIntervalMs: pollIntervalMs ?? 1000,
});

type Command = { op: 'run'; workflows: number; steps: number; delayMs: number } | { op: 'stop' };

/** The most intervals open at once; at equal times ends count first. */
function peak(intervals: readonly [number, number][]): number {
  const events = intervals.flatMap(([from, to]) => [
    { at: from, delta: 1 },
    { at: to, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let most = 0;
  for (const event of events) {
    open += event.delta;
    most = Math.max(most, open);
  }
  return most;
}

async function run(command: Extract<Command, { op: 'run' }>): Promise<void> {
  running = 0;
  maxBodies = 0;
  bodyEnds.length = 0;
  const startedAt = Date.now();
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: command.workflows }, () =>
      DBOS.startWorkflow(workflow, { queueName })(command.steps, command.delayMs),
    ),
  );
  const ids = handles.map((handle) => handle.workflowID);
  for (;;) {
    const rows = await DBOS.listWorkflows({ workflowIDs: ids });
    const failed = rows.find((row) => row.status === 'ERROR' || row.status === 'CANCELLED');
    if (failed) throw new Error(`DBOS workflow ${failed.workflowID} ended ${failed.status}`);
    if (rows.length === ids.length && rows.every((row) => row.status === 'SUCCESS')) {
      const ends = rows.map((row) => row.completedAt ?? row.updatedAt ?? Number.NaN);
      const dequeued = rows.map((row) => row.dequeuedAt ?? Number.NaN);
      if ([...ends, ...dequeued].some((value) => !Number.isFinite(value)))
        throw new Error('a DBOS workflow row has no dequeue or completion time');
      const results = await Promise.all(handles.map((handle) => handle.getResult()));
      if (results.some((result) => result !== command.steps))
        throw new Error(`a DBOS bench-queue-work workflow returned ${JSON.stringify(results[0])}`);
      say({
        event: 'ran',
        workflows: ids.length,
        elapsedMs: Math.max(...ends) - startedAt,
        bodiesMs: Math.round((Math.max(...bodyEnds) - started) * 100) / 100,
        maxConcurrent: peak(rows.map((row, index) => [dequeued[index]!, ends[index]!])),
        maxBodies,
        waitedMs: {
          first: Math.min(...dequeued) - startedAt,
          last: Math.max(...dequeued) - startedAt,
        },
      });
      return;
    }
    await wait(10);
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (!line) continue;
    const command = JSON.parse(line) as Command;
    if (command.op === 'stop') {
      void DBOS.shutdown().finally(() => process.exit(0));
      continue;
    }
    run(command).catch((error: unknown) =>
      say({ event: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  }
});
process.stdin.on('end', () => {
  void DBOS.shutdown().finally(() => process.exit(0));
});
