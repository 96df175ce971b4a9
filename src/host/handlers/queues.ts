/** The queues domain (src/protocol/queues.ts): the store's workflow queues and activity limits, read-only. */
import { hostClaimTimings, type queueMethods } from '../../protocol';
import { activityLimitViews } from '../activity-slots';
import { engineHandler, type DomainHandlers, type HandlerContext } from './types';

export function queueHandlers(context: HandlerContext): DomainHandlers<typeof queueMethods> {
  const on = engineHandler(context);
  return {
    queues: on((engine) => engine.queues()),
    describeQueue: on((engine, { name }) => engine.describeQueue(name)),
    queuePosition: on((engine, { workflowId }) => engine.queuePosition(workflowId)),
    // The engine's own groups, and the store's held slots of the groups it does not declare (activity-slots.ts).
    activityLimits: on(async (engine) =>
      activityLimitViews(
        await engine.activityLimits(),
        context.storage(),
        context.now(),
        hostClaimTimings.graceMs,
      ),
    ),
  };
}
