/**
 * The inspection domain (src/protocol/inspection.ts): what the engines of the store hold and have done, and
 * taking one workflow over.
 */
import type { inspectionMethods } from '../../protocol';
import {
  engineHandler,
  observerCannotClaim,
  unavailableError,
  type DomainHandlers,
  type HandlerContext,
} from './types';

export function inspectionHandlers(
  context: HandlerContext & { engineId: string },
): DomainHandlers<typeof inspectionMethods> {
  const on = engineHandler(context);
  return {
    storageUsage: async () => {
      const storage = context.storage();
      if (!storage) throw unavailableError('The store is not open yet.');
      return (await storage.usage?.()) ?? { source: 'this store cannot measure itself', bytes: 0, parts: [] };
    },
    claims: on((engine) => engine.claims()),
    claimHolder: on(async (engine, { workflowId }) => {
      const holder = await engine.claimHolder(workflowId);
      // Nobody holds it: say so only of a workflow that exists (a mistyped id is an error, not "nobody").
      if (holder === null) await engine.runs(workflowId);
      return holder;
    }),
    reclaim: on((engine, { workflowId }) => {
      if (context.config()?.mode === 'viewer')
        throw observerCannotClaim(context, context.engineId, workflowId);
      return engine.reclaim(workflowId);
    }),
    fenceRejections: on((engine, { workflowId }) => engine.fenceRejections(workflowId)),
    resultWaiters: on(async (engine) => engine.resultWaiters()),
    metrics: on(async (engine) => engine.metrics()),
    ownedWorkflows: on(async (engine) => engine.ownedWorkflows()),
  };
}
