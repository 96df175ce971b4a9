/**
 * `shuttle serve` against a real PostgreSQL: who may reach the studio (the token, the Origin), and what a
 * bad message does (closes only its own socket). The studio files are a stand-in page (no build needed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION } from '../protocol';
import { createTestDatabase, type TestDatabase } from '../storage/postgres.test-support';
import { createLogger } from './log';
import { createEngine, defineWorkflow, WorkflowNotRegisteredError } from '../engine';
import { builtInWorkflows } from '../workflows';
import { startServer, type RunningServer } from './serve';
import { openStore } from './store';
import { startWorker } from './worker';

let database: TestDatabase;
let server: RunningServer;
let studioDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  studioDir = mkdtempSync(join(tmpdir(), 'shuttle-studio-'));
  writeFileSync(
    join(studioDir, 'index.html'),
    '<!doctype html><html><head><title>studio</title></head></html>',
  );
  server = await startServer({
    databaseUrl: database.url,
    port: 0,
    studioDir,
    logger: createLogger({}, () => undefined),
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(studioDir, { recursive: true, force: true });
  await database?.drop();
});

const cookie = () => `shuttle_token=${server.token}`;

/** Opens a socket; resolves when open, rejects with the HTTP status when the handshake is refused. */
function openSocket(headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.origin.replace('http', 'ws')}/ws`, { headers });
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`refused with ${response.statusCode}`)),
    );
    socket.once('error', reject);
  });
}

/** Sends a request and resolves with the response of that id (pushes are skipped). */
function ask(socket: WebSocket, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const parsed = JSON.parse(data.toString()) as Record<string, unknown>;
      if (parsed.kind === 'response' && parsed.id === message.id) {
        socket.off('message', onMessage);
        resolve(parsed);
      }
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify(message));
  });
}

const hello = (id: number, v = PROTOCOL_VERSION) => ({
  kind: 'request',
  v,
  id,
  method: 'hello',
  params: { protocolVersion: PROTOCOL_VERSION, databaseName: 'server', mode: 'viewer' },
});

function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
}

describe('shuttle serve: who may reach the studio', () => {
  it('refuses pages without the token or with a wrong one (401), hands the token over as a cookie on a page that moves on to the studio by itself, then serves the studio page marked as a server page', async () => {
    expect((await fetch(`${server.origin}/`)).status).toBe(401);
    expect((await fetch(`${server.origin}/?token=wrong`)).status).toBe(401);
    // The token comes back as a cookie, and the page then leaves the URL that carries it by a navigation of
    // its own (same-site, so the SameSite=Strict cookie goes with it even when another site opened the URL).
    const handover = await fetch(server.url, { redirect: 'manual' });
    expect(handover.status).toBe(200);
    expect(handover.headers.get('set-cookie')).toMatch(/shuttle_token=.*HttpOnly; SameSite=Strict/);
    const moveOn = await handover.text();
    expect(moveOn).toContain('location.replace("/")');
    expect(moveOn).not.toContain(server.token);
    const page = await fetch(`${server.origin}/`, { headers: { cookie: cookie() } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="shuttle-server"');
  });

  it('accepts the studio’s own host reached over HTTPS through a TLS-ending proxy that passes the Host header on', async () => {
    const host = new URL(server.origin).host;
    const proxied = await fetch(server.url, {
      headers: { origin: `https://${host}` },
      redirect: 'manual',
    });
    expect(proxied.status).not.toBe(403);
    const proxiedSocket = await openSocket({ cookie: cookie(), origin: `https://${host}` });
    proxiedSocket.close();
    const foreign = await fetch(server.url, {
      headers: { origin: `https://evil.example` },
      redirect: 'manual',
    });
    expect(foreign.status).toBe(403);
  });

  it('refuses a request from a foreign Origin even with the token (403)', async () => {
    const response = await fetch(server.url, {
      headers: { origin: 'http://evil.example' },
      redirect: 'manual',
    });
    expect(response.status).toBe(403);
  });

  it('refuses WebSocket handshakes without the token (401) or from a foreign Origin (403)', async () => {
    await expect(openSocket({})).rejects.toThrow('refused with 401');
    await expect(openSocket({ cookie: 'shuttle_token=wrong' })).rejects.toThrow('refused with 401');
    await expect(openSocket({ cookie: cookie(), origin: 'http://evil.example' })).rejects.toThrow(
      'refused with 403',
    );
  });

  it('serves the protocol on a socket with the token: hello says it is a server without authoring', async () => {
    const socket = await openSocket({ cookie: cookie(), origin: server.origin });
    const answer = await ask(socket, hello(1));
    expect(answer).toMatchObject({ ok: true, value: { runtime: { kind: 'server' }, authoring: false } });
    socket.close();
  });
});

