/**
 * OpenTelemetry across engines, with the real SDK (BasicTracerProvider, InMemorySpanExporter, the
 * AsyncLocalStorage context manager): a workflow started inside an application's span on engine A, whose
 * activities run there until A crashes, is taken over by engine B and finished there — and the exported
 * spans are one trace: B's spans are parented on the context A's start stored with the workflow, the
 * takeover is a span of B's with how, epoch and from whom, and every activity attempt is a span with its
 * attempt number and outcome. Over MemoryStorage and PostgreSQL.
 */
import { ROOT_CONTEXT, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { TestWorld, fencing } from '../engine/engine.test-support';
import { keys } from '../engine/keys';
import { testStores } from '../engine/stores.test-support';
import { defineWorkflow } from '../engine/workflow';
import type { EngineTracer } from '../engine';
import { contextOf, openTelemetryTracer, traceContextOf } from './opentelemetry';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();
const app = provider.getTracer('app');

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

/** Attempts of `charge` held until the test lets them finish, oldest first. */
let held: (() => void)[] = [];
let failReserveOnce = true;

const order = defineWorkflow({
  name: 'traced-order',
  version: 1,
  *run(ctx, input: { sku: string }) {
    const reserved = yield* ctx.activity(
      'reserve',
      ({ attempt }) => {
        if (attempt === 1 && failReserveOnce) throw new Error('inventory busy');
        return `${input.sku}-reserved`;
      },
      { retry: { initialIntervalMs: 10 } },
    );
    const charged = yield* ctx.activity(
      'charge',
      () =>
        new Promise<string>((resolve) => {
          // The activity's own span, made inside it, nests under the attempt's span.
          app.startActiveSpan('psp.charge', (span) => {
            held.push(() => {
              span.end();
              resolve('charged');
            });
          });
        }),
    );
    const address = yield* ctx.waitForSignal<string>('ship-to');
    return { reserved, charged, address };
  },
});

const byName = (spans: ReadableSpan[], name: string) => spans.filter((span) => span.name === name);
const attribute = (span: ReadableSpan, key: string) => span.attributes[key];
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe.each(testStores())('OpenTelemetry across a takeover on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  it('one trace: the start in the caller’s span, A’s attempts, B’s takeover, load, attempts and end', async () => {
    exporter.reset();
    held = [];
    failReserveOnce = true;
    const world = new TestWorld({ storage: await store.open() });
    const tracer = openTelemetryTracer({ tracerProvider: provider });
    const a = await world.engine([order], { ...fencing, tracer });

    // The application starts the workflow while handling a request: its span is the trace's root.
    const request = app.startSpan('POST /orders');
    await context.with(trace.setSpan(ROOT_CONTEXT, request), () =>
      a.start(order, { sku: 'book' }, { id: 'order-1' }),
    );
    request.end();
    const traceId = request.spanContext().traceId;

    // A runs `reserve` (fails once, then succeeds after its backoff) and starts `charge`, then dies.
    for (let i = 0; i < 50 && held.length === 0; i++) await world.advance(10);
    expect(held).toHaveLength(1);
    world.crash(a);

    // B comes up on the same store and takes the workflow over once A's session expired.
    const b = await world.engine([order], { ...fencing, tracer });
    for (let i = 0; i < 50 && held.length < 2; i++) await world.advance(1000, { engines: [b] });
    expect(held).toHaveLength(2);
    held[1]!();
    await world.idle([b]);
    // The shipping address comes from another request: its span is linked from the signal's.
    const addressRequest = app.startSpan('PUT /orders/order-1/address');
    await context.with(trace.setSpan(ROOT_CONTEXT, addressRequest), () =>
      b.signal('order-1', 'ship-to', 'Main St 1'),
    );
    addressRequest.end();
    for (let i = 0; i < 20 && (await b.describe('order-1')).status === 'running'; i++)
      await world.advance(10, { engines: [b] });
    expect(await b.handle('order-1').result()).toEqual({
      reserved: 'book-reserved',
      charged: 'charged',
      address: 'Main St 1',
    });
    await world.idle([b]);

    const spans = exporter.getFinishedSpans();
    const ours = spans.filter((span) => attribute(span, 'shuttle.workflow.id') === 'order-1');
    // One trace, rooted in the application's request (the second request is a trace of its own).
    expect(
      new Set(
        spans
          .filter((span) => span.name !== 'PUT /orders/order-1/address')
          .map((span) => span.spanContext().traceId),
      ),
    ).toEqual(new Set([traceId]));
    const [start] = byName(ours, 'shuttle.workflow.start');
    expect(start).toBeDefined();
    expect(parentOf(start!)).toBe(request.spanContext().spanId);
    expect(attribute(start!, 'shuttle.engine.id')).toBe(a.id);
    // What A stored is the start span's context.
    const stored = JSON.parse((await world.storage.get(keys.record('order-1')))!) as { trace?: unknown };
    expect(stored.trace).toEqual(traceContextOf(start!.spanContext()));

    // Every span of the workflow but the start is parented on the stored context, on either engine.
    for (const span of ours.filter((s) => s !== start))
      expect([span.name, parentOf(span)]).toEqual([span.name, start!.spanContext().spanId]);

    // A's attempts: reserve failed once, then completed (its charge never ended: A crashed in it).
    const attempts = byName(ours, 'shuttle.activity').map((span) => ({
      engine: attribute(span, 'shuttle.engine.id'),
      name: attribute(span, 'shuttle.activity.name'),
      attempt: attribute(span, 'shuttle.activity.attempt'),
      outcome: attribute(span, 'shuttle.activity.outcome'),
      error: span.status.code === SpanStatusCode.ERROR,
    }));
    expect(attempts).toEqual([
      { engine: a.id, name: 'reserve', attempt: 1, outcome: 'failed', error: true },
      { engine: a.id, name: 'reserve', attempt: 2, outcome: 'completed', error: false },
      // The attempt A started and never finished counts: B's is the second.
      { engine: b.id, name: 'charge', attempt: 2, outcome: 'completed', error: false },
    ]);

    // B's takeover: how, the epoch it minted, from whom.
    const claims = byName(ours, 'shuttle.claim').filter(
      (span) => attribute(span, 'shuttle.engine.id') === b.id,
    );
    expect(claims).toHaveLength(1);
    expect(claims[0]!.attributes).toMatchObject({
      'shuttle.claim.how': 'takeover',
      'shuttle.claim.reason': 'expired',
      'shuttle.claim.from_engine': a.id,
      'shuttle.claim.from_epoch': 1,
      'shuttle.claim.epoch': 2,
      'shuttle.claim.outcome': 'claimed',
    });
    // Each engine loaded the run once; B's load replayed what A recorded.
    const loads = byName(ours, 'shuttle.workflow.load').map((span) => [
      attribute(span, 'shuttle.engine.id'),
      attribute(span, 'shuttle.epoch'),
      attribute(span, 'shuttle.position'),
    ]);
    expect(loads).toEqual([
      [a.id, 1, 0],
      [b.id, 2, 1],
    ]);
    // The signal was sent in the workflow's trace; the end is B's.
    const signals = byName(ours, 'shuttle.signal');
    expect(signals.map((span) => attribute(span, 'shuttle.signal.name'))).toEqual(['ship-to']);
    expect(signals[0]!.links.map((link) => link.context.spanId)).toEqual([
      addressRequest.spanContext().spanId,
    ]);
    const ends = byName(ours, 'shuttle.workflow.end');
    expect(
      ends.map((span) => [attribute(span, 'shuttle.engine.id'), attribute(span, 'shuttle.workflow.status')]),
    ).toEqual([[b.id, 'completed']]);
    // The activity's own span nests under B's attempt of `charge`.
    const charge = byName(ours, 'shuttle.activity').find(
      (span) => attribute(span, 'shuttle.activity.name') === 'charge',
    )!;
    const psp = byName(spans, 'psp.charge');
    expect(psp).toHaveLength(1); // A's never ended
    expect(parentOf(psp[0]!)).toBe(charge.spanContext().spanId);
    await world.shutdownAll();
  });
});

