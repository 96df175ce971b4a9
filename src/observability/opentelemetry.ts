/**
 * `shuttle/opentelemetry`: OpenTelemetry spans for Shuttle engines. `openTelemetryTracer()` adapts an
 * OpenTelemetry tracer to the engine's tracing hook (`createEngine({ tracer })`, src/engine/tracing.ts):
 * spans for workflow starts, loads, claims and takeovers, activity attempts, signals, updates and endings,
 * every one parented on the trace context the workflow stored when it started — so a trace continues on
 * whichever engine drives the workflow later.
 *
 * The trace context is stored as W3C Trace Context fields (`traceparent`, and `tracestate` when there is
 * one), serialised here: no propagator needs to be registered. `@opentelemetry/api` is an optional peer
 * dependency of the package, imported by this entry point only.
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  createTraceState,
  isSpanContextValid,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { EngineTracer, TraceContext, TracerSpan } from '../engine';

export type OpenTelemetryTracerOptions = {
  /** The tracer to start spans with. Default: the `shuttle` tracer of `tracerProvider`. */
  tracer?: Tracer;
  /** Where the default tracer comes from. Default: the global provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
};

const kinds = {
  internal: SpanKind.INTERNAL,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
} as const;

/**
 * An `EngineTracer` over OpenTelemetry.
 *
 * @example
 * import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
 * const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
 * const engine = await createEngine({ storage, tracer: openTelemetryTracer({ tracerProvider: provider }) });
 */
export function openTelemetryTracer(options: OpenTelemetryTracerOptions = {}): EngineTracer {
  const tracer = options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer('shuttle');
  const spans = new WeakMap<TracerSpan, Span>();
  return {
    startSpan(name, { parent, kind, attributes, link }) {
      const parentContext =
        parent === 'active' ? context.active() : parent === 'root' ? ROOT_CONTEXT : contextOf(parent);
      const linked = link === 'active' ? trace.getSpanContext(context.active()) : undefined;
      const span = tracer.startSpan(
        name,
        {
          kind: kinds[kind ?? 'internal'],
          ...(attributes ? { attributes } : {}),
          ...(linked && isSpanContextValid(linked) ? { links: [{ context: linked }] } : {}),
        },
        parentContext,
      );
      const handle: TracerSpan = {
        context: traceContextOf(span.spanContext()),
        setAttributes: (values) => void span.setAttributes(values),
        recordError: (error) => {
          const exception = error instanceof Error ? error : new Error(String(error));
          span.recordException(exception);
          span.setStatus({ code: SpanStatusCode.ERROR, message: `${exception.name}: ${exception.message}` });
        },
        end: () => span.end(),
      };
      spans.set(handle, span);
      return handle;
    },
    withSpan(handle, fn) {
      const span = spans.get(handle);
      return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
    },
  };
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span context as W3C Trace Context fields (none for an invalid one: a non-recording span). */
export function traceContextOf(spanContext: SpanContext): TraceContext {
  if (!isSpanContextValid(spanContext)) return {};
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  const state = spanContext.traceState?.serialize();
  return {
    traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`,
    ...(state ? { tracestate: state } : {}),
  };
}

/** The OpenTelemetry context of stored W3C Trace Context fields (the root context when unreadable). */
export function contextOf(stored: TraceContext): Context {
  const match = traceparentPattern.exec(stored.traceparent ?? '');
  if (!match) return ROOT_CONTEXT;
  const spanContext: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: parseInt(match[3]!, 16),
    isRemote: true,
    ...(stored.tracestate ? { traceState: createTraceState(stored.tracestate) } : {}),
  };
  if (!isSpanContextValid(spanContext)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}
