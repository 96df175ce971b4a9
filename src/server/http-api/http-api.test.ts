/**
 * The HTTP API as `shuttle serve` serves it, over a real PostgreSQL with an engine in the server running the
 * demos: every operation of its OpenAPI document called and every answer validated against the document;
 * the document itself validated as OpenAPI 3.1 and its declared bodies and query parameters checked against
 * what the API accepts; bad input refused with the engine's own typed errors before anything is written; and
 * the API driven from other programs — curl and Python's standard library.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, defineWorkflow, type Engine, type QueueStartOptions } from '../../engine';
import { validateQueueStart } from '../../engine/queues/queue-options';
import { declarations, domains } from '../../protocol';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, type TestDatabase } from '../../storage/postgres.test-support';
import { builtInWorkflows } from '../../workflows';
import { createLogger } from '../log';
import { startServer, type RunningServer } from '../serve';
import { notRouted, routes } from './routes';

/** JSON read by path in assertions: the OpenAPI document and the API's answers. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const run = promisify(execFile);
const token = 'api-test-token-0123456789';

let database: TestDatabase;
let server: RunningServer;
let studioDir: string;
let document: Record<string, Loose>;
/** An engine of the test's own on the same store: what the console API answers to the same input. */
let direct: Engine;
let directStorage: PostgresStorage;

beforeAll(async () => {
  database = await createTestDatabase();
  studioDir = mkdtempSync(join(tmpdir(), 'shuttle-api-studio-'));
  writeFileSync(join(studioDir, 'index.html'), '<!doctype html><html><head></head></html>');
  server = await startServer({
    databaseUrl: database.url,
    port: 0,
    studioDir,
    demos: true,
    engines: 1,
    token,
    logger: createLogger({}, () => undefined),
  });
  directStorage = await PostgresStorage.open({ connectionString: database.url });
  direct = await createEngine({
    storage: directStorage,
    workflows: builtInWorkflows,
    ownership: 'workflow-lease',
    claimWorkflows: false,
    recover: false,
  });
  document = (await (await fetch(`${server.apiUrl}/openapi.json`)).json()) as Record<string, Loose>;
}, 60_000);

afterAll(async () => {
  await direct?.shutdown().catch(() => undefined);
  await directStorage?.close().catch(() => undefined);
  await server?.stop();
  rmSync(studioDir, { recursive: true, force: true });
  await database?.drop();
});

const ajv = new Ajv2020({ strict: false, allErrors: true });
let compiledDocument = false;
/** operationIds answered with a success status in this file, and any answer that broke the document. */
const covered = new Set<string>();
const violations: string[] = [];

/** The operation of the document a method and a concrete path fall under. */
function operationOf(method: string, path: string): { template: string; operation: Loose } | null {
  const bare = path.split('?')[0]!;
  for (const [template, item] of Object.entries(document.paths as Record<string, Loose>)) {
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
    if (pattern.test(bare) && item[method.toLowerCase()])
      return { template, operation: item[method.toLowerCase()] };
  }
  return null;
}

/** Checks an answer against the document: its status is declared, and its body fits the schema. */
function checkAnswer(method: string, path: string, status: number, body: unknown): void {
  const found = operationOf(method, path);
  if (!found) return; // a 404 or 405 for a route the document does not have
  const declared = found.operation.responses[String(status)];
  if (!declared) {
    violations.push(`${method} ${path}: status ${status} is not declared for ${found.template}`);
    return;
  }
  const response = declared.$ref ? document.components.responses[declared.$ref.split('/').pop()] : declared;
  const schema = response.content?.['application/json']?.schema;
  if (status >= 200 && status < 300) covered.add(found.operation.operationId);
  if (!schema) {
    if (body !== null && status !== 200)
      violations.push(`${method} ${path}: ${status} has a body the document does not declare`);
    return;
  }
  if (!compiledDocument) {
    ajv.addSchema(document, 'api');
    compiledDocument = true;
  }
  const ref = schema.$ref ? `api${schema.$ref}` : null;
  const validate = ref ? ajv.getSchema(ref)! : ajv.compile(schema);
  if (!validate(body))
    violations.push(
      `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`,
    );
}

type Answer = { status: number; body: Loose; headers: Headers };