describe('the trace context a workflow carries', () => {
  it('goes on with continue-as-new and to children; a graceful handoff is a takeover in the same trace', async () => {
    exporter.reset();
    const child = defineWorkflow({
      name: 'traced-child',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('child-step', () => 'done');
      },
    });
    const looping = defineWorkflow({
      name: 'traced-loop',
      version: 1,
      *run(ctx, input: { round: number }) {
        yield* ctx.activity('step', () => input.round);
        if (input.round < 2) return yield* ctx.continueAsNew({ round: input.round + 1 });
        yield* ctx.waitForSignal('finish');
        return yield* ctx.startChild(child, undefined, { id: 'loop-child' });
      },
    });
    const world = new TestWorld();
    const tracer = openTelemetryTracer({ tracerProvider: provider });
    const a = await world.engine([looping, child], { ...fencing, tracer });
    await a.start(looping, { round: 1 }, { id: 'loop' });
    await world.advance(10);
    await world.idle();
    expect((await a.describe('loop')).pending?.kind).toBe('signal');
    // A stops gracefully (its session ends); B takes the workflow over at once.
    await a.shutdown();
    const b = await world.engine([looping, child], { ...fencing, tracer });
    await world.advance(1000, { engines: [b] });
    await b.signal('loop', 'finish');
    for (let i = 0; i < 20 && (await b.describe('loop')).status === 'running'; i++)
      await world.advance(10, { engines: [b] });
    expect(await b.handle('loop').result()).toBe('done');
    await world.idle([b]);
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const starts = byName(spans, 'shuttle.workflow.start');
    expect(starts.map((span) => attribute(span, 'shuttle.workflow.id'))).toEqual(['loop', 'loop-child']);
    const [loopStart, childStart] = starts;
    // Both runs of `loop` are parented on its one start; the child's start on it too, its spans on its own.
    const steps = byName(spans, 'shuttle.activity').filter(
      (span) => attribute(span, 'shuttle.activity.name') === 'step',
    );
    expect(steps.map((span) => [attribute(span, 'shuttle.workflow.run'), parentOf(span)])).toEqual([
      [1, loopStart!.spanContext().spanId],
      [2, loopStart!.spanContext().spanId],
    ]);
    expect(parentOf(childStart!)).toBe(loopStart!.spanContext().spanId);
    const childStep = byName(spans, 'shuttle.activity').find(
      (span) => attribute(span, 'shuttle.activity.name') === 'child-step',
    )!;
    expect(parentOf(childStep)).toBe(childStart!.spanContext().spanId);
    const acquired = byName(spans, 'shuttle.claim').find(
      (span) => attribute(span, 'shuttle.engine.id') === b.id,
    )!;
    expect(acquired.attributes).toMatchObject({
      'shuttle.claim.how': 'takeover',
      'shuttle.claim.reason': 'holder-stopped',
      'shuttle.claim.from_engine': a.id,
      'shuttle.claim.epoch': 2,
    });
    expect(parentOf(acquired)).toBe(loopStart!.spanContext().spanId);
    await world.shutdownAll();
  });

  it('updates: the caller’s span (linked to its request) and the applying engine’s, with the outcome', async () => {
    exporter.reset();
    const counter = defineWorkflow<undefined, number, { count: number }>({
      name: 'traced-counter',
      version: 1,
      *run(ctx) {
        ctx.state.count = 0;
        yield* ctx.waitUntil(() => ctx.state.count >= 2);
        return ctx.state.count;
      },
      updates: {
        add: {
          handle: (state, by) => {
            if (typeof by !== 'number') throw new TypeError('add takes a number');
            state.count += by;
            return state.count;
          },
        },
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([counter], {
      tracer: openTelemetryTracer({ tracerProvider: provider }),
    });
    await engine.start(counter, undefined, { id: 'c' });
    await world.idle();
    const request = app.startSpan('POST /counter/add');
    await context.with(trace.setSpan(ROOT_CONTEXT, request), async () => {
      await expect(engine.update('c', 'add', 'two')).rejects.toThrow(/add takes a number/);
      expect(await engine.update('c', 'add', 2)).toBe(2);
    });
    request.end();
    await world.idle();
    expect(await engine.handle('c').result()).toBe(2);
    const spans = exporter.getFinishedSpans();
    const [start] = byName(spans, 'shuttle.workflow.start');
    const callers = byName(spans, 'shuttle.update');
    expect(callers.map((span) => [parentOf(span), span.links[0]?.context.spanId, span.status.code])).toEqual([
      [start!.spanContext().spanId, request.spanContext().spanId, SpanStatusCode.ERROR],
      [start!.spanContext().spanId, request.spanContext().spanId, SpanStatusCode.UNSET],
    ]);
    const applied = byName(spans, 'shuttle.update.apply');
    expect(applied.map((span) => [parentOf(span), attribute(span, 'shuttle.update.outcome')])).toEqual([
      [start!.spanContext().spanId, 'rejected'],
      [start!.spanContext().spanId, 'applied'],
    ]);
    // An end by the workflow's own turn, and one by a terminate (a rotation).
    await engine.start(counter, undefined, { id: 'stopped' });
    await world.idle();
    await engine.handle('stopped').terminate('not needed');
    const ends = byName(exporter.getFinishedSpans(), 'shuttle.workflow.end');
    expect(
      ends.map((span) => [
        attribute(span, 'shuttle.workflow.id'),
        attribute(span, 'shuttle.workflow.status'),
      ]),
    ).toEqual([
      ['c', 'completed'],
      ['stopped', 'terminated'],
    ]);
    await world.shutdownAll();
  });

  it('is not stored without a tracer, and a failing tracer never fails the engine', async () => {
    const plain = defineWorkflow({
      name: 'untraced',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('work', () => 42);
      },
    });
    const world = new TestWorld();
    const engine = await world.engine([plain]);
    await engine.start(plain, undefined, { id: 'u' });
    await world.idle();
    expect(await engine.handle('u').result()).toBe(42);
    const record = JSON.parse((await world.storage.get(keys.record('u')))!) as Record<string, unknown>;
    expect('trace' in record).toBe(false);

    let calls = 0;
    const broken: EngineTracer = {
      startSpan: () => {
        calls++;
        throw new Error('exporter down');
      },
      withSpan: () => {
        throw new Error('no context');
      },
    };
    const other = new TestWorld({ storage: new MemoryStorage() });
    const traced = await other.engine([plain], { tracer: broken });
    await traced.start(plain, undefined, { id: 't' });
    await other.idle();
    expect(await traced.handle('t').result()).toBe(42);
    expect(calls).toBeGreaterThan(0);
    await world.shutdownAll();
    await other.shutdownAll();
  });

  it('reads back what it stores: W3C traceparent and tracestate', () => {
    const span = app.startSpan('x');
    const fields = traceContextOf(span.spanContext());
    expect(fields.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const restored = trace.getSpanContext(contextOf(fields))!;
    expect(restored).toMatchObject({
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      isRemote: true,
    });
    expect(trace.getSpanContext(contextOf({ traceparent: 'garbage' }))).toBeUndefined();
    span.end();
  });
});
