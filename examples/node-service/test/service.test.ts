/**
 * The service, as its users see it: real HTTP requests against the Hono app, a Shuttle worker on embedded
 * PGlite in a temporary folder — and the `shuttle` command of the installed package.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { serve, type ServerType } from '@hono/node-server';
import { startWorker, type RunningWorker } from 'shuttle/server';
import { createApp } from '../src/app';
import { activities, order } from '../src/workflows';

const shuttleToken = 'example-shuttle-token-0123';
let dataDir: string;
let worker: RunningWorker;
let server: ServerType;
let base: string;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'shuttle-example-'));
  worker = await startWorker({ definitions: [order], dataDir: join(dataDir, 'db'), label: 'example-test' });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: createApp(worker.engine, { shuttleToken }).fetch, port: 0 }, (info) => {
      base = `http://127.0.0.1:${info.port}`;
      resolve();
    });
  });
});

after(async () => {
  server?.close();
  await worker?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function waitForStage(orderId: string, stage: string) {
  for (let i = 0; i < 400; i++) {
    const { body } = await call('GET', `/orders/${orderId}`);
    if ((body.state as { stage?: string } | undefined)?.stage === stage) return body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`order ${orderId} never reached stage ${stage}`);
}

test('a request starts a workflow; a signal from another request lets it finish; its result is served', async () => {
  const started = await call('POST', '/orders', { orderId: 'A-1', amountCents: 4200 });
  assert.equal(started.status, 201);
  assert.deepEqual(started.body, { workflowId: 'order-A-1', started: true });

  await waitForStage('A-1', 'awaiting-approval');
  assert.equal((await call('POST', '/orders/A-1/approve', { ok: true })).status, 202);

  const result = await call('GET', '/orders/A-1/result');
  assert.deepEqual(result.body, { orderId: 'A-1', status: 'shipped', chargeId: 'ch_A-1_4200' });
  const described = await call('GET', '/orders/A-1');
  assert.equal(described.body.status, 'completed');
});

test("Shuttle's own HTTP API, mounted in the Hono app: behind its token, it reads and signals the app's orders", async () => {
  const anonymous = await fetch(`${base}/shuttle/workflows`);
  assert.equal(anonymous.status, 401);
  const auth = { authorization: `Bearer ${shuttleToken}` };
  const document = (await (await fetch(`${base}/shuttle/openapi.json`)).json()) as { openapi: string };
  assert.equal(document.openapi, '3.1.0');
  await call('POST', '/orders', { orderId: 'S-1', amountCents: 500 });
  await waitForStage('S-1', 'awaiting-approval');
  const listed = await call('GET', '/shuttle/workflows?workflowType=order&status=running', undefined, auth);
  assert.ok((listed.body.items as { workflowId: string }[]).some((item) => item.workflowId === 'order-S-1'));
  const signal = await fetch(`${base}/shuttle/workflows/order-S-1/signals/approve`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ payload: { ok: true } }),
  });
  assert.equal(signal.status, 204);
  const outcome = await call('GET', '/shuttle/workflows/order-S-1/result?waitMs=20000', undefined, auth);
  assert.deepEqual(outcome.body, {
    workflowId: 'order-S-1',
    run: 1,
    status: 'completed',
    finished: true,
    result: { orderId: 'S-1', status: 'shipped', chargeId: 'ch_S-1_500' },
  });
  const refused = await call('POST', '/shuttle/workflows', { workflowType: 7 }, auth);
  assert.equal(refused.status, 400);
  assert.match(
    String((refused.body.error as { message: string }).message),
    /body field 'workflowType' must be a string/,
  );
});

test('a retried request with the same Idempotency-Key starts nothing new, and charges once', async () => {
  const chargesBefore = activities.charges;
  const headers = { 'Idempotency-Key': 'req-77' };
  const first = await call('POST', '/orders', { orderId: 'B-7', amountCents: 100 }, headers);
  const second = await call('POST', '/orders', { orderId: 'B-7', amountCents: 100 }, headers);
  assert.equal(first.status, 201);
  assert.equal(second.status, 200);
  assert.deepEqual(second.body, { workflowId: 'order-B-7', started: false });
  await waitForStage('B-7', 'awaiting-approval');
  await call('POST', '/orders/B-7/approve', { ok: false });
  assert.equal((await call('GET', '/orders/B-7/result')).body.status, 'rejected');
  assert.equal(activities.charges - chargesBefore, 1);
});

test('bad input is refused with 400 before anything starts; an unknown order is 404', async () => {
  assert.equal((await call('POST', '/orders', { orderId: 5 })).status, 400);
  assert.equal((await call('GET', '/orders/nope')).status, 404);
});

test('the installed `shuttle` command runs a worker on a JavaScript definition file', async () => {
  // The command npm linked from the installed package (what `npx shuttle` runs), started directly so that a
  // signal reaches the worker itself.
  const shuttle = join(process.cwd(), 'node_modules', '.bin', 'shuttle');
  const help = spawnSync(shuttle, ['help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /worker +Run an engine/);

  const definitions = join(dataDir, 'hello.mjs');
  writeFileSync(
    definitions,
    [
      "import { defineWorkflow } from 'shuttle/workflow';",
      "export const hello = defineWorkflow({ name: 'hello', version: 1, *run(ctx, input) {",
      "  return yield* ctx.activity('greet', () => `hello ${input.name}`);",
      '} });',
      '',
    ].join('\n'),
  );
  const child = spawn(
    shuttle,
    ['worker', '--workflows', definitions, '--data-dir', join(dataDir, 'cli-db')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  try {
    for (let i = 0; i < 600 && !output.includes('worker started') && child.exitCode === null; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(
      output,
      /worker started.*hello@1/,
      `the worker's log names the definition it loaded:\n${output}`,
    );
  } finally {
    // SIGTERM: the worker ends its session and exits within 2 s (a second signal, or SIGKILL, at once).
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(late);
  }
});