async function call(
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string>; token?: string | null } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? token}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${server.apiUrl}${path}`, { method, headers, body });
  const text = await response.text();
  const parsed = text === '' ? null : (JSON.parse(text) as unknown);
  checkAnswer(method, path, response.status, parsed);
  return { status: response.status, body: parsed, headers: response.headers };
}

/** Polls until `check` returns a value (the API's own reads), or fails after `timeoutMs`. */
async function until<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const orderInput = (orderId: string) => ({
  orderId,
  customer: 'ada@example.com',
  items: [{ sku: 'TEA', quantity: 1, unitPriceCents: 850 }],
  shippingAddress: '12 Analytical Row',
  paymentGatewayFailures: 0,
  approvalTimeoutMs: 600_000,
  packingMs: 0,
  transitMs: 0,
});

const approvalInput = {
  requestId: 'EXP-1',
  requester: 'grace',
  summary: 'Travel',
  amountCents: 1000,
  approvers: ['ada'],
  timeoutMs: 600_000,
};

describe('the HTTP API of shuttle serve', () => {
  it('is an OpenAPI 3.1 document that names every method of the workflows, schedules and queues domains, or why not', async () => {
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    const routed = new Set(routes.map((route) => route.calls));
    for (const method of [
      ...Object.keys(domains.workflows),
      ...Object.keys(domains.schedules),
      ...Object.keys(domains.queues),
    ])
      expect(routed.has(method as never) || Object.hasOwn(notRouted, method), method).toBe(true);
    // Served without a token; everything else needs one.
    const anonymous = await call('GET', '/openapi.json', { token: null });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.paths['/workflows']).toBeDefined();
  });

  it('serves every operation of its document, each answer valid against it', async () => {
    // Start, with an idempotency key: the repeat answers 200 with the same run and started: false.
    const started = await call('POST', '/workflows', {
      body: { workflowType: 'approval', input: approvalInput, options: { id: 'api-approval-1' } },
    });
    expect(started).toMatchObject({
      status: 201,
      body: { workflowId: 'api-approval-1', run: 1, started: true },
    });
    const keyed = await call('POST', '/workflows', {
      body: { workflowType: 'countdown', input: { from: 0, tickMs: 0 } },
      headers: { 'idempotency-key': 'api-key-1' },
    });
    expect(keyed.status).toBe(201);
    const repeat = await call('POST', '/workflows', {
      body: { workflowType: 'countdown', input: { from: 0, tickMs: 0 } },
      headers: { 'idempotency-key': 'api-key-1' },
    });
    expect(repeat).toMatchObject({
      status: 200,
      body: { workflowId: keyed.body.workflowId, started: false },
    });

    // Read it: list (filters from the query), describe, runs, timeline.
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const listed = await call(
      'GET',
      `/workflows?workflowType=approval&status=running,pending&limit=10&createdFrom=${since}&createdTo=${Date.now() + 60_000}`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((item: { workflowId: string }) => item.workflowId)).toContain(
      'api-approval-1',
    );
    expect((await call('GET', '/workflows/api-approval-1')).body).toMatchObject({
      workflowId: 'api-approval-1',
      workflowType: 'approval',
    });
    expect((await call('GET', '/workflows/api-approval-1/runs')).body.items).toHaveLength(1);
    expect((await call('GET', '/workflows/api-approval-1/history?run=1')).body).toMatchObject({
      format: 'shuttle-history/1',
      workflowId: 'api-approval-1',
      run: 1,
      workflowType: 'approval',
    });
    await until(async () => {
      const timeline = await call('GET', '/workflows/api-approval-1/timeline?limit=50');
      return (
        timeline.body.items.some((entry: { kind: string }) => entry.kind === 'claim-acquired') || undefined
      );
    }, 'the approval to be claimed');

    // Query and updates (a validator's rejection is a 422 and changes nothing).
    const query = await until(async () => {
      const answer = await call('POST', '/workflows/api-approval-1/queries/status', { body: {} });
      return answer.status === 200 ? answer : undefined;
    }, 'the status query');
    expect(query.body).toEqual({
      result: { status: 'pending', decidedBy: null, note: null, approvers: ['ada'] },
    });
    const invalid = await call('POST', '/workflows/api-approval-1/updates/approve', { body: { arg: {} } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.name).toBe('UpdateRejectedError');
    const updated = await call('POST', '/workflows/api-approval-1/updates/approve', {
      body: { arg: { by: 'ada' }, timeoutMs: 20_000 },
    });
    expect(updated).toMatchObject({
      status: 200,
      body: { result: { status: 'approved', decidedBy: 'ada' } },
    });
    const outcome = await call('GET', '/workflows/api-approval-1/result?waitMs=20000');
    expect(outcome.body).toMatchObject({ workflowId: 'api-approval-1', status: 'completed', finished: true });
    expect(outcome.body.result).toMatchObject({ status: 'approved', decidedBy: 'ada' });

    // A signal, and signal-with-start (which starts the order with the signal in one commit).
    await call('POST', '/workflows', {
      body: { workflowType: 'order', input: orderInput('A-1'), options: { id: 'api-order-1' } },
    });
    expect(
      (
        await call('POST', '/workflows/api-order-1/signals/approve', {
          body: { payload: { ok: true, by: 'ada' } },
        })
      ).status,
    ).toBe(204);
    expect((await call('GET', '/workflows/api-order-1/result?waitMs=30000')).body).toMatchObject({
      status: 'completed',
      finished: true,
    });
    const withStart = await call('POST', '/signal-with-start', {
      body: {
        workflowType: 'order',
        input: orderInput('A-2'),
        signalName: 'approve',
        payload: { ok: true, by: 'linus' },
        options: { id: 'api-order-2' },
      },
    });
    expect(withStart).toMatchObject({ status: 200, body: { workflowId: 'api-order-2', started: true } });
    expect((await call('GET', '/workflows/api-order-2/result?waitMs=30000')).body.status).toBe('completed');

    // A long poll that ends before the workflow does: finished false, then suspend, resume, cancel.
    await call('POST', '/workflows', {
      body: { workflowType: 'countdown', input: { from: 600, tickMs: 1000 }, options: { id: 'api-count-1' } },
    });
    const early = await call('GET', '/workflows/api-count-1/result?waitMs=100');
    expect(early.body).toMatchObject({ workflowId: 'api-count-1', finished: false });
    expect((await call('POST', '/workflows/api-count-1/suspend')).status).toBe(204);
    expect((await call('GET', '/workflows/api-count-1')).body.status).toBe('suspended');
    expect((await call('POST', '/workflows/api-count-1/resume')).status).toBe(204);
    expect(
      (await call('POST', '/workflows/api-count-1/cancel', { body: { reason: 'not needed' } })).status,
    ).toBe(204);
    expect((await call('GET', '/workflows/api-count-1/result?waitMs=30000')).body).toMatchObject({
      status: 'cancelled',
      finished: true,
      reason: 'not needed',
    });

    // Terminate, then purge (a running workflow cannot be purged: 409).
    await call('POST', '/workflows', {
      body: { workflowType: 'countdown', input: { from: 600, tickMs: 1000 }, options: { id: 'api-count-2' } },
    });
    expect((await call('DELETE', '/workflows/api-count-2')).status).toBe(409);
    expect(
      (await call('POST', '/workflows/api-count-2/terminate', { body: { reason: 'by hand' } })).status,
    ).toBe(204);
    const purged = await call('DELETE', '/workflows/api-count-2');
    expect(purged).toMatchObject({ status: 200, body: { workflowId: 'api-count-2', runs: [1] } });
    expect((await call('GET', '/workflows/api-count-2')).status).toBe(404);

    // External activities: complete one, fail another (its only attempt: the workflow fails).
    for (const [id, verb] of [
      ['api-manual-1', 'complete'],
      ['api-manual-2', 'fail'],
    ] as const) {
      await call('POST', '/workflows', {
        body: { workflowType: 'manual-approval', input: { requestId: id }, options: { id } },
      });
      const completionToken = await until(async () => {
        const description = await call('GET', `/workflows/${id}`);
        return description.body.pending?.leaves?.find(
          (leaf: { completionToken?: string }) => leaf.completionToken,
        )?.completionToken as string | undefined;
      }, `${id}'s completion token`);
      const body =
        verb === 'complete'
          ? { token: completionToken, result: { approved: true, by: 'ada' } }
          : { token: completionToken, error: { name: 'Declined', message: 'no budget' } };
      expect((await call('POST', `/activities/${verb}`, { body })).status).toBe(204);
      const ended = await call('GET', `/workflows/${id}/result?waitMs=30000`);
      expect(ended.body.status).toBe(verb === 'complete' ? 'completed' : 'failed');
      if (verb === 'fail') expect(ended.body.error.message).toContain('no budget');
      // The same token again: that attempt is over.
      expect((await call('POST', `/activities/${verb}`, { body })).status).toBe(409);
    }

    // Fork the failed one from where it stopped (its external activity): run 2 waits for a completion again.
    const fork = await call('POST', '/workflows/api-manual-2/fork', { body: {} });
    expect(fork).toMatchObject({ status: 201, body: { workflowId: 'api-manual-2', run: 2 } });
    const forked = await until(async () => {
      const description = await call('GET', '/workflows/api-manual-2');
      return description.body.pending ? description : undefined;
    }, 'the fork to wait for its activity');
    expect(forked.body).toMatchObject({
      run: 2,
      status: 'running',
      forkedFrom: { id: 'api-manual-2', run: 1, position: 0 },
    });
    // Into the same id again while it runs: 409, and into a new id from a position it never reached: 400.
    expect((await call('POST', '/workflows/api-manual-2/fork', { body: { fromPosition: 0 } })).status).toBe(
      409,
    );
    const tooFar = await call('POST', '/workflows/api-manual-2/fork', {
      body: { fromPosition: 5, run: 1, newId: 'api-manual-3' },
    });
    expect(tooFar).toMatchObject({ status: 400, body: { error: { name: 'InvalidOptionsError' } } });

    // Queues: the demos' payments queue (2 at once, 1 per key). Two payments of one key: the first is
    // admitted, the second waits behind it (its key is full) — the queue, the position and the key's counts
    // say so; a singleton refuses a second start (409) or joins it; bad queue options are the engine's 400s.
    const payment = (customer: string, workMs: number) => ({ customer, amount: 10, workMs });
    expect(
      (
        await call('POST', '/workflows', {
          body: {
            workflowType: 'payment',
            input: payment('acme', 3_000),
            options: { id: 'api-pay-1', concurrencyKey: 'acme' },
          },
        })
      ).status,
    ).toBe(201);
    const admitted = await until(async () => {
      const answer = await call('GET', '/workflows/api-pay-1/queue');
      return answer.status === 200 && answer.body.status === 'admitted' ? answer.body : undefined;
    }, 'the first payment to be admitted');
    expect(admitted).toMatchObject({ queue: 'payments', key: 'acme', priority: 5 });
    expect(
      (
        await call('POST', '/workflows', {
          body: {
            workflowType: 'payment',
            input: payment('acme', 0),
            options: { id: 'api-pay-2', queue: 'payments', concurrencyKey: 'acme', priority: 1 },
          },
        })
      ).status,
    ).toBe(201);
    expect((await call('GET', '/workflows/api-pay-2/queue')).body).toMatchObject({
      queue: 'payments',
      status: 'waiting',
      position: 1,
      key: 'acme',
      priority: 1,
    });
    expect((await call('GET', '/workflows/api-pay-2')).body).toMatchObject({
      status: 'pending',
      queue: { name: 'payments', key: 'acme', priority: 1 },
    });
    const queues = await call('GET', '/queues');
    expect(queues.status).toBe(200);
    expect(queues.body.items.find((queue: { name: string }) => queue.name === 'payments')).toMatchObject({
      concurrency: 2,
      perKeyConcurrency: 1,
      rateLimit: { limit: 30, periodMs: 60_000 },
    });
    const described = await call('GET', '/queues/payments');
    expect(described.body.slots.map((slot: { workflowId: string }) => slot.workflowId)).toContain(
      'api-pay-1',
    );
    expect(described.body.next[0]).toMatchObject({ workflowId: 'api-pay-2', type: 'payment', key: 'acme' });
    expect(described.body.keys).toContainEqual({ key: 'acme', running: 1, waiting: 1 });
    const unknownQueue = await call('GET', '/queues/no-such-queue');
    expect(unknownQueue).toMatchObject({ status: 404, body: { error: { name: 'QueueNotFoundError' } } });
    const notQueued = await call('GET', '/workflows/api-approval-1/queue');
    expect(notQueued).toMatchObject({ status: 404, body: { error: { name: 'NotQueuedError' } } });
    expect(notQueued.body.error.message).toMatch(/was not started onto a queue/);
    expect((await call('GET', '/workflows/api-no-such/queue')).body.error.name).toBe('WorkflowNotFoundError');

    const singleton = (id: string, ifActive?: 'join' | 'refuse') =>
      call('POST', '/workflows', {
        body: {
          workflowType: 'payment',
          input: payment('zeta', 2_000),
          options: {
            id,
            concurrencyKey: 'zeta',
            singleton: { key: 'api-zeta', ...(ifActive ? { ifActive } : {}) },
          },
        },
      });
    expect((await singleton('api-pay-s1')).status).toBe(201);
    const refused = await singleton('api-pay-s2', 'refuse');
    expect(refused).toMatchObject({ status: 409, body: { error: { name: 'SingletonConflictError' } } });
    expect(refused.body.error.message).toMatch(/Singleton key 'api-zeta' belongs to workflow 'api-pay-s1'/);
    expect(await singleton('api-pay-s3')).toMatchObject({
      status: 200,
      body: { workflowId: 'api-pay-s1', started: false },
    });
    expect((await call('GET', '/workflows/api-pay-s2')).status).toBe(404);

    // api-pay-2 runs once api-pay-1 has ended; then it has no place in the queue.
    expect((await call('GET', '/workflows/api-pay-2/result?waitMs=30000')).body.status).toBe('completed');
    const ended = await call('GET', '/workflows/api-pay-2/queue');
    expect(ended).toMatchObject({ status: 404, body: { error: { name: 'NotQueuedError' } } });
    expect(ended.body.error.message).toMatch(/went through queue 'payments' and has ended \(completed\)/);
    const timeline = await call('GET', '/workflows/api-pay-2/timeline');
    const first = (await call('GET', '/workflows/api-pay-1')).body;
    const admission = timeline.body.items.find((entry: { kind: string }) => entry.kind === 'started');
    expect(admission.detail.queue).toMatchObject({ name: 'payments' });
    // It was admitted only after the first of its key ended: the key's limit held.
    expect(admission.at).toBeGreaterThanOrEqual(first.endedAt);

    // Schedules: create (the same spec again is no change), read, pause, resume, trigger, delete.
    const spec = {
      cron: '0 3 * * *',
      timezone: 'Europe/Paris',
      workflow: 'countdown',
      input: { from: 0, tickMs: 0 },
    };
    const created = await call('POST', '/schedules', { body: { name: 'api-nightly', spec } });
    expect(created).toMatchObject({ status: 200, body: { name: 'api-nightly', paused: false } });
    expect((await call('POST', '/schedules', { body: { name: 'api-nightly', spec } })).status).toBe(200);
    expect(
      (
        await call('POST', '/schedules', {
          body: { name: 'api-nightly', spec: { ...spec, cron: '0 4 * * *' } },
        })
      ).status,
    ).toBe(409);
    expect((await call('GET', '/schedules')).body.items.map((item: { name: string }) => item.name)).toContain(
      'api-nightly',
    );
    expect((await call('GET', '/schedules/api-nightly')).body.spec.timezone).toBe('Europe/Paris');
    expect((await call('POST', '/schedules/api-nightly/pause')).body.paused).toBe(true);
    expect((await call('POST', '/schedules/api-nightly/resume')).body.paused).toBe(false);
    const triggered = await call('POST', '/schedules/api-nightly/trigger');
    expect(triggered.status).toBe(200);
    expect(
      (await call('GET', `/workflows/${encodeURIComponent(triggered.body.workflowId)}/result?waitMs=30000`))
        .body.status,
    ).toBe('completed');
    expect((await call('DELETE', '/schedules/api-nightly')).status).toBe(204);
    expect((await call('GET', '/schedules/api-nightly')).status).toBe(404);

    // Activity limits are declared in code, not stored: the server's engine does not declare 'api-gate', but
    // GET /activity-limits reads the slot another engine of the fleet holds in the store, with its holder.
    let open!: () => void;
    const gateOpen = new Promise<void>((resolve) => (open = resolve));
    const gatedWorkflow = defineWorkflow({
      name: 'api-gated',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('api-gate', () => gateOpen.then(() => 'through'));
      },
    });
    const gated = await createEngine({
      storage: directStorage,
      workflows: [gatedWorkflow],
      ownership: 'workflow-lease',
      activityLimits: { 'api-gate': { concurrency: 1 } },
    });
    try {
      const declaredOnly = await call('GET', '/activity-limits');
      expect(declaredOnly.status).toBe(200);
      expect(declaredOnly.body.items.map((item: { name: string }) => item.name)).not.toContain('api-gate');
      // The server's engine declares the demos' limit (shuttle serve --demos): its limits are known here.
      expect(
        declaredOnly.body.items.find((item: { name: string }) => item.name === 'payment-gateway'),
      ).toMatchObject({ declared: true, concurrency: 1, perEngine: null, runningHere: 0, waitingHere: 0 });
      const handle = await gated.start(gatedWorkflow, undefined, { id: 'api-gated-1' });
      const held = await until(async () => {
        const items = (await call('GET', '/activity-limits')).body.items as Loose[];
        return items.find((item) => item.name === 'api-gate');
      }, 'the api-gate slot in GET /activity-limits');
      expect(held).toMatchObject({
        declared: false,
        concurrency: null,
        perEngine: null,
        runningHere: 0,
        waitingHere: 0,
        running: [{ engineId: gated.id, workflowId: 'api-gated-1', attempt: 1 }],
      });
      open();
      expect(await handle.result()).toBe('through');
      await until(async () => {
        const items = (await call('GET', '/activity-limits')).body.items as Loose[];
        return items.some((item) => item.name === 'api-gate') ? undefined : true;
      }, 'the api-gate slot released');
    } finally {
      open();
      await gated.shutdown();
    }

    const operations = Object.values(
      document.paths as Record<string, Record<string, { operationId: string }>>,
    )
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .filter((id) => id !== 'openApiDocument');
    expect(operations.filter((id) => !covered.has(id))).toEqual([]);
    expect(violations).toEqual([]);
  }, 120_000);

  it('refuses bad input with typed errors before anything is written, as the engine itself does', async () => {
    // A workflow that runs throughout, to be refused a second start.
    await direct.start('countdown', { from: 600, tickMs: 1000 }, { id: 'api-running' });
    const before = (await call('GET', '/workflows?limit=1000')).body.items.length;

    // Who may call: a bearer token, and only this API's.
    const anonymous = await call('GET', '/workflows', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(anonymous.body.error.message).toContain('Authorization: Bearer');
    expect((await call('GET', '/workflows', { token: 'another-token-of-this-length' })).status).toBe(401);
    // The studio's cookie is not a way in.
    expect(
      (await call('GET', '/workflows', { token: null, headers: { cookie: `shuttle_token=${token}` } }))
        .status,
    ).toBe(401);

    // Routes and methods.
    expect((await call('GET', '/nothing-here')).body.error.name).toBe('RouteNotFoundError');
    const wrongMethod = await call('PUT', '/workflows/x');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, DELETE');

    // The body: JSON, an object, the right content type, the fields the route takes.
    const refusals: [Answer, number, string][] = [
      [
        await call('POST', '/workflows', {
          raw: '{"workflowType":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'the body is not JSON',
      ],
      [
        await call('POST', '/workflows', { body: ['countdown'] }),
        400,
        'the body must be a JSON object, not an array',
      ],
      [
        await call('POST', '/workflows', {
          raw: 'workflowType=countdown',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        415,
        'Content-Type: application/json',
      ],
      [
        await call('POST', '/workflows', { body: { workflowType: 3 } }),
        400,
        "body field 'workflowType' must be a string, not number 3",
      ],
      [
        await call('POST', '/workflows', { body: { workflowType: 'countdown', inputs: {} } }),
        400,
        "body field 'inputs' is not taken; the body takes workflowType, input, options",
      ],
      [
        await call('POST', '/workflows/x/signals/go', { body: { workflowId: 'y' } }),
        400,
        "body field 'workflowId' is given by the path already",
      ],
      [await call('POST', '/workflows/x/suspend', { body: { now: true } }), 400, 'takes no body'],
      [
        await call('GET', '/workflows?limit=abc'),
        400,
        "query parameter 'limit' must be an integer from 1 to 1000, not 'abc'",
      ],
      [
        await call('GET', '/workflows?limit=5000'),
        400,
        "query parameter 'limit' must be an integer from 1 to 1000, not '5000'",
      ],
      [
        await call('GET', '/workflows?status=done'),
        400,
        "query parameter 'status' has 'done'; each value must be one of pending, running",
      ],
      [await call('GET', '/workflows?sort=asc'), 400, "GET /workflows takes no query parameter 'sort'"],
      [
        await call('GET', '/workflows/x/result?waitMs=999999'),
        400,
        "query parameter 'waitMs' must be an integer from 0 to 300000",
      ],
      [
        await call('GET', '/workflows/x?run=first'),
        400,
        "query parameter 'run' must be an integer of at least 1",
      ],
      [
        await call('GET', '/workflows?endedFrom=yesterday'),
        400,
        "query parameter 'endedFrom' must be a time: epoch milliseconds or ISO 8601",
      ],
      [
        await call('POST', '/workflows', {
          body: {
            workflowType: 'countdown',
            options: { id: 'api-big' },
            input: { from: 1, pad: 'x'.repeat(3 * 1024 * 1024) },
          },
        }),
        413,
        'larger than',
      ],
      [
        await call('POST', '/workflows', {
          body: { workflowType: 'countdown', input: { from: 1 }, options: { id: 'api-keyed' } },
          headers: { 'idempotency-key': 'a' },
        }).then(async () =>
          call('POST', '/workflows', {
            body: { workflowType: 'countdown', input: { from: 1 }, options: { idempotencyKey: 'b' } },
            headers: { 'idempotency-key': 'c' },
          }),
        ),
        400,
        'Idempotency-Key header and options.idempotencyKey differ',
      ],
    ];
    for (const [answer, status, text] of refusals) {
      expect(answer.status, text).toBe(status);
      expect(answer.body.error.message, text).toContain(text);
    }
    // One of them was let through on purpose to set up the last refusal: purge it, so "nothing written" holds.
    await direct.terminate('api-keyed').catch(() => undefined);
    await until(
      async () => ((await direct.describe('api-keyed')).status === 'terminated' ? true : undefined),
      'api-keyed to end',
    );
    await direct.purge('api-keyed');

    // What the engine refuses: the same error class and the same words as the console API (engine.start…).
    const engineCases: [string, string, unknown, () => Promise<unknown>][] = [
      ['POST', '/workflows', { workflowType: 'no-such-type' }, () => direct.start('no-such-type', undefined)],
      [
        'POST',
        '/workflows',
        { workflowType: 'countdown', input: { from: 1 }, options: { id: '' } },
        () => direct.start('countdown', { from: 1 }, { id: '' }),
      ],
      [
        'POST',
        '/workflows',
        { workflowType: 'countdown', input: { from: 1 }, options: { retries: 3 } },
        () => direct.start('countdown', { from: 1 }, { retries: 3 } as never),
      ],
      [
        'POST',
        '/workflows',
        { workflowType: 'countdown', input: { from: 1 }, options: { idReuse: 'sometimes' } },
        () => direct.start('countdown', { from: 1 }, { idReuse: 'sometimes' } as never),
      ],
      [
        'POST',
        '/workflows',
        {
          workflowType: 'countdown',
          input: { from: 1, pad: 'x'.repeat(1_500_000) },
          options: { id: 'api-large' },
        },
        () => direct.start('countdown', { from: 1, pad: 'x'.repeat(1_500_000) }, { id: 'api-large' }),
      ],
      [
        'POST',
        '/schedules',
        { name: 'bad-cron', spec: { cron: 'every day', workflow: 'countdown' } },
        () => direct.schedule('bad-cron', { cron: 'every day', workflow: 'countdown' }),
      ],
      ['POST', '/workflows/api-missing/signals/go', {}, () => direct.signal('api-missing', 'go')],
      ['GET', '/workflows/api-missing', undefined, () => direct.describe('api-missing')],
      [
        'GET',
        '/workflows/api-approval-1?run=9',
        undefined,
        () => direct.describe('api-approval-1', { run: 9 }),
      ],
      ['GET', '/workflows/api-missing/timeline', undefined, () => direct.timeline('api-missing')],
      [
        'POST',
        '/workflows',
        { workflowType: 'countdown', input: { from: 1 }, options: { id: 'api-running', idReuse: 'never' } },
        () => direct.start('countdown', { from: 1 }, { id: 'api-running', idReuse: 'never' }),
      ],
    ];
    for (const [method, path, body, viaEngine] of engineCases) {
      const answer = await call(method, path, body === undefined ? {} : { body });
      const thrown = (await viaEngine().then(
        () => null,
        (error: unknown) => error,
      )) as Error | null;
      expect(thrown, path).not.toBeNull();
      expect(answer.body.error, `${method} ${path}`).toMatchObject({
        name: thrown!.name,
        message: thrown!.message,
      });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status, `${method} ${path}: ${answer.body.error.name}`).toBeLessThan(500);
    }
    expect((await call('GET', '/workflows/api-missing')).body.error.details).toEqual({
      workflowId: 'api-missing',
    });

    // Nothing was written by any of them.
    expect((await call('GET', '/workflows?limit=1000')).body.items.length).toBe(before);
    expect(
      (await call('GET', '/schedules')).body.items.map((item: { name: string }) => item.name),
    ).not.toContain('bad-cron');
    expect(violations).toEqual([]);
  }, 60_000);

  it("refuses bad queue options on POST /workflows with the engine's own words (400), writing nothing", async () => {
    const cases: [Record<string, unknown>, QueueStartOptions | null, RegExp][] = [
      [{ priority: 11 }, { priority: 11 }, /priority must be a whole number from 1/],
      [{ concurrencyKey: '' }, { concurrencyKey: '' }, /concurrencyKey must be a string of 1 to 200/],
      [
        { singleton: { key: 'k', ifActive: 'wait' } },
        { singleton: { key: 'k', ifActive: 'wait' as 'join' } },
        /ifActive/,
      ],
      [
        { debounce: { key: 'k', windowMs: 1000, maxWaitMs: 10 } },
        { debounce: { key: 'k', windowMs: 1000, maxWaitMs: 10 } },
        /maxWaitMs \(10\) must be at least/,
      ],
      [
        { singleton: { key: 'k' }, debounce: { key: 'k', windowMs: 1000 } },
        { singleton: { key: 'k' }, debounce: { key: 'k', windowMs: 1000 } },
        /singleton or debounce, not both/,
      ],
      [{ queue: 'undeclared' }, null, /Queue 'undeclared' is not declared on this engine/],
    ];
    for (const [options, same, words] of cases) {
      const answer = await call('POST', '/workflows', {
        body: {
          workflowType: 'payment',
          input: { customer: 'a', amount: 1 },
          options: { id: 'api-bad-queue', ...options },
        },
      });
      expect(answer, JSON.stringify(options)).toMatchObject({
        status: 400,
        body: { error: { name: 'InvalidOptionsError' } },
      });
      expect(answer.body.error.message).toMatch(words);
      // The same words as the engine's own check.
      if (same) expect(() => validateQueueStart(same)).toThrow(answer.body.error.message);
    }
    expect((await call('GET', '/workflows/api-bad-queue')).status).toBe(404);
  });

  it('refuses, on every route that takes a body, a field its document does not declare and a missing required one', async () => {
    for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, Loose>>))
      for (const [method, operation] of Object.entries(item)) {
        const path = template.replace(/\{\w+\}/g, 'x');
        const schema = operation.requestBody?.content['application/json'].schema;
        if (!schema) continue;
        expect(schema.additionalProperties, `${method} ${template}`).toBe(false);
        const extra = await call(method.toUpperCase(), path, { body: { zzz: 1 } });
        expect(extra.status, `${method} ${template}`).toBe(400);
        expect(extra.body.error.message).toContain("body field 'zzz' is not taken");
        for (const field of Object.keys(schema.properties)) expect(extra.body.error.message).toContain(field);
        if (schema.required.length === 0) continue;
        const missing = await call(method.toUpperCase(), path, { body: {} });
        expect(missing.status, `${method} ${template}`).toBe(400);
        expect(missing.body.error.message).toContain(`body field '${schema.required[0]}' is missing`);
        expect(operation.requestBody.required).toBe(true);
      }
    // And every integer query parameter it declares is checked as one.
    for (const [template, item] of Object.entries(document.paths as Record<string, Record<string, Loose>>))
      for (const [method, operation] of Object.entries(item))
        for (const parameter of operation.parameters ?? [])
          if (parameter.in === 'query' && parameter.schema.type === 'integer') {
            const answer = await call(
              method.toUpperCase(),
              `${template.replace(/\{\w+\}/g, 'x')}?${parameter.name}=1.5`,
            );
            expect(answer.status, `${template} ${parameter.name}`).toBe(400);
            expect(answer.body.error.message).toContain(
              `query parameter '${parameter.name}' must be an integer`,
            );
          }
    // Every param a body route declares in the protocol is in its document body, or in its path or query.
    for (const route of routes.filter((candidate) => candidate.body)) {
      const operation = document.paths[route.path][route.method.toLowerCase()];
      const inBody = Object.keys(operation.requestBody.content['application/json'].schema.properties);
      const elsewhere = (operation.parameters ?? []).map((parameter: { name: string }) => parameter.name);
      for (const param of Object.keys(declarations[route.calls].params))
        expect([...inBody, ...elsewhere], `${route.operationId}: ${param}`).toContain(param);
    }
    expect(violations).toEqual([]);
  }, 60_000);

  it('lists by search attributes with where= (curl), describes them, and refuses a bad condition as the engine does', async () => {
    const base = server.apiUrl;
    const curl = async (...args: string[]) => {
      const out = (
        await run('curl', [
          '-sS',
          '-g',
          '-w',
          '\n%{http_code}',
          '-H',
          `Authorization: Bearer ${token}`,
          ...args,
        ])
      ).stdout.trim();
      const cut = out.lastIndexOf('\n');
      return { status: Number(out.slice(cut + 1)), body: JSON.parse(out.slice(0, cut)) as Loose };
    };
    // Three orders (the demo sets customer, amount and orderId): two of one customer, amounts 8.5 and 17.
    const orders: [string, string, number][] = [
      ['api-attr-1', 'grace@example.com', 1],
      ['api-attr-2', 'grace@example.com', 2],
      ['api-attr-3', 'alan@example.com', 2],
    ];
    for (const [id, customer, quantity] of orders) {
      const input = { ...orderInput(id), customer, items: [{ sku: 'TEA', quantity, unitPriceCents: 850 }] };
      expect(
        (await call('POST', '/workflows', { body: { workflowType: 'order', input, options: { id } } }))
          .status,
      ).toBe(201);
    }
    const idsOf = (body: Loose) => body.items.map((item: { workflowId: string }) => item.workflowId).sort();
    const grace = await until(async () => {
      const answer = await curl(
        `${base}/workflows?where=${encodeURIComponent('customer=grace@example.com')}`,
      );
      return answer.body.items?.length === 2 ? answer : undefined;
    }, 'both orders of grace to set their attributes');
    expect(grace.status).toBe(200);
    expect(idsOf(grace.body)).toEqual(['api-attr-1', 'api-attr-2']);
    expect(grace.body.items[0].attributes.customer).toEqual({ type: 'string', value: 'grace@example.com' });
    checkAnswer('GET', '/workflows', grace.status, grace.body);
    // Two conditions (repeat the parameter): a range on the amount narrows them to one.
    const both = await curl(
      `${base}/workflows?where=${encodeURIComponent('customer=grace@example.com')}&where=${encodeURIComponent('amount>10')}&status=running`,
    );
    expect(idsOf(both.body)).toEqual(['api-attr-2']);
    const range = await call(
      'GET',
      `/workflows?where=${encodeURIComponent('amount>=8.5')}&where=${encodeURIComponent('amount<17')}&idPrefix=api-attr-`,
    );
    expect(idsOf(range.body)).toEqual(['api-attr-1']);
    const described = await call('GET', '/workflows/api-attr-3');
    expect(described.body.attributes).toEqual({
      customer: { type: 'string', value: 'alan@example.com' },
      amount: { type: 'number', value: 17 },
      orderId: { type: 'string', value: 'api-attr-3' },
    });
    // Refused as the engine refuses it: 400, the same error and words.
    for (const where of ['amount>=lots', 'amount~3', 'customer>']) {
      const answer = await curl(`${base}/workflows?where=${encodeURIComponent(where)}`);
      const thrown = (await direct.list({ where: [where] }).catch((error: unknown) => error)) as Error;
      expect(thrown.name, where).toBe('InvalidSearchAttributeError');
      expect(answer.status, where).toBe(400);
      expect(answer.body.error, where).toMatchObject({ name: thrown.name, message: thrown.message });
    }
    // A start's attributes are checked as the engine checks them: 400, nothing started.
    const badStart = { id: 'api-attr-bad', attributes: { amount: 'lots' } };
    const refusedStart = await call('POST', '/workflows', {
      body: { workflowType: 'order', input: orderInput('X-1'), options: badStart },
    });
    const thrownStart = (await direct
      .start('order', orderInput('X-1'), badStart as never)
      .catch((error: unknown) => error)) as Error;
    expect(refusedStart.status).toBe(400);
    expect(refusedStart.body.error).toMatchObject({
      name: 'InvalidSearchAttributeError',
      message: thrownStart.message,
    });
    expect((await call('GET', '/workflows/api-attr-bad')).status).toBe(404);
    for (const [id] of orders) await call('POST', `/workflows/${id}/terminate`, { body: {} });
    expect(violations).toEqual([]);
  }, 60_000);

  it('is driven from other programs: curl, and Python with its standard library only', async () => {
    const base = server.apiUrl;
    const curl = async (...args: string[]) =>
      (await run('curl', ['-sS', '-w', '\n%{http_code}', '-H', `Authorization: Bearer ${token}`, ...args]))
        .stdout;
    const started = await curl(
      '-X',
      'POST',
      `${base}/workflows`,
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify({
        workflowType: 'countdown',
        input: { from: 1, tickMs: 10 },
        options: { id: 'api-curl-1' },
      }),
    );
    expect(started.trim().split('\n').pop()).toBe('201');
    const result = await curl(`${base}/workflows/api-curl-1/result?waitMs=20000`);
    const [json, code] = result.trim().split('\n');
    expect(code).toBe('200');
    expect(JSON.parse(json!)).toMatchObject({ status: 'completed', result: { counted: 1 } });

    const script = join(studioDir, 'client.py');
    writeFileSync(
      script,
      [
        'import json, sys, urllib.request, urllib.error',
        'base, token = sys.argv[1], sys.argv[2]',
        'def call(method, path, body=None):',
        '    data = None if body is None else json.dumps(body).encode()',
        '    request = urllib.request.Request(base + path, data=data, method=method)',
        '    request.add_header("Authorization", "Bearer " + token)',
        '    if data is not None: request.add_header("Content-Type", "application/json")',
        '    try:',
        '        with urllib.request.urlopen(request) as response:',
        '            text = response.read().decode()',
        '            return response.status, (json.loads(text) if text else None)',
        '    except urllib.error.HTTPError as error:',
        '        return error.code, json.loads(error.read().decode())',
        'out = {}',
        'out["start"] = call("POST", "/workflows", {"workflowType": "order", "input": ' +
          JSON.stringify(orderInput('PY-1')) +
          ', "options": {"id": "api-python-1"}})',
        // Found by a search attribute (the order sets orderId as it starts): listed once its first turn ran.
        'import time, urllib.parse',
        'where = urllib.parse.quote("orderId=PY-1")',
        'for _ in range(300):',
        '    out["found"] = call("GET", "/workflows?where=" + where)',
        '    if out["found"][1]["items"]: break',
        '    time.sleep(0.1)',
        'out["describe"] = call("GET", "/workflows/api-python-1")',
        'out["signal"] = call("POST", "/workflows/api-python-1/signals/approve", {"payload": {"ok": True, "by": "python"}})',
        'out["result"] = call("GET", "/workflows/api-python-1/result?waitMs=30000")',
        // Forked from its first operation into a new id (it waits for approval again), then cancelled.
        'out["fork"] = call("POST", "/workflows/api-python-1/fork", {"fromPosition": 1, "newId": "api-python-2"})',
        'out["cancel"] = call("POST", "/workflows/api-python-2/cancel", {"reason": "python says no"})',
        'out["cancelled"] = call("GET", "/workflows/api-python-2/result?waitMs=30000")',
        'out["missing"] = call("GET", "/workflows/no-such-workflow")',
        'out["bad"] = call("POST", "/workflows", {"workflowType": 7})',
        'print(json.dumps(out))',
      ].join('\n'),
    );
    const { stdout } = await run('python3', [script, base, token]);
    const out = JSON.parse(stdout) as Record<string, [number, Loose]>;
    expect(out.start![0]).toBe(201);
    expect(out.found![0]).toBe(200);
    expect(out.found![1].items.map((row: Loose) => row.workflowId)).toEqual(['api-python-1']);
    expect(out.found![1].items[0].attributes).toMatchObject({ orderId: { type: 'string', value: 'PY-1' } });
    expect(out.describe![0]).toBe(200);
    expect(out.describe![1]).toMatchObject({ workflowId: 'api-python-1', workflowType: 'order' });
    expect(out.signal).toEqual([204, null]);
    expect(out.result![0]).toBe(200);
    expect(out.result![1]).toMatchObject({
      status: 'completed',
      finished: true,
      result: { status: 'delivered' },
    });
    expect(out.fork![0]).toBe(201);
    expect(out.fork![1]).toMatchObject({ workflowId: 'api-python-2', run: 1 });
    expect(out.cancel![0]).toBeLessThan(300);
    expect(out.cancelled![1]).toMatchObject({ status: 'cancelled', finished: true });
    expect(out.missing![0]).toBe(404);
    expect(out.missing![1].error.name).toBe('WorkflowNotFoundError');
    expect(out.bad![0]).toBe(400);
    expect(out.bad![1].error.message).toContain("body field 'workflowType' must be a string");
  }, 60_000);
});
