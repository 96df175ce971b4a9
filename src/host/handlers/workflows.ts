/** The workflows domain (src/protocol/workflows.ts): start, message, steer and read workflows. */
import { replay, type Engine } from '../../engine';
import type { workflowMethods } from '../../protocol';
import { purgeFinished } from '../purge-finished';
import { engineHandler, type DomainHandlers, type HandlerContext } from './types';

export function workflowHandlers(context: HandlerContext): DomainHandlers<typeof workflowMethods> {
  const on = engineHandler(context);
  return {
    start: on(async (engine, { workflowType, input, options }) => {
      const handle = await engine.start(workflowType, input, options ?? {});
      return { workflowId: handle.workflowId, run: handle.run!, started: handle.started };
    }),
    signalWithStart: on(async (engine, { workflowType, input, signalName, payload, options }) => {
      const handle = await engine.signalWithStart(workflowType, input, signalName, payload, options);
      return { workflowId: handle.workflowId, run: handle.run!, started: handle.started };
    }),
    signal: on(async (engine, { workflowId, name, payload }) => {
      await engine.signal(workflowId, name, payload);
      return null;
    }),
    completeActivity: on(async (engine, { token, result }) => {
      await engine.completeActivity(token, result);
      return null;
    }),
    failActivity: on(async (engine, { token, error }) => {
      await engine.failActivity(token, error);
      return null;
    }),
    query: on(
      async (engine, { workflowId, name, arg }) => (await engine.query(workflowId, name, arg)) ?? null,
    ),
    update: on(
      async (engine, { workflowId, name, arg, timeoutMs }) =>
        (await engine.update(workflowId, name, arg, timeoutMs === undefined ? {} : { timeoutMs })) ?? null,
    ),
    cancel: on(async (engine, { workflowId, reason }) => {
      await engine.cancel(workflowId, reason);
      return null;
    }),
    terminate: on(async (engine, { workflowId, reason }) => {
      await engine.terminate(workflowId, reason);
      return null;
    }),
    suspend: on(async (engine, { workflowId }) => {
      await engine.suspend(workflowId);
      return null;
    }),
    resume: on(async (engine, { workflowId }) => {
      await engine.resume(workflowId);
      return null;
    }),
    result: on(
      async (engine, { workflowId, run }) =>
        (await engine.handle(workflowId, run === undefined ? {} : { run }).result()) ?? null,
    ),
    describe: on((engine, { workflowId, run }) =>
      engine.describe(workflowId, run === undefined ? {} : { run }),
    ),
    runs: on((engine, { workflowId }) => engine.runs(workflowId)),
    list: on((engine, { filter }) => engine.list(filter ?? {})),
    timeline: on((engine, { workflowId, run, after, limit }) =>
      engine.timeline(workflowId, {
        ...(run === undefined ? {} : { run }),
        ...(after === undefined ? {} : { after }),
        ...(limit === undefined ? {} : { limit }),
      }),
    ),
    checkReplay: on(async (engine, { workflowId, run }) =>
      replay(engine.definitions(), await engine.history(workflowId, run === undefined ? {} : { run })),
    ),
    history: on((engine, { workflowId, run }) =>
      engine.history(workflowId, run === undefined ? {} : { run }),
    ),
    // The engine checks that exactly one of `pos` and `updateId` is given, and what they hold.
    operationOutcome: on((engine, { workflowId, ...of }) =>
      engine.operationOutcome(workflowId, of as Parameters<Engine['operationOutcome']>[1]),
    ),
    fork: on(async (engine, { workflowId, ...options }) => {
      const handle = await engine.fork(workflowId, options);
      return { workflowId: handle.workflowId, run: handle.run! };
    }),
    purge: on((engine, { workflowId, run }) => engine.purge(workflowId, run === undefined ? {} : { run })),
    purgeFinished: on((engine, { filter, dryRun }) => purgeFinished(engine, filter ?? {}, dryRun ?? false)),
  };
}
