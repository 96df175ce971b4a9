/**
 * `createHttpApi` in a program's own server: mounted under a path of a `node:http` server beside the
 * program's routes (Express-style `next`, and a body a framework already parsed), as a fetch handler, with
 * its options checked; long polls of one run share one engine result waiter. Over the in-memory store.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../engine';
import { MemoryStorage } from '../../storage/memory';
import { countdown } from '../../workflows/countdown';
import { createHttpApi } from './api';

const token = 'mount-test-token-0123456789';
const auth = { authorization: `Bearer ${token}` };
const json = { ...auth, 'content-type': 'application/json' };

let engine: Engine | undefined;
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await engine?.shutdown();
  engine = undefined;
});

async function newEngine(): Promise<Engine> {
  engine = await createEngine({ storage: new MemoryStorage(), workflows: [countdown] });
  return engine;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createHttpApi', () => {
  it("mounts under a path of the program's own node:http server, next to its other routes", async () => {
    const api = createHttpApi({ engine: await newEngine(), token, basePath: '/shuttle/' });
    const origin = await listen((request, response) => {
      void api.handleNode(request, response, () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('the app');
      });
    });
    expect(await (await fetch(`${origin}/health`)).text()).toBe('the app');
    expect(await (await fetch(`${origin}/shuttlex/workflows`)).text()).toBe('the app');
    expect((await fetch(`${origin}/shuttle/workflows`)).status).toBe(401);
    const document = (await (await fetch(`${origin}/shuttle/openapi.json`)).json()) as {
      servers: { url: string }[];
    };
    expect(document.servers).toEqual([{ url: '/shuttle' }]);
    const started = await fetch(`${origin}/shuttle/workflows`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        workflowType: 'countdown',
        input: { from: 2, tickMs: 1 },
        options: { id: 'm-1' },
      }),
    });
    expect(started.status).toBe(201);
    const result = await fetch(`${origin}/shuttle/workflows/m-1/result?waitMs=10000`, { headers: auth });
    expect(await result.json()).toMatchObject({
      status: 'completed',
      finished: true,
      result: { counted: 2 },
    });
    // Ids with a slash travel percent-encoded.
    await engine!.start('countdown', { from: 0 }, { id: 'tenant/a' });
    const described = await fetch(`${origin}/shuttle/workflows/${encodeURIComponent('tenant/a')}`, {
      headers: auth,
    });
    expect(((await described.json()) as { workflowId: string }).workflowId).toBe('tenant/a');
  });

  it('takes a body a framework already parsed (Express json middleware), and bounds one it reads', async () => {
    const api = createHttpApi({ engine: await newEngine(), token, maxBodyBytes: 2_000 });
    const origin = await listen(async (request: IncomingMessage & { body?: unknown }, response) => {
      if (request.headers['x-parse'] === 'yes') {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        request.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      }
      await api.handleNode(request, response);
    });
    const body = JSON.stringify({ workflowType: 'countdown', input: { from: 0 }, options: { id: 'parsed' } });
    const started = await fetch(`${origin}/workflows`, {
      method: 'POST',
      headers: { ...json, 'x-parse': 'yes' },
      body,
    });
    expect(started.status).toBe(201);
    expect((await engine!.describe('parsed')).workflowType).toBe('countdown');
    const large = await fetch(`${origin}/workflows`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ workflowType: 'countdown', input: { pad: 'x'.repeat(5_000) } }),
    });
    expect(large.status).toBe(413);
    expect(((await large.json()) as { error: { name: string } }).error.name).toBe('PayloadTooLargeError');
    expect((await engine!.list({})).items).toHaveLength(1);
  });

  it('serves fetch Requests (Hono, and any runtime of Request and Response)', async () => {
    const api = createHttpApi({ engine: await newEngine(), token, basePath: '/api' });
    const started = await api.handleFetch(
      new Request('http://app.local/api/workflows', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({
          workflowType: 'countdown',
          input: { from: 1, tickMs: 1 },
          options: { id: 'f-1' },
        }),
      }),
    );
    expect(started.status).toBe(201);
    expect(started.headers.get('content-type')).toContain('application/json');
    const outcome = await api.handleFetch(
      new Request('http://app.local/api/workflows/f-1/result?waitMs=10000', { headers: auth }),
    );
    expect(await outcome.json()).toMatchObject({ workflowId: 'f-1', status: 'completed' });
    const outside = await api.handleFetch(new Request('http://app.local/elsewhere'));
    expect(outside.status).toBe(404);
    await engine!.start('countdown', { from: 600, tickMs: 1000 }, { id: 'f-2' });
    const signal = await api.handleFetch(
      new Request('http://app.local/api/workflows/f-2/signals/go', {
        method: 'POST',
        headers: json,
        body: '{}',
      }),
    );
    expect(signal.status).toBe(204);
    expect(await signal.text()).toBe('');
  });

  it('shares one engine result waiter among the long polls of one run', async () => {
    const api = createHttpApi({ engine: await newEngine(), token });
    await engine!.start('countdown', { from: 600, tickMs: 1000 }, { id: 'long' });
    const poll = () =>
      api.handleFetch(new Request('http://app.local/workflows/long/result?waitMs=300', { headers: auth }));
    const answers = await Promise.all([poll(), poll(), poll()]);
    for (const answer of answers)
      expect(await answer.json()).toMatchObject({ finished: false, status: 'running' });
    const pending = engine!
      .resultWaiters()
      .filter((waiter) => waiter.workflowId === 'long' && !waiter.settled);
    expect(pending).toHaveLength(1);
    await poll();
    expect(
      engine!.resultWaiters().filter((waiter) => waiter.workflowId === 'long' && !waiter.settled),
    ).toHaveLength(1);
    await engine!.terminate('long', 'done');
    const ended = await api.handleFetch(
      new Request('http://app.local/workflows/long/result?waitMs=5000', { headers: auth }),
    );
    expect(await ended.json()).toMatchObject({ finished: true, status: 'terminated', reason: 'done' });
  });

  it('checks its options: a token of at least 16 characters (or null, explicitly), a basePath from the root', async () => {
    const withEngine = await newEngine();
    expect(() => createHttpApi({ engine: withEngine, token: 'short' })).toThrow(/at least 16 characters/);
    expect(() => createHttpApi({ engine: withEngine, token, basePath: 'api' })).toThrow(
      /must start with '\/'/,
    );
    const open = createHttpApi({ engine: withEngine, token: null });
    const listed = await open.handleFetch(new Request('http://app.local/workflows'));
    expect(listed.status).toBe(200);
  });
});