describe('shuttle serve: search attribute filters over the WebSocket protocol', () => {
  it('passes where and attributes to the engine, and answers a bad condition with its error', async () => {
    const socket = await openSocket({ cookie: cookie(), origin: server.origin });
    expect(await ask(socket, hello(20))).toMatchObject({ ok: true });
    const list = (id: number, filter: Record<string, unknown>) =>
      ask(socket, { kind: 'request', v: PROTOCOL_VERSION, id, method: 'list', params: { filter } });
    // No workflow holds the attribute: nothing matches (its type is unknown, its shape is checked).
    expect(await list(21, { where: ['customer=acme'] })).toMatchObject({
      ok: true,
      value: { items: [], nextCursor: null },
    });
    expect(await list(22, { where: ['amount~3'] })).toMatchObject({
      ok: false,
      error: {
        name: 'InvalidSearchAttributeError',
        message: expect.stringContaining("is not 'name op value'"),
      },
    });
    expect(await list(23, { attributes: { amount: { above: 3 } } })).toMatchObject({
      ok: false,
      error: {
        name: 'InvalidSearchAttributeError',
        message: "list: attribute 'amount' has unknown operator 'above'; use eq, gt, gte, lt or lte.",
      },
    });
    socket.close();
  });
});

describe('shuttle serve: a bad message harms only its own socket', () => {
  it('answers an unknown method and a wrong protocol version with an error, and goes on serving that socket', async () => {
    const socket = await openSocket({ cookie: cookie(), origin: server.origin });
    const unknown = await ask(socket, {
      kind: 'request',
      v: PROTOCOL_VERSION,
      id: 7,
      method: 'dropTables',
      params: {},
    });
    expect(unknown).toMatchObject({
      ok: false,
      error: { name: 'ProtocolError', message: expect.stringContaining('Unknown method') },
    });
    const stale = await ask(socket, hello(8, PROTOCOL_VERSION - 1));
    expect(stale).toMatchObject({ ok: false, error: { name: 'ProtocolVersionMismatchError' } });
    expect(await ask(socket, hello(9))).toMatchObject({ ok: true });
    socket.close();
  });

  it('closes a socket that sends something other than JSON (1007) or an oversized frame (1009), and keeps serving the others', async () => {
    const bystander = await openSocket({ cookie: cookie(), origin: server.origin });
    const garbled = await openSocket({ cookie: cookie(), origin: server.origin });
    const garbledClosed = closed(garbled);
    garbled.send('this is not json');
    expect(await garbledClosed).toMatchObject({ code: 1007 });
    const huge = await openSocket({ cookie: cookie(), origin: server.origin });
    const hugeClosed = closed(huge);
    huge.send('x'.repeat(3 * 1024 * 1024));
    expect((await hugeClosed).code).toBe(1009);
    expect(await ask(bystander, hello(10))).toMatchObject({ ok: true });
    bystander.close();
  });

  it('closes a socket that sends a binary frame (1003, with its reason), and keeps serving the others', async () => {
    const bystander = await openSocket({ cookie: cookie(), origin: server.origin });
    const binary = await openSocket({ cookie: cookie(), origin: server.origin });
    const binaryClosed = closed(binary);
    binary.send(Buffer.from(JSON.stringify(hello(1))), { binary: true });
    expect(await binaryClosed).toEqual({ code: 1003, reason: 'Only text frames of JSON are accepted.' });
    expect(await ask(bystander, hello(11))).toMatchObject({ ok: true });
    bystander.close();
  });

  it('accepts a frame of just under 2 MiB and closes on one just over it, saying why (1009)', async () => {
    const limit = 2 * 1024 * 1024;
    const socket = await openSocket({ cookie: cookie(), origin: server.origin });
    // Below the limit the frame is read: this one is JSON of a request the server answers (with an error).
    const padded = {
      kind: 'request',
      v: PROTOCOL_VERSION,
      id: 12,
      method: 'describe',
      params: { workflowId: 'x', padding: '' },
    };
    padded.params.padding = 'p'.repeat(limit - 1024 - JSON.stringify(padded).length);
    expect(await ask(socket, padded)).toMatchObject({ id: 12 });
    const over = closed(socket);
    socket.send('x'.repeat(limit + 1));
    const { code, reason } = await over;
    expect(code).toBe(1009);
    expect(reason).toBe('A message was larger than 2 MiB.');
  });

  it('refuses to compile, save or delete definitions sent from the browser', async () => {
    const socket = await openSocket({ cookie: cookie(), origin: server.origin });
    await ask(socket, hello(1));
    const save = await ask(socket, {
      kind: 'request',
      v: PROTOCOL_VERSION,
      id: 2,
      method: 'saveDefinition',
      params: { source: 'export default 1;' },
    });
    expect(save).toMatchObject({ ok: false, error: { name: 'AuthoringDisabledError' } });
    socket.close();
  });
});

