/**
 * Benchmark fixture, run as its own OS process by bench/server.ts (`node --import tsx`): the peer, DBOS
 * Transact (`@dbos-inc/dbos-sdk`), on the same PostgreSQL server as Shuttle, in a database of its own (its
 * system database, which DBOS creates and migrates itself on `launch`).
 *
 * Arguments: the connection string of that database, and the size of DBOS's system-database pool (default:
 * DBOS's own, 10). The workflows are the peers of Shuttle's (bench/steps-workflow.ts): `bench-steps`, N
 * sequential steps (`DBOS.runStep`, each checkpointed in DBOS's `operation_outputs` before the next runs)
 * that return at once, and `bench-io-steps`, steps that each wait the given time. It prints JSON lines on stdout: `{ event: 'ready', version, launchMs }` once
 * `DBOS.launch()` resolved, then one answer per command read from stdin (JSON lines):
 * - `{ op: 'run', workflows, steps }` → `{ event: 'ran', elapsedMs }`: `workflows` started at once
 *   (`DBOS.startWorkflow`), first start → last result, measured here with `performance.now()`;
 * - `{ op: 'run-io', delays }` → `{ event: 'ran-io', elapsedMs }`: one `bench-io-steps` workflow per list
 *   of delays, all started at once;
 * - `{ op: 'stop' }`: `DBOS.shutdown()`, exit 0.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';

const [systemDatabaseUrl, poolArgument] = process.argv.slice(2);
if (!systemDatabaseUrl)
  throw new Error('usage: dbos-peer.ts <system database connection string> [system database pool size]');
const systemDatabasePoolSize = poolArgument ? Number(poolArgument) : undefined;
/** The installed version (its package.json is not exported, so it is read from next to the entry point). */
function installedVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@dbos-inc/dbos-sdk');
  const marker = `${path.sep}@dbos-inc${path.sep}dbos-sdk${path.sep}`;
  const folder = entry.slice(0, entry.indexOf(marker) + marker.length);
  return (JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as { version: string }).version;
}
const version = installedVersion();

function say(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...message, at: Date.now() })}\n`);
}

async function step(index: number): Promise<number> {
  return index;
}

async function steps(count: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < count; i++) sum += await DBOS.runStep(() => step(i), { name: 'step' });
  return sum;
}

const stepsWorkflow = DBOS.registerWorkflow(steps, { name: 'bench-steps' });

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function ioSteps(delays: number[]): Promise<number> {
  for (const delay of delays) await DBOS.runStep(() => wait(delay), { name: 'io' });
  return delays.length;
}

const ioStepsWorkflow = DBOS.registerWorkflow(ioSteps, { name: 'bench-io-steps' });

DBOS.setConfig({
  name: 'shuttle-bench-peer',
  systemDatabaseUrl,
  logLevel: 'error',
  ...(systemDatabasePoolSize ? { systemDatabasePoolSize } : {}),
});
const launchStarted = performance.now();
await DBOS.launch();
say({ event: 'ready', version, launchMs: Math.round(performance.now() - launchStarted) });

type Command =
  { op: 'run'; workflows: number; steps: number } | { op: 'run-io'; delays: number[][] } | { op: 'stop' };

async function handle(command: Command): Promise<void> {
  if (command.op === 'stop') {
    await DBOS.shutdown();
    process.exit(0);
  }
  if (command.op === 'run-io') {
    const started = performance.now();
    const handles = await Promise.all(
      command.delays.map((delays) => DBOS.startWorkflow(ioStepsWorkflow)(delays)),
    );
    const results = await Promise.all(handles.map((handle) => handle.getResult()));
    const elapsedMs = performance.now() - started;
    if (results.some((result, index) => result !== command.delays[index]!.length))
      throw new Error('a DBOS bench-io-steps workflow returned the wrong count');
    say({ event: 'ran-io', elapsedMs });
    return;
  }
  const started = performance.now();
  const handles = await Promise.all(
    Array.from({ length: command.workflows }, () => DBOS.startWorkflow(stepsWorkflow)(command.steps)),
  );
  const results = await Promise.all(handles.map((handle) => handle.getResult()));
  const elapsedMs = performance.now() - started;
  const expected = (command.steps * (command.steps - 1)) / 2;
  if (results.some((result) => result !== expected))
    throw new Error(`a DBOS workflow returned ${JSON.stringify(results[0])}, expected ${expected}`);
  say({ event: 'ran', elapsedMs, workflows: command.workflows, steps: command.steps });
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
    const line = buffered.slice(0, newline).trim();
    buffered = buffered.slice(newline + 1);
    if (!line) continue;
    handle(JSON.parse(line) as Command).catch((error: unknown) =>
      say({ event: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  }
});
process.stdin.on('end', () => {
  void DBOS.shutdown().finally(() => process.exit(0));
});
