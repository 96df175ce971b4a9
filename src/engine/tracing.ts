/**
 * Tracing: the engine's own small hook for spans (`createEngine({ tracer })`), so that the engine never
 * imports a tracing library. `shuttle/opentelemetry` (src/observability/opentelemetry.ts) adapts
 * OpenTelemetry to it; anything else that can start a span from a carried context can too.
 *
 * A workflow's trace context is captured when it starts (the starter's active context, or a new trace) as
 * propagation fields (`TraceContext`, e.g. W3C `traceparent`) and stored in its record, carried by
 * continue-as-new and given to its children: every engine that drives it later — after a takeover, a
 * graceful handoff, a restart — parents its spans on that stored context, so one trace shows the workflow
 * across engines. A tracer that throws never breaks the engine: its spans are dropped.
 */

/** Propagation fields of a span context (W3C `traceparent`, `tracestate`, …), stored with a workflow. */
export type TraceContext = Readonly<Record<string, string>>;

export type SpanAttributes = Record<string, string | number | boolean>;

/** A span started by an `EngineTracer`. */
export type TracerSpan = {
  /** This span's context as propagation fields: the engine stores it to parent later spans on it. */
  readonly context: TraceContext;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed with `error` (recorded as an exception). */
  recordError(error: unknown): void;
  end(): void;
};

/**
 * Starts spans for the engine. `parent`: a stored context to parent the span on; `'active'`: the caller's
 * active context (a start, a signal, an update from the caller's code), or a new trace where there is none;
 * `'root'`: a new trace.
 */
export type EngineTracer = {
  startSpan(
    name: string,
    options: {
      parent: TraceContext | 'active' | 'root';
      kind?: 'internal' | 'producer' | 'consumer' | 'client' | 'server';
      attributes?: SpanAttributes;
      /**
       * `'active'`: link the span to the caller's active span, if any (a signal or update sent from a
       * request's code is a span of the workflow's trace, linked to the request's).
       */
      link?: 'active';
    },
  ): TracerSpan;
  /** Runs `fn` with `span` as the active span (an activity's own spans then nest under its attempt's). */
  withSpan?<T>(span: TracerSpan, fn: () => T): T;
};

/** The span of no tracer: what the engine uses when none is configured or the tracer failed. */
const noSpan: TracerSpan = {
  context: {},
  setAttributes() {},
  recordError() {},
  end() {},
};

/**
 * The engine's view of its tracer: never throws (a failing tracer loses its spans, not the engine's work);
 * a no-op without one.
 */
export class Tracing {
  readonly #tracer: EngineTracer | undefined;

  constructor(tracer: EngineTracer | undefined) {
    this.#tracer = tracer;
  }

  get enabled(): boolean {
    return this.#tracer !== undefined;
  }

  start(
    name: string,
    parent: TraceContext | 'active' | 'root' | undefined,
    /** Or a function building them, called only when there is a tracer (for hot paths). */
    attributes: SpanAttributes | (() => SpanAttributes),
    kind?: 'internal' | 'producer' | 'consumer' | 'client' | 'server',
    link?: 'active',
  ): TracerSpan {
    if (!this.#tracer) return noSpan;
    try {
      const span = this.#tracer.startSpan(name, {
        parent: parent ?? 'root',
        attributes: typeof attributes === 'function' ? attributes() : attributes,
        ...(kind ? { kind } : {}),
        ...(link ? { link } : {}),
      });
      return guarded(span);
    } catch {
      return noSpan;
    }
  }

  /** `fn` with `span` active (when the tracer can), else `fn` alone. */
  within<T>(span: TracerSpan, fn: () => T): T {
    const tracer = this.#tracer;
    if (!tracer?.withSpan || span === noSpan) return fn();
    let ran = false;
    try {
      return tracer.withSpan<T>((span as Guarded).inner, () => {
        ran = true;
        return fn();
      });
    } catch (error) {
      if (ran) throw error;
      return fn(); // the tracer failed before running it
    }
  }
}

type Guarded = TracerSpan & { inner: TracerSpan };

function guarded(span: TracerSpan): TracerSpan {
  const safely = (fn: () => void) => {
    try {
      fn();
    } catch {
      // a tracer's failure is its own business
    }
  };
  let context: TraceContext = {};
  safely(() => {
    context = { ...span.context };
  });
  const wrapped: Guarded = {
    inner: span,
    context,
    setAttributes: (attributes) => safely(() => span.setAttributes(attributes)),
    recordError: (error) => safely(() => span.recordError(error)),
    end: () => safely(() => span.end()),
  };
  return wrapped;
}

/** True when `value` is a stored trace context (an object of strings), as records carry it. */
export function isTraceContext(value: unknown): value is TraceContext {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((field) => typeof field === 'string')
  );
}

/** The stored context, when it holds any field (an untraced start stores none). */
export function storedTrace(context: unknown): TraceContext | undefined {
  return isTraceContext(context) && Object.keys(context).length > 0 ? context : undefined;
}