describe('shuttle serve: claim calls from the studio', () => {
  let fleetDatabase: TestDatabase;
  let withWorker: RunningServer;

  beforeAll(async () => {
    fleetDatabase = await createTestDatabase();
    withWorker = await startServer({
      databaseUrl: fleetDatabase.url,
      port: 0,
      studioDir,
      demos: true,
      engines: 1,
      logger: createLogger({}, () => undefined),
    });
  }, 60_000);

  afterAll(async () => {
    await withWorker?.stop();
    await fleetDatabase?.drop();
  });

  it('serves signal, update, query, suspend, resume, cancel and what an export reads, against the workers’ store', async () => {
    const socket = await new Promise<WebSocket>((resolve, reject) => {
      const opened = new WebSocket(`${withWorker.origin.replace('http', 'ws')}/ws`, {
        headers: { cookie: `shuttle_token=${withWorker.token}`, origin: withWorker.origin },
      });
      opened.once('open', () => resolve(opened));
      opened.once('error', reject);
    });
    let nextId = 1;
    const call = async (method: string, params: Record<string, unknown>) =>
      ask(socket, { kind: 'request', v: PROTOCOL_VERSION, id: nextId++, method, params });
    const value = async <T>(method: string, params: Record<string, unknown>): Promise<T> => {
      const answer = await call(method, params);
      expect(answer, `${method} ${JSON.stringify(params)}`).toMatchObject({ ok: true });
      return answer.value as T;
    };
    const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
      let last = await read();
      for (let attempt = 0; attempt < 300 && !done(last); attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        last = await read();
      }
      expect(done(last), JSON.stringify(last)).toBe(true);
      return last;
    };
    const statusOf = async (workflowId: string) =>
      (await value<{ status: string }>('describe', { workflowId })).status;
    await value('hello', { protocolVersion: PROTOCOL_VERSION, databaseName: 'server', mode: 'viewer' });

    // An order waits for its approval signal: query its stage, update its address, then approve it.
    await value('start', {
      workflowType: 'order',
      input: {
        orderId: 'S-1',
        customer: 'ada@example.com',
        items: [{ sku: 'TEA', quantity: 1, unitPriceCents: 850 }],
        shippingAddress: '12 Analytical Row, London',
        paymentGatewayFailures: 0,
        approvalTimeoutMs: 60_000,
        packingMs: 10,
        transitMs: 10,
      },
      options: { id: 'served-order' },
    });
    await until(
      () => value<string>('query', { workflowId: 'served-order', name: 'stage' }),
      (stage) => stage === 'awaiting-approval',
    );
    expect(
      await value('update', {
        workflowId: 'served-order',
        name: 'changeAddress',
        arg: '1 Engine Lane, Leeds',
      }),
    ).toEqual({ shippingAddress: '1 Engine Lane, Leeds' });
    const refusedUpdate = await call('update', { workflowId: 'served-order', name: 'changeAddress', arg: 7 });
    expect(refusedUpdate).toMatchObject({ ok: false, error: { message: expect.stringContaining('5–200') } });
    expect(
      await value('signal', {
        workflowId: 'served-order',
        name: 'approve',
        payload: { ok: true, by: 'ada' },
      }),
    ).toBeNull();
    await until(
      () => statusOf('served-order'),
      (status) => status === 'completed',
    );
    expect(await value('result', { workflowId: 'served-order' })).toMatchObject({
      status: 'delivered',
      approvedBy: 'ada',
    });

    // What an export of it reads: its record, its whole timeline (the signal and the update in it), and the
    // refused writes (none).
    const [described, timeline, rejections] = await Promise.all([
      value<{ workflowId: string; status: string; input: unknown }>('describe', {
        workflowId: 'served-order',
      }),
      value<{ kind: string }[]>('timeline', { workflowId: 'served-order' }),
      value<unknown[]>('fenceRejections', { workflowId: 'served-order' }),
    ]);
    expect(described).toMatchObject({
      workflowId: 'served-order',
      status: 'completed',
      input: { orderId: 'S-1' },
    });
    expect(timeline.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(['started', 'signal-received', 'update-applied', 'completed']),
    );
    expect(rejections).toEqual([]);

    // A countdown suspended, resumed, then cancelled.
    await value('start', {
      workflowType: 'countdown',
      input: { from: 600, tickMs: 100 },
      options: { id: 'served-suspend' },
    });
    await until(
      () => value<number | null>('query', { workflowId: 'served-suspend', name: 'remaining' }),
      (remaining) => remaining !== null && remaining < 600,
    );
    expect(await value('suspend', { workflowId: 'served-suspend' })).toBeNull();
    await until(
      () => statusOf('served-suspend'),
      (status) => status === 'suspended',
    );
    const remaining = await value<number>('query', { workflowId: 'served-suspend', name: 'remaining' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await value('query', { workflowId: 'served-suspend', name: 'remaining' })).toBe(remaining);
    expect(await value('resume', { workflowId: 'served-suspend' })).toBeNull();
    await until(
      () => value<number>('query', { workflowId: 'served-suspend', name: 'remaining' }),
      (now) => now < remaining,
    );
    expect(await value('cancel', { workflowId: 'served-suspend', reason: 'served test' })).toBeNull();
    await until(
      () => statusOf('served-suspend'),
      (status) => status === 'cancelled',
    );
    const cancelled = await value<{ kind: string }[]>('timeline', { workflowId: 'served-suspend' });
    expect(cancelled.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(['suspended', 'resumed', 'cancel-requested', 'cancelled']),
    );
    socket.close();
  }, 60_000);

  it('reports the worker holding a workflow as live, and refuses a reclaim from the observer with ObserverCannotClaimError', async () => {
    const socket = await new Promise<WebSocket>((resolve, reject) => {
      const opened = new WebSocket(`${withWorker.origin.replace('http', 'ws')}/ws`, {
        headers: { cookie: `shuttle_token=${withWorker.token}`, origin: withWorker.origin },
      });
      opened.once('open', () => resolve(opened));
      opened.once('error', reject);
    });
    const call = (id: number, method: string, params: Record<string, unknown>) =>
      ask(socket, { kind: 'request', v: PROTOCOL_VERSION, id, method, params });
    await call(1, 'hello', { protocolVersion: PROTOCOL_VERSION, databaseName: 'server', mode: 'viewer' });
    const started = await call(2, 'start', {
      workflowType: 'countdown',
      input: { from: 600, tickMs: 100 },
      options: { id: 'served-countdown', idempotencyKey: 'served-key' },
    });
    expect(started).toMatchObject({ ok: true, value: { workflowId: 'served-countdown', started: true } });
    const again = await call(3, 'start', {
      workflowType: 'countdown',
      options: { idempotencyKey: 'served-key' },
    });
    expect(again).toMatchObject({ ok: true, value: { workflowId: 'served-countdown', started: false } });
    // The observer claims nothing: the in-process worker does.
    let holder: Record<string, unknown> = {};
    for (let attempt = 0; attempt < 200; attempt++) {
      holder = await call(10 + attempt, 'claimHolder', { workflowId: 'served-countdown' });
      if ((holder.value as { live?: boolean } | null)?.live) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const observerId = (
      (await call(300, 'hello', {
        protocolVersion: PROTOCOL_VERSION,
        databaseName: 'server',
        mode: 'viewer',
      })) as { value: { engineId: string } }
    ).value.engineId;
    expect(holder).toMatchObject({ ok: true, value: { epoch: 1, live: true } });
    expect((holder.value as { engineId: string }).engineId).not.toBe(observerId);
    const refused = await call(301, 'reclaim', { workflowId: 'served-countdown' });
    expect(refused).toMatchObject({
      ok: false,
      error: {
        name: 'ObserverCannotClaimError',
        message: expect.stringContaining('shuttle worker'),
        details: { workflowId: 'served-countdown' },
      },
    });
    const unknown = await call(302, 'claimHolder', { workflowId: 'nobody-started-this' });
    expect(unknown).toMatchObject({ ok: false, error: { name: 'WorkflowNotFoundError' } });
    await call(303, 'terminate', { workflowId: 'served-countdown' });
    socket.close();
  }, 30_000);
});

describe('shuttle serve --engines on the embedded store', () => {
  let dataDir: string;
  let embedded: RunningServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'shuttle-serve-embedded-'));
    embedded = await startServer({
      dataDir,
      port: 0,
      studioDir,
      demos: true,
      engines: 2,
      logger: createLogger({}, () => undefined),
    });
  }, 120_000);

  afterAll(async () => {
    await embedded?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs its engines on the store its studio already has open: one PGlite, workflows run by the engines', async () => {
    expect(embedded.storeLabel).toContain('embedded PostgreSQL (PGlite)');
    const observer = await embedded.host.engine();
    const handle = await observer.start('countdown', { from: 2, tickMs: 10 }, { id: 'embedded-count' });
    expect(await handle.result()).toEqual({ counted: 2 });
    const claimedBy = (await observer.timeline('embedded-count'))
      .filter((entry) => entry.kind === 'claim-acquired')
      .map((entry) => entry.engineId);
    expect(claimedBy.length).toBeGreaterThan(0);
    expect(claimedBy).not.toContain(observer.id);
  });
});

