import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkflowFailedError } from '../engine';
import { fanOut, type FanOutInput, type FanOutResult } from './fan-out';
import { fanOutTask, fanOutTaskActivities } from './fan-out-task';
import { TestWorld, entriesOf } from './workflows.test-support';

const input: FanOutInput = {
  sku: 'TEA-GREEN-250G',
  quantity: 40,
  suppliers: ['acme', 'globex', 'initech', 'umbrella'],
  firstResponseMs: 800,
  responseStepMs: 400,
};
const childIds = [1, 2, 3, 4].map((n) => `quotes.quote-${n}`);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('fan-out', () => {
  it('starts one child per supplier in parallel and aggregates their quotes into the cheapest', async () => {
    const requestQuote = vi.spyOn(fanOutTaskActivities, 'requestQuote');
    const world = new TestWorld();
    const engine = await world.engine([fanOut, fanOutTask]);
    const handle = await engine.start(fanOut, input, { id: 'quotes' });
    await world.idle();

    // All four children exist and run before any of them has finished.
    const statuses = await Promise.all(childIds.map(async (id) => (await engine.describe(id)).status));
    expect(statuses).toEqual(['running', 'running', 'running', 'running']);
    const started = entriesOf(await engine.timeline('quotes'), 'child-started');
    expect(started.map((entry) => entry.detail.childId)).toEqual(childIds);
    expect(new Set(started.map((entry) => entry.detail.pos)).size).toBe(1); // one ctx.all operation
    expect((await engine.describe('quotes')).pending?.kind).toBe('all');

    // Suppliers answer after 800, 1,200, 1,600 and 2,000 ms.
    await world.advance(1_200, { stepMs: 400 });
    await world.idle();
    const halfway = await Promise.all(childIds.map(async (id) => (await engine.describe(id)).status));
    expect(halfway).toEqual(['completed', 'completed', 'running', 'running']);
    expect((await engine.describe('quotes')).status).toBe('running');

    await world.advance(800, { stepMs: 400 });
    await world.idle();
    const result = (await handle.result()) as FanOutResult;

    expect(requestQuote).toHaveBeenCalledTimes(4);
    expect(result.quotes.map((quote) => quote.supplier)).toEqual(input.suppliers);
    const childResults = await Promise.all(childIds.map((id) => engine.handle(id).result()));
    expect(result.quotes).toEqual(childResults);
    const prices = result.quotes.map((quote) => quote.unitPriceCents);
    const cheapest = result.quotes.find((quote) => quote.unitPriceCents === Math.min(...prices))!;
    expect(result.best).toEqual({ ...cheapest, totalCents: cheapest.unitPriceCents * 40 });
    expect(result.spreadCents).toBe(Math.max(...prices) - Math.min(...prices));
    expect(await engine.query('quotes', 'progress')).toEqual({
      stage: 'done',
      children: 4,
      best: cheapest.supplier,
    });
    expect(entriesOf(await engine.timeline('quotes'), 'child-completed')).toHaveLength(4);
  });

  it('fails when one of its children does not complete', async () => {
    const world = new TestWorld();
    const engine = await world.engine([fanOut, fanOutTask]);
    const handle = await engine.start(fanOut, input, { id: 'quotes' });
    await world.idle();

    await engine.terminate(childIds[2]!, 'supplier offline');
    await world.advance(0);
    await world.idle();

    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    await expect(handle.result()).rejects.toThrow(/quotes\.quote-3' ended terminated/);
  });

  it('recovers on a new engine while its children wait, without starting or running any child twice', async () => {
    const requestQuote = vi.spyOn(fanOutTaskActivities, 'requestQuote');
    const world = new TestWorld();
    const a = await world.engine([fanOut, fanOutTask]);
    await a.start(fanOut, input, { id: 'quotes' });
    await world.idle();
    await world.advance(800);
    await world.idle();
    expect(requestQuote).toHaveBeenCalledTimes(1);

    await a.shutdown();
    const b = await world.engine([fanOut, fanOutTask], { recover: true });
    await world.advance(1_200, { stepMs: 400, engines: [b] });
    await world.idle([b]);

    const result = (await b.handle('quotes').result()) as FanOutResult;
    expect(result.quotes).toHaveLength(4);
    expect(requestQuote).toHaveBeenCalledTimes(4);
    expect(requestQuote.mock.calls.map(([request]) => request.supplier)).toEqual(input.suppliers);
    expect(entriesOf(await b.timeline('quotes'), 'child-started')).toHaveLength(4);
  });
});
