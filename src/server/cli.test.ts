/**
 * The `shuttle worker` command line as real processes (bin/shuttle.mjs): the embedded default (no
 * `--database-url`) runs a workflow and refuses a second process; on PostgreSQL, a studio-style definition
 * file runs in workers whose JSON log lines, metrics endpoint and signals behave as documented; definitions
 * saved in the studio run only with `--load-studio-definitions`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, entriesOf, hostKeys, type AnyWorkflowDefinition, type Engine } from '../engine';
import { compileDefinition, compileModule } from '../host/authoring/compile';
import { saveDefinition } from '../host/authoring/definition-store';
import { hostClaimTimings } from '../protocol';
import { PostgresStorage } from '../storage/postgres';
import type { Storage } from '../storage/types';
import { createTestDatabase, type TestDatabase } from '../storage/postgres.test-support';
import { builtInWorkflows } from '../workflows';
import { openStore } from './store';
import { defaultWorkerTimings } from './worker';

const bin = fileURLToPath(new URL('../../bin/shuttle.mjs', import.meta.url));
const { claimTtlMs, renewIntervalMs } = defaultWorkerTimings;

/** A definition file as the studio writes it: TypeScript importing only 'shuttle'. */
const greetSource = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'cli-greet',
  version: 1,
  *run(ctx, input: { name: string; ticks: number; fail?: boolean }) {
    for (let tick = 0; tick < input.ticks; tick++) yield* ctx.sleep(100);
    const greeting: string = yield* ctx.activity('greet', async () => \`Hello, \${input.name}!\`);
    if (input.fail) throw new Error(\`\${input.name} was refused\`);
    return { greeting };
  },
});
`;

/** A definition saved in the studio (a `def:` record), never in a file. */
const authoredSource = `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'cli-authored',
  version: 1,
  *run(ctx, input: { n: number }) {
    yield* ctx.sleep(50);
    return { doubled: input.n * 2 };
  },
});
`;

type LogLine = Record<string, unknown> & { time: string; level: string; msg: string };

type Shuttle = {
  child: ChildProcess;
  lines: LogLine[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first log line (past or future) `match` accepts. */
  line(what: string, match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
};

const spawned: ChildProcess[] = [];
let folder: string;
let greetFile: string;

/** Runs `shuttle <args>` with a clean environment (no SHUTTLE_DATABASE_URL), collecting its JSON log. */
function shuttle(args: string[]): Shuttle {
  const env = { ...process.env };
  delete env.SHUTTLE_DATABASE_URL;
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  spawned.push(child);
  const lines: LogLine[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    for (const part of parts) lines.push(JSON.parse(part) as LogLine); // every stdout line is JSON
    for (const waiter of waiters) waiter();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    line: (what, match, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs} ms`)), timeoutMs);
        const check = () => {
          const found = lines.find(match);
          if (!found) return;
          clearTimeout(timer);
          resolve(found);
        };
        waiters.push(check);
        check();
        void exited.then((code) =>
          reject(new Error(`${what}: the process exited with ${code} first: ${stderr}`)),
        );
      }),
  };
}

/** Runs `shuttle <args>` to its end. */
async function runToEnd(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const run = shuttle(args);
  const code = await run.exited;
  return { code, stderr: run.stderr() };
}

async function startedWorker(args: string[]): Promise<Shuttle & { engineId: string; started: LogLine }> {
  const run = shuttle(['worker', ...args]);
  const started = await run.line('worker started', (line) => line.msg === 'worker started');
  return Object.assign(run, { engineId: started.engineId as string, started });
}

async function until<T>(what: string, check: () => Promise<T | null | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The value of one sample of a Prometheus text exposition (`name{labels} value`). */
function sample(text: string, name: string, labels: string): number | null {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function observerEngine(storage: Storage, workflows: readonly AnyWorkflowDefinition[]): Promise<Engine> {
  return createEngine({
    storage,
    workflows,
    ownership: 'workflow-lease',
    workflowClaimTtlMs: claimTtlMs,
    workflowClaimRenewIntervalMs: renewIntervalMs,
    claimWorkflows: false,
  });
}

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'shuttle-cli-'));
  greetFile = join(folder, 'greet.ts');
  writeFileSync(greetFile, greetSource);
});

afterAll(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

describe('shuttle help worker', () => {
  it('states the claim timings defaults from their one home (hostClaimTimings)', async () => {
    const help = shuttle(['help', 'worker']);
    let stdout = '';
    help.child.stdout!.removeAllListeners('data');
    help.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await help.exited).toBe(0);
    expect(stdout).toContain(`keeps its workflows (default ${hostClaimTimings.ttlMs})`);
    expect(stdout).toContain(`renews its session (default ${hostClaimTimings.renewIntervalMs})`);
  });
});

describe('--help and -h after a command', () => {
  it.each([
    ['dev', '--help'],
    ['worker', '-h'],
    ['serve', '--help'],
  ])("shuttle %s %s prints that command's options and exits 0, starting nothing", async (command, flag) => {
    const help = shuttle([command, flag]);
    let stdout = '';
    help.child.stdout!.removeAllListeners('data');
    help.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await help.exited).toBe(0);
    expect(stdout).toContain(`shuttle ${command}: `);
    expect(stdout).toContain('--database-url');
  });
});

describe('shuttle worker refuses broken definition files', () => {
  it('in one line: the first problem with its file:line:column, and how many more there are; nothing written', async () => {
    const nondeterministic = join(folder, 'nondeterministic.ts');
    writeFileSync(
      nondeterministic,
      `import { defineWorkflow } from 'shuttle';

export default defineWorkflow({
  name: 'nondeterministic',
  version: 1,
  *run() {
    const at = Date.now();
    return { at, roll: Math.random() };
  },
});
`,
    );
    const broken = join(folder, 'broken.ts');
    writeFileSync(broken, "import { defineWorkflow } from 'shuttle';\nexport default defineWorkflow({\n");
    const dataDir = join(folder, 'never-created');

    const several = await runToEnd([
      'worker',
      '--data-dir',
      dataDir,
      '--workflows',
      nondeterministic,
      '--workflows',
      broken,
    ]);
    expect(several.code).toBe(2);
    expect(several.stderr.endsWith('\n')).toBe(true);
    expect(several.stderr.trimEnd().split('\n')).toEqual([
      `Could not load the workflow definitions: ${nondeterministic}:7:16 Workflow code must be deterministic: use yield* ctx.now() instead of Date.now() — or move this into an activity. (and 2 more problems)`,
    ]);
    const one = await runToEnd(['worker', '--data-dir', dataDir, '--workflows', broken]);
    expect(one.code).toBe(2);
    expect(one.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(one.stderr).toMatch(
      new RegExp(
        `^Could not load the workflow definitions: ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:1 Syntax error: [^\n]+\n$`,
      ),
    );
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});

describe('shuttle worker without --database-url: the embedded store', () => {
  it('runs a workflow to completion and refuses a second process on the same folder, writing nothing', async () => {
    const dataDir = join(folder, 'embedded');
    // A workflow waiting in the store before any worker runs (this process holds the folder meanwhile).
    const setup = await openStore({ dataDir });
    const starter = await observerEngine(setup.storage, builtInWorkflows);
    await starter.start('countdown', { from: 5, tickMs: 50 }, { id: 'embedded-1' });
    await starter.shutdown();
    await setup.close();

    const port = await freePort();
    const worker = await startedWorker(['--data-dir', dataDir, '--metrics-port', String(port)]);
    expect(String(worker.started.store)).toMatch(/^embedded PostgreSQL \(PGlite\) in .*embedded$/);
    await until(
      'the worker finished embedded-1',
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return (sample(text, 'shuttle_workflows_finished_total', `engine_id="${worker.engineId}"`) ?? 0) >= 1;
      },
      30_000,
    );

    const lockFile = join(dataDir, 'shuttle.lock');
    expect(readFileSync(lockFile, 'utf8')).toBe(String(worker.child.pid));
    const second = await runToEnd(['worker', '--data-dir', dataDir]);
    expect(second.code).toBe(2);
    const message = second.stderr.trimEnd();
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(
      new RegExp(
        `^The embedded store in .*embedded is in use by process ${worker.child.pid}: .*--database-url postgres://`,
      ),
    );
    expect(readFileSync(lockFile, 'utf8')).toBe(String(worker.child.pid));

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    const after = await openStore({ dataDir });
    try {
      const reader = await observerEngine(after.storage, builtInWorkflows);
      expect(await reader.handle('embedded-1').result()).toEqual({ counted: 5 });
      // The refused process left no trace: the only presence record is the first worker's.
      const presence = await after.storage.scan(hostKeys.enginesPrefix);
      const engineIds = new Set(
        presence.map(({ key }) => key.slice(hostKeys.enginesPrefix.length).split(':')[0]),
      );
      expect(engineIds).toEqual(new Set([worker.engineId]));
      await reader.shutdown();
    } finally {
      await after.close();
    }
  }, 120_000);
});