describe('engines sharing one open store', () => {
  it('a stopped engine leaves the store open for the others: whoever opened it closes it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'shuttle-shared-store-'));
    const store = await openStore({ dataDir });
    const quiet = createLogger({}, () => undefined);
    try {
      const first = await startWorker({ store, demos: true, logger: quiet });
      const second = await startWorker({ store, demos: true, logger: quiet });
      await first.stop();
      // The engine still running on the store goes on: a workflow it starts now runs to its end.
      const handle = await second.engine.start(
        'countdown',
        { from: 2, tickMs: 10 },
        { id: 'after-first-stopped' },
      );
      expect(await handle.result()).toEqual({ counted: 2 });
      await second.stop();
      // And the store itself is still open for whoever opened it.
      const reader = await createEngine({
        storage: store.storage,
        workflows: builtInWorkflows,
        ownership: 'none',
      });
      expect((await reader.describe('after-first-stopped')).status).toBe('completed');
      await reader.shutdown();
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('a worker started from code', () => {
  it('runs exactly the definitions it is given, without reading files or adding the demos', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'shuttle-given-definitions-'));
    const store = await openStore({ dataDir });
    const greet = defineWorkflow({
      name: 'greet',
      version: 1,
      *run(ctx, input: { name: string }) {
        return yield* ctx.activity('greet', () => `hello, ${input.name}`);
      },
    });
    const worker = await startWorker({
      store,
      definitions: [greet],
      logger: createLogger({}, () => undefined),
    });
    try {
      const handle = await worker.engine.start(greet, { name: 'fleet' }, { id: 'given-in-code' });
      expect(await handle.result()).toBe('hello, fleet');
      await expect(worker.engine.start('countdown', { from: 1 })).rejects.toBeInstanceOf(
        WorkflowNotRegisteredError,
      );
    } finally {
      await worker.stop();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
