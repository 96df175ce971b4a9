/** The queues domain (src/protocol/queues.ts): the store's workflow queues, read-only. */
import type { queueMethods } from '../../protocol';
import { engineHandler, type DomainHandlers, type HandlerContext } from './types';

export function queueHandlers(context: HandlerContext): DomainHandlers<typeof queueMethods> {
  const on = engineHandler(context);
  return {
    queues: on((engine) => engine.queues()),
    describeQueue: on((engine, { name }) => engine.describeQueue(name)),
    queuePosition: on((engine, { workflowId }) => engine.queuePosition(workflowId)),
  };
}
