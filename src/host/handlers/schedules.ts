/** The schedules domain (src/protocol/schedules.ts): cron schedules of the store, and a cron's preview. */
import { previewCron } from '../../engine';
import type { scheduleMethods } from '../../protocol';
import { engineHandler, type DomainHandlers, type HandlerContext } from './types';

export function scheduleHandlers(context: HandlerContext): DomainHandlers<typeof scheduleMethods> {
  const on = engineHandler(context);
  return {
    schedules: on((engine) => engine.schedules()),
    describeSchedule: on((engine, { name }) => engine.describeSchedule(name)),
    createSchedule: on((engine, { name, spec, replace }) =>
      engine.schedule(name, spec, replace === undefined ? {} : { replace }),
    ),
    pauseSchedule: on((engine, { name }) => engine.pauseSchedule(name)),
    resumeSchedule: on((engine, { name }) => engine.resumeSchedule(name)),
    triggerSchedule: on(async (engine, { name }) => {
      const handle = await engine.triggerSchedule(name);
      return { workflowId: handle.workflowId, run: (await handle.describe()).run };
    }),
    deleteSchedule: on(async (engine, { name }) => {
      await engine.deleteSchedule(name);
      return null;
    }),
    // Pure (no engine needed): croner through the engine's own validation and messages.
    previewSchedule: async ({ cron, timezone, count }) =>
      previewCron(cron, timezone, context.now(), Math.max(1, Math.min(count ?? 5, 20))),
  };
}
