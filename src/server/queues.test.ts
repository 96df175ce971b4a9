/**
 * Workflow queues on servers: the definition modules of `--workflows` declare queues (`defineQueue`), and
 * real `shuttle worker` processes over one PostgreSQL keep a queue's limit across processes — while one of
 * them is killed with `kill -9` — with the workflows started through the HTTP API of `shuttle serve`.
 *
 * The limit is checked from the timelines, not from the engine's own counters: each workflow's admission
 * (its `started` entry, with `detail.queue`) to its end (`completed`) is the time it held a slot, and at no
 * instant may more than the queue's `concurrency` of those intervals overlap. The same check, run against
 * workers with a deliberately broken admission (src/engine/mutations.ts `queue-ignores-limit`), must report
 * the overlap: the check can fail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEngine, defineQueue, defineWorkflow, type TimelineEntry } from '../engine';
import { MemoryStorage } from '../storage/memory';
import { createTestDatabase, type TestDatabase } from '../storage/postgres.test-support';
import { loadDefinitionFiles, serverQueues } from './definitions';
import { createLogger } from './log';
import { engineRegistry } from './metrics';
import { startServer, type RunningServer } from './serve';
import { startWorker as startWorkerInProcess } from './worker';
import { StartupError } from './store';

const bin = fileURLToPath(new URL('../../bin/shuttle.mjs', import.meta.url));
const mutations = fileURLToPath(new URL('../engine/mutations.ts', import.meta.url));
const token = 'queues-test-token-0123456789';

/** A module as the studio writes it (only 'shuttle'): a queue of two, and a workflow that starts onto it. */
const flowsSource = `import { defineQueue, defineWorkflow } from 'shuttle';

export const limited = defineQueue('q', { concurrency: 2 });

export default defineWorkflow({
  name: 'queued-job',
  version: 1,
  queue: 'q',
  *run(ctx, input: { ms: number }) {
    yield* ctx.activity('work', () => new Promise((resolve) => setTimeout(() => resolve('worked'), input.ms)));
    return 'done';
  },
});
`;

/**
 * A Node module (it imports the engine's mutation switch) declaring the same queue again, the same way — which
 * is allowed — and putting the admission defect of $SHUTTLE_TEST_MUTATION in force in its worker process.
 */
const mutateSource = `import { defineQueue } from 'shuttle';
import { setMutation } from ${JSON.stringify(mutations)};

if (process.env.SHUTTLE_TEST_MUTATION) setMutation(process.env.SHUTTLE_TEST_MUTATION as never);

export const sameQueue = defineQueue('q', { concurrency: 2 });
`;

type Worker = { child: ChildProcess; engineId: string; exited: Promise<number | null> };

let database: TestDatabase;
let folder: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  folder = mkdtempSync(join(tmpdir(), 'shuttle-queues-'));
  mkdirSync(join(folder, 'studio'));
  writeFileSync(join(folder, 'studio', 'index.html'), '<!doctype html><html><head></head></html>');
  writeFileSync(join(folder, 'flows.ts'), flowsSource);
  writeFileSync(join(folder, 'mutate.mts'), mutateSource);
}, 60_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await database?.drop();
  rmSync(folder, { recursive: true, force: true });
});

/** Starts `shuttle worker`; resolves once its engine runs (its "worker started" log line). */
function startWorker(databaseUrl: string, label: string, extra: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(
    process.execPath,
    [
      bin,
      'worker',
      '--database-url',
      databaseUrl,
      '--label',
      label,
      '--workflows',
      join(folder, 'flows.ts'),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise<Worker>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        const entry = JSON.parse(line) as { msg: string; engineId?: string; queues?: string[] };
        if (entry.msg === 'worker started') {
          expect(entry.queues).toEqual(['q']);
          resolve({ child, engineId: entry.engineId!, exited });
        }
      }
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then((code) => reject(new Error(`${label} exited with ${code}: ${stderr}`)));
  });
}

async function until<T>(
  what: string,
  check: () => Promise<T | null | false | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The HTTP API of a `shuttle serve` on the store. */
function api(server: RunningServer) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read by path
    return { status: response.status, body: (text ? JSON.parse(text) : null) as any };
  };
}