describe('shuttle worker on PostgreSQL', () => {
  let database: TestDatabase;
  let storage: PostgresStorage;
  let observer: Engine;
  let greet: AnyWorkflowDefinition;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await PostgresStorage.open({ connectionString: database.url });
    const compiled = await compileModule(greetSource, 'greet.ts');
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    greet = compiled.definitions[0]!;
    observer = await observerEngine(storage, [...builtInWorkflows, greet]);
  }, 60_000);

  afterAll(async () => {
    for (const child of spawned)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await observer?.shutdown();
    await storage?.close();
    await database?.drop();
  });

  it('runs a studio-style definition file; logs claims, takeovers and failures as JSON lines; serves /metrics and /healthz; a second signal exits at once', async () => {
    const port = await freePort();
    // cli-a starts first and alone, so it claims the workflows (two started together race for them, and on a
    // busy machine one could take all six); cli-b joins once cli-a holds some, and takes them over below.
    const a = await startedWorker([
      '--database-url',
      database.url,
      '--workflows',
      greetFile,
      '--label',
      'cli-a',
      '--metrics-port',
      String(port),
    ]);
    expect(a.started).toMatchObject({ workflows: ['cli-greet@1'], from: [greetFile], metricsPort: port });

    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        (await observer.start('cli-greet', { name: `n${i}`, ticks: 30 }, { id: `greet-${i}` })).workflowId,
      );
    const heldByA = await until(
      'cli-a holds some workflows',
      async () => {
        const held = (await observer.claims()).filter((claim) => claim.holder?.engineId === a.engineId);
        return held.length > 0 && held.map((claim) => claim.workflowId);
      },
      15_000,
    );
    const b = await startedWorker([
      '--database-url',
      database.url,
      '--workflows',
      greetFile,
      '--label',
      'cli-b',
    ]);

    // The metrics endpoint: the engine's figures as Prometheus text, and the health check.
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toContain('# TYPE shuttle_claims_held gauge');
    expect(sample(text, 'shuttle_claims_held', `engine_id="${a.engineId}"`)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'shuttle_workflows_started_total', `engine_id="${a.engineId}"`)).toBe(0); // the observer started them
    expect(
      sample(text, 'shuttle_claim_attempts_total', `outcome="acquired",engine_id="${a.engineId}"`) ??
        sample(text, 'shuttle_claim_attempts_total', `engine_id="${a.engineId}",outcome="acquired"`),
    ).toBeGreaterThanOrEqual(1);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'running', engineId: a.engineId });
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);

    // A claim, as a JSON line.
    const claimed = await a.line(
      'cli-a claim line',
      (line) => line.msg === 'claim acquired' && line.workflowId === heldByA[0],
    );
    expect(claimed).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: 'info',
      msg: 'claim acquired',
      component: 'worker',
      workflowId: heldByA[0],
      epoch: expect.any(Number),
      how: expect.any(String),
    });

    // A takeover after its holder was killed, as a JSON line of the taker.
    a.child.kill('SIGKILL');
    const takeover = await b.line(
      'cli-b takeover line',
      (line) => line.msg === 'claim taken over' && line.workflowId === heldByA[0],
    );
    expect(takeover).toEqual({
      time: expect.any(String),
      level: 'info',
      msg: 'claim taken over',
      component: 'worker',
      workflowId: heldByA[0],
      epoch: expect.any(Number),
      fromEngineId: a.engineId,
      fromEpoch: claimed.epoch,
    });
    expect(takeover.epoch).toBeGreaterThan(claimed.epoch as number);
    for (const [i, id] of ids.entries())
      expect(await observer.handle(id).result()).toEqual({ greeting: `Hello, n${i}!` });

    // A failure, as a JSON line.
    await observer.start('cli-greet', { name: 'Mallory', ticks: 0, fail: true }, { id: 'greet-fail' });
    const failed = await b.line('cli-b failure line', (line) => line.msg === 'workflow failed');
    expect(failed).toEqual({
      time: expect.any(String),
      level: 'warn',
      msg: 'workflow failed',
      component: 'worker',
      workflowId: 'greet-fail',
      error: expect.objectContaining({ name: 'Error', message: 'Mallory was refused' }),
    });

    // Two signals: the second exits at once, without waiting for the graceful stop.
    const signalledAt = Date.now();
    b.child.kill('SIGTERM');
    b.child.kill('SIGINT');
    expect(await b.exited).toBe(130);
    expect(Date.now() - signalledAt).toBeLessThan(2_000);
  }, 120_000);

  it('--retention reaches the engine: a finished workflow is purged that long after it ended; a bad duration is one line', async () => {
    for (const bad of ['30', '-1d', '0s', '2 weeks', '1.5y']) {
      const refused = await runToEnd(['worker', '--database-url', database.url, `--retention=${bad}`]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `--retention must be a duration like 30d, 12h, 90m, 45s or 500ms (a number and a unit: ms, s, m, h or d); got '${bad}'.\n`,
      );
    }
    // A workflow that finished, run by an engine of this process that has no retention: it stays.
    const runner = await createEngine({
      storage,
      workflows: builtInWorkflows,
      ownership: 'workflow-lease',
      workflowClaimTtlMs: claimTtlMs,
      workflowClaimRenewIntervalMs: renewIntervalMs,
    });
    const retained = await runner.start('countdown', { from: 1, tickMs: 10 }, { id: 'retained-1' });
    expect(await retained.result()).toEqual({ counted: 1 });
    const endedAt = (await retained.timeline()).at(-1)!.at;
    await runner.shutdown();
    await until('the retention elapsed', async () => Date.now() > endedAt + 500, 5_000);
    expect((await observer.describe('retained-1')).status).toBe('completed');

    // A worker whose default retention is 500 ms purges it in its first sweep.
    const worker = await startedWorker([
      '--database-url',
      database.url,
      '--label',
      'cli-retention',
      '--retention',
      '500ms',
    ]);
    expect(worker.started.retentionMs).toBe(500);
    await until(
      'retained-1 purged',
      async () =>
        (await observer.list({ workflowType: 'countdown' })).items.every(
          (item) => item.workflowId !== 'retained-1',
        ),
      15_000,
    );
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 120_000);

  it("shuttle workflow …: an operator starts, watches and reads workflows from a shell, by the workers' labels", async () => {
    const operate = async (...args: string[]) => {
      const run = spawn(process.execPath, [bin, ...args, '--database-url', database.url], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      spawned.push(run);
      let stdout = '';
      let stderr = '';
      run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
      return { code, stdout, stderr };
    };
    await startedWorker(['--database-url', database.url, '--workflows', greetFile, '--label', 'cli-ops']);
    const started = await operate(
      'workflow',
      'start',
      'cli-greet',
      '--workflows',
      greetFile,
      '--id',
      'ops-1',
      '--input',
      JSON.stringify({ name: 'Ops', ticks: 1 }),
    );
    expect(started, started.stderr).toMatchObject({ code: 0, stdout: 'Started ops-1 (run 1).\n' });
    const result = await operate('workflow', 'result', 'ops-1', '--timeout', '60s');
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(result.stdout)).toEqual({ greeting: 'Hello, Ops!' });
    const described = await operate('workflow', 'describe', 'ops-1', '--json');
    expect(JSON.parse(described.stdout)).toMatchObject({ workflowId: 'ops-1', status: 'completed' });

    // A long one (3,000 sleeps of 100 ms): while it runs, the list names the worker that holds it by its
    // label; then the operator terminates it.
    await observer.start(greet, { name: 'Slow', ticks: 3000 }, { id: 'ops-slow' });
    await until('ops-slow claimed', async () => (await observer.describe('ops-slow')).owner !== null, 30_000);
    const listed = await operate('workflow', 'list', '--id-prefix', 'ops-');
    expect(listed, listed.stderr).toMatchObject({ code: 0 });
    expect(listed.stdout).toMatch(/^ops-slow\s+cli-greet\s+running\s+1\s+cli-ops\s/m);
    expect(listed.stdout).toMatch(/^ops-1\s+cli-greet\s+completed\s/m);
    const terminated = await operate('workflow', 'terminate', 'ops-slow', '--reason', 'on-call');
    expect(terminated, terminated.stderr).toMatchObject({ code: 0, stdout: 'Terminated ops-slow.\n' });
    expect((await observer.describe('ops-slow')).status).toBe('terminated');

    const missing = await operate('workflow', 'describe', 'ops-none');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^WorkflowNotFoundError: /);
  }, 120_000);

  it('runs definitions saved in the studio only with --load-studio-definitions', async () => {
    const compiled = await compileDefinition(authoredSource, 'definition.ts');
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
    observer.register(compiled.definition);
    const { outcome } = await saveDefinition(storage, observer, authoredSource, {
      savedBy: 'cli.test',
      reservedNames: new Set(builtInWorkflows.map((definition) => definition.name)),
      now: Date.now(),
    });
    expect(outcome).toMatchObject({ ok: true, name: 'cli-authored', version: 1 });
    await observer.start('cli-authored', { n: 21 }, { id: 'authored-1' });
    await observer.start('countdown', { from: 2, tickMs: 50 }, { id: 'control-1' });

    // Without the flag: the worker runs the demo started after it, but never touches the authored one.
    const plain = await startedWorker(['--database-url', database.url, '--label', 'cli-plain']);
    expect(await observer.handle('control-1').result()).toEqual({ counted: 2 });
    const untouched = await observer.describe('authored-1');
    expect(untouched.owner).toBeNull();
    expect(untouched.status).toBe('running');
    expect(entriesOf(await observer.timeline('authored-1'), 'claim-acquired')).toEqual([]);
    plain.child.kill('SIGTERM');
    expect(await plain.exited).toBe(0);

    // With it: the saved definition is loaded and its workflow runs.
    await startedWorker([
      '--database-url',
      database.url,
      '--label',
      'cli-studio',
      '--load-studio-definitions',
    ]);
    expect(await observer.handle('authored-1').result()).toEqual({ doubled: 42 });
  }, 120_000);
});
