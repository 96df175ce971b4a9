/**
 * A worker started in code takes the engine's `tracer` and `interceptors`: a program that runs its own worker
 * process gets OpenTelemetry spans (the real SDK, an in-memory exporter) and its workflow interceptors.
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { defineWorkflow } from '../engine';
import { openTelemetryTracer } from '../observability/opentelemetry';
import { MemoryStorage } from '../storage/memory';
import { createLogger } from './log';
import { startWorker } from './worker';

const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  *run(ctx, input: { name: string }) {
    return yield* ctx.activity('compose', () => `Hello, ${input.name}`);
  },
});

describe('a worker started in code', () => {
  it('traces with the tracer it is given and applies its workflow interceptors', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const worker = await startWorker({
      definitions: [greet],
      store: {
        storage: new MemoryStorage(),
        liveness: null,
        label: 'memory',
        kind: 'embedded',
        close: async () => undefined,
      },
      logger: createLogger({}, () => undefined),
      tracer: openTelemetryTracer({ tracerProvider: provider }),
      interceptors: {
        workflows: [
          {
            *execute(call, next) {
              return `${String(yield* next(call.input))}!`;
            },
          },
        ],
      },
    });
    try {
      const handle = await worker.engine.start(greet, { name: 'Ada' }, { id: 'g' });
      expect(await handle.result()).toBe('Hello, Ada!');
      const activity = exporter.getFinishedSpans().find((span) => span.name === 'shuttle.activity');
      expect(activity?.attributes).toMatchObject({
        'shuttle.workflow.id': 'g',
        'shuttle.engine.id': worker.engineId,
        'shuttle.activity.name': 'compose',
        'shuttle.activity.outcome': 'completed',
      });
    } finally {
      await worker.stop();
    }
  });
});