type Held = { id: string; from: number; to: number; admittedBy: string; endedBy: string };

/** Each workflow's time in a slot, from its timeline: its admission (`started` with `detail.queue`) to its end. */
function heldOf(id: string, entries: readonly TimelineEntry[]): Held {
  const admission = entries.find((entry) => entry.kind === 'started');
  const end = entries.find((entry) => entry.kind === 'completed');
  expect(admission?.detail, `${id}: its admission`).toMatchObject({ queue: { name: 'q' } });
  expect(end, `${id}: it completed`).toBeDefined();
  return { id, from: admission!.at, to: end!.at, admittedBy: admission!.engineId, endedBy: end!.engineId };
}

/** The most slots held at one instant: intervals [from, to), an end before a start at the same instant. */
function mostAtOnce(held: readonly Held[]): number {
  const events = held.flatMap(({ from, to }) => [
    { at: from, delta: 1 },
    { at: to, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const { delta } of events) most = Math.max(most, (now += delta));
  return most;
}

/**
 * Two workers on a fresh schema, a `shuttle serve` (no engines of its own) whose HTTP API starts ten
 * workflows onto queue `q`; `kill -9` the worker holding a slot once two have completed; every workflow must
 * complete. Returns each one's time in a slot, and which engines the workers were.
 */
async function scenario(schema: string, options: { mutation?: string; kill: boolean }) {
  const extra = options.mutation
    ? ['--workflows', join(folder, 'mutate.mts'), '--schema', schema]
    : ['--schema', schema];
  const env = options.mutation ? { SHUTTLE_TEST_MUTATION: options.mutation } : {};
  const [a, b] = await Promise.all([
    startWorker(database.url, `${schema}-a`, extra, env),
    startWorker(database.url, `${schema}-b`, extra, env),
  ]);
  const server = await startServer({
    databaseUrl: database.url,
    schema,
    port: 0,
    studioDir: join(folder, 'studio'),
    workflows: [join(folder, 'flows.ts')],
    token,
    logger: createLogger({}, () => undefined),
  });
  try {
    const call = api(server);
    const ids = Array.from({ length: 10 }, (_, index) => `${schema}-${index}`);
    for (const [index, id] of ids.entries()) {
      // Half name the queue, half rely on the definition's.
      const started = await call('POST', '/workflows', {
        workflowType: 'queued-job',
        input: { ms: 400 },
        options: { id, ...(index % 2 === 0 ? { queue: 'q' } : {}) },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
    }
    const completed = async () =>
      (await call('GET', `/workflows?workflowType=queued-job&status=completed&limit=100`)).body.items
        .length as number;
    if (!options.kill) {
      await until('all ten completed', async () => (await completed()) === 10, 30_000);
      const held = await Promise.all(
        ids.map(async (id) =>
          heldOf(id, (await call('GET', `/workflows/${id}/timeline?limit=1000`)).body.items),
        ),
      );
      return { held, victim: null, survivor: null, queue: (await call('GET', '/queues/q')).body };
    }
    // Kill the worker holding a slot, once two have completed: mid-way, its admitted workflow in hand.
    const { victim, survivor } = await until(
      'a worker holding a slot, two completed',
      async () => {
        if ((await completed()) < 2) return null;
        const queue = (await call('GET', '/queues/q')).body as { slots: { admittedBy: string }[] };
        const holder = [a, b].find((worker) =>
          queue.slots.some((slot) => slot.admittedBy === worker.engineId),
        );
        return holder ? { victim: holder, survivor: holder === a ? b : a } : null;
      },
      20_000,
    );
    victim.child.kill('SIGKILL');
    await victim.exited;
    await until('all ten completed', async () => (await completed()) === 10, 30_000);
    const held = await Promise.all(
      ids.map(async (id) =>
        heldOf(id, (await call('GET', `/workflows/${id}/timeline?limit=1000`)).body.items),
      ),
    );
    const queue = (await call('GET', '/queues/q')).body;
    return { held, victim, survivor, queue };
  } finally {
    await server.stop();
    for (const worker of [a, b]) worker.child.kill('SIGKILL');
  }
}

describe('queues on shuttle worker processes over one PostgreSQL', () => {
  it("two workers keep a queue's concurrency of 2 across processes, through a kill -9 of one, and all ten complete", async () => {
    const { held, victim, survivor, queue } = await scenario('q_ok', { kill: true });
    // The limit held at every instant — and was reached (the check sees overlap: it is not vacuous).
    expect(mostAtOnce(held)).toBe(2);
    // The killed worker had admitted some; one it held was finished by the survivor, its slot moving with it.
    expect(held.some((one) => one.admittedBy === victim!.engineId)).toBe(true);
    expect(
      held.some((one) => one.admittedBy === victim!.engineId && one.endedBy === survivor!.engineId),
    ).toBe(true);
    // Every slot was given back.
    expect(queue).toMatchObject({ name: 'q', concurrency: 2, running: 0, waiting: 0, slots: [] });
  }, 60_000);

  it('the same check reports the overlap when the workers admit without taking a slot (queue-ignores-limit)', async () => {
    const { held } = await scenario('q_broken', { mutation: 'queue-ignores-limit', kill: false });
    expect(mostAtOnce(held)).toBeGreaterThan(2);
  }, 60_000);
});

describe('startWorker({ queues }) in a program of its own', () => {
  it('declares the queues given in code beside its definitions and runs a start onto one; without them it does not start', async () => {
    const job = defineWorkflow({
      name: 'in-code-job',
      version: 1,
      queue: 'in-code',
      *run() {
        return 'ran';
      },
    });
    const worker = await startWorkerInProcess({
      databaseUrl: database.url,
      schema: 'q_code',
      definitions: [job],
      queues: [defineQueue('in-code', { concurrency: 1 })],
      logger: createLogger({}, () => undefined),
    });
    try {
      expect((await worker.engine.queues()).map((queue) => [queue.name, queue.concurrency])).toEqual([
        ['in-code', 1],
      ]);
      const handle = await worker.engine.start(job, undefined, { id: 'in-code-1' });
      expect(await handle.result()).toBe('ran');
      expect(
        (await worker.engine.timeline('in-code-1')).find((entry) => entry.kind === 'started')?.detail,
      ).toMatchObject({
        queue: { name: 'in-code' },
      });
    } finally {
      await worker.stop();
    }
    // Without the queue, the worker does not start: every start onto it would be refused.
    await expect(
      startWorkerInProcess({
        databaseUrl: database.url,
        schema: 'q_code',
        definitions: [job],
        logger: createLogger({}, () => undefined),
      }),
    ).rejects.toThrow(/Workflow 'in-code-job' goes onto queue 'in-code', which no module declares/);
  });
});

describe("a worker's /metrics: the queue gauges", () => {
  it("exports running of the limit, waiting, the next one's wait and the rate window per queue, read from the store", async () => {
    const storage = new MemoryStorage();
    const held = defineWorkflow({
      name: 'held',
      version: 1,
      queue: 'reports',
      *run(ctx) {
        yield* ctx.waitForSignal('go');
      },
    });
    const engine = await createEngine({
      storage,
      workflows: [held],
      queues: [defineQueue('reports', { concurrency: 1, rateLimit: { limit: 5, periodMs: 60_000 } })],
    });
    try {
      for (const id of ['m-1', 'm-2', 'm-3']) await engine.start(held, undefined, { id });
      await vi.waitFor(async () => expect((await engine.queuePosition('m-1'))?.status).toBe('admitted'));
      let reads = 0;
      const registry = engineRegistry({
        engineId: engine.id,
        metrics: () => engine.metrics(),
        status: () => ({ state: 'running', since: 0 }),
        queues: () => (reads++, engine.queues()),
      });
      const text = await registry.metrics();
      expect(reads).toBe(1); // one read of the store serves every queue gauge of a scrape
      const sample = (name: string) => {
        const line = text
          .split('\n')
          .find((row) => row.startsWith(`${name}{`) && row.includes('queue="reports"'));
        return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      expect(text).toContain('# TYPE shuttle_queue_running gauge');
      expect(sample('shuttle_queue_running')).toBe(1);
      expect(sample('shuttle_queue_concurrency_limit')).toBe(1);
      expect(sample('shuttle_queue_waiting')).toBe(2);
      expect(sample('shuttle_queue_next_wait_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample('shuttle_queue_rate_window_admissions')).toBe(1);
      expect(sample('shuttle_queue_driven_here')).toBe(1);
      // The next scrape reads the store again: m-1 done, m-2 admitted.
      await engine.signal('m-1', 'go');
      await vi.waitFor(async () => expect((await engine.queuePosition('m-2'))?.status).toBe('admitted'));
      const again = await registry.metrics();
      expect(reads).toBe(2);
      expect(again).toMatch(/^shuttle_queue_waiting\{[^}]*queue="reports"[^}]*\} 1$/m);
      expect(again).toMatch(/^shuttle_queue_rate_window_admissions\{[^}]*queue="reports"[^}]*\} 2$/m);
    } finally {
      await engine.shutdown();
    }
  });
});

describe('--workflows modules declare queues', () => {
  it('collects each queue once (the same declaration twice is fine); a different one names both files; an undeclared queue of a workflow stops the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shuttle-queue-modules-'));
    try {
      const write = (name: string, source: string) => {
        writeFileSync(join(dir, name), source);
        return join(dir, name);
      };
      const flows = write('flows.ts', flowsSource);
      const again = write(
        'again.ts',
        "import { defineQueue } from 'shuttle';\nexport const q = defineQueue('q', { concurrency: 2 });\n",
      );
      const loaded = await loadDefinitionFiles([flows, again]);
      expect(loaded.workflows.map((workflow) => workflow.name)).toEqual(['queued-job']);
      expect(loaded.queues).toEqual([
        expect.objectContaining({ kind: 'shuttle-queue', name: 'q', options: { concurrency: 2 } }),
      ]);
      expect(serverQueues(loaded).map((queue) => queue.name)).toEqual(['q']);

      const other = write(
        'other.ts',
        "import { defineQueue } from 'shuttle';\nexport const q = defineQueue('q', { concurrency: 3 });\n",
      );
      const clash = loadDefinitionFiles([flows, other]);
      await expect(clash).rejects.toThrow(StartupError);
      await expect(clash).rejects.toThrow(
        `${other}: queue 'q' is declared as {"concurrency":3} here and as {"concurrency":2} in ${flows}; declare it once, or the same in both.`,
      );

      // A workflow whose queue no module declares: the worker would refuse every start, so it does not start.
      const lonely = write(
        'lonely.ts',
        "import { defineWorkflow } from 'shuttle';\nexport default defineWorkflow({ name: 'lonely', version: 1, queue: 'payments', *run() {} });\n",
      );
      expect(() => serverQueues({ workflows: [], queues: [] })).not.toThrow();
      const alone = await loadDefinitionFiles([lonely]);
      expect(() => serverQueues(alone)).toThrow(
        "Workflow 'lonely' goes onto queue 'payments', which no module declares: export const payments = defineQueue('payments', { concurrency: … }) from one of the --workflows modules.",
      );
      // …unless it is given in code (startWorker({ queues })), as a record or defineQueue()s.
      expect(serverQueues(alone, { payments: { concurrency: 1 } }).map((queue) => queue.name)).toEqual([
        'payments',
      ]);
      expect(() => serverQueues(loaded, { q: { concurrency: 5 } })).toThrow(
        /Queue 'q' is declared as \{"concurrency":5\} in the worker's options and as \{"concurrency":2\} in a workflow module/,
      );
      // A bad declaration is the engine's own error, at load.
      const bad = write(
        'bad.ts',
        "import { defineQueue } from 'shuttle';\nexport const q = defineQueue('q', { concurrency: 0 });\n",
      );
      await expect(loadDefinitionFiles([bad])).rejects.toThrow(
        /options\.queues\.q\.concurrency must be a positive whole number; got 0/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
