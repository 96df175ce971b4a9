/**
 * The HTTP API: one workflow per order. Any process of the service can answer any request — the engine
 * finds the workflow in the shared store, whichever process runs it.
 */
import { Hono } from 'hono';
import { WorkflowAlreadyExistsError, WorkflowNotFoundError, type Engine } from 'shuttle';
import { createHttpApi } from 'shuttle/server';
import { order, type OrderInput } from './workflows';

/**
 * `shuttleToken`: also mount Shuttle's own HTTP API under /shuttle (every workflow and schedule, for
 * operators and other services; its OpenAPI document at /shuttle/openapi.json), behind that bearer token.
 */
export function createApp(engine: Engine, options: { shuttleToken?: string } = {}): Hono {
  const app = new Hono();
  if (options.shuttleToken) {
    const api = createHttpApi({ engine, token: options.shuttleToken, basePath: '/shuttle' });
    app.all('/shuttle/*', (c) => api.handleFetch(c.req.raw));
  }

  app.post('/orders', async (c) => {
    const body = (await c.req.json().catch(() => null)) as Partial<OrderInput> | null;
    if (typeof body?.orderId !== 'string' || typeof body.amountCents !== 'number')
      return c.json({ error: 'Send { "orderId": string, "amountCents": number }.' }, 400);
    try {
      // The idempotency key makes a retried request start nothing new: it gets the same run back.
      const handle = await engine.start(order, body as OrderInput, {
        id: `order-${body.orderId}`,
        idempotencyKey: c.req.header('Idempotency-Key') ?? undefined,
      });
      return c.json({ workflowId: handle.workflowId, started: handle.started }, handle.started ? 201 : 200);
    } catch (error) {
      if (error instanceof WorkflowAlreadyExistsError)
        return c.json({ error: `Order ${body.orderId} is already being processed.` }, 409);
      throw error;
    }
  });

  app.get('/orders/:id', async (c) => {
    try {
      const description = await engine.describe(`order-${c.req.param('id')}`);
      return c.json({ status: description.status, state: description.state, result: description.result });
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return c.json({ error: 'No such order.' }, 404);
      throw error;
    }
  });

  app.post('/orders/:id/approve', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as { ok?: boolean };
    await engine.signal(`order-${c.req.param('id')}`, 'approve', { ok: body.ok !== false });
    return c.json({ delivered: true }, 202);
  });

  app.get('/orders/:id/result', async (c) => {
    const result = await engine.handle(`order-${c.req.param('id')}`).result();
    return c.json(result);
  });

  return app;
}
