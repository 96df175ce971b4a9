/**
 * Activities of authored definitions start only at a quiet moment of the worker: at the start of a task in
 * which none of its storage calls is in flight (`StorageActivity.whenQuiet`).
 *
 * Why: an activity runs in the engine's worker. One that never yields (`for (;;) {}`) stalls the worker's
 * event loop for good, and an IndexedDB transaction that was open at that instant would stay open with it —
 * queueing every other tab's transactions behind it, so nobody could take the stuck engine's workflows over.
 * Started at a quiet moment, a runaway activity stalls only its own engine: its claims stop being renewed,
 * and another tab takes its workflows over after the claim TTL, as from a frozen tab.
 *
 * This covers code that loops as soon as it is called. An asynchronous activity that loops after an `await`
 * can still begin its loop while a transaction is open; the built-in demos are trusted and not wrapped.
 */
import { defineWorkflow, type AnyWorkflowDefinition, type WorkflowContext } from '../../engine';

/** Calls `run` at the start of a task in which the worker has no storage call in flight. */
export type WhenQuiet = (run: () => void) => void;

/** The definition, with every activity it starts deferred to a quiet moment (see the module header). */
export function startActivitiesWhenQuiet<D extends AnyWorkflowDefinition>(
  definition: D,
  whenQuiet: WhenQuiet,
): D {
  const run = definition.run;
  function* guardedRun(this: unknown, ctx: WorkflowContext, input: unknown) {
    return yield* run.call(this, guardedContext(ctx, whenQuiet), input);
  }
  return defineWorkflow({ ...definition, run: guardedRun }) as D;
}

function guardedContext(ctx: WorkflowContext, whenQuiet: WhenQuiet): WorkflowContext {
  const guarded = Object.create(ctx) as WorkflowContext;
  const activity: WorkflowContext['activity'] = (name, fn, options) =>
    ctx.activity(
      name,
      (context) =>
        new Promise((resolve, reject) =>
          whenQuiet(() => {
            if (context.signal.aborted) return reject(context.signal.reason);
            try {
              resolve(fn(context));
            } catch (error) {
              reject(error);
            }
          }),
        ),
      options,
    );
  Object.defineProperty(guarded, 'activity', { value: activity });
  return guarded;
}
