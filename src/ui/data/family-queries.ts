/**
 * A workflow's family, for the detail's family tree: its ancestors, read up the parent links (one `describe`
 * a generation, root first), and a child's timeline, read when its node is opened (its own children are in
 * it). Both live under the workflow's key, so a change of the workflow reads them again.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import type { WorkflowDescription } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';
import { retryUnlessNotFound, workflowTimelineQuery } from './workflow-queries';

/** How far up the tree is followed (an ancestry deeper than this is cut). */
export const maxAncestors = 20;

export type Ancestor = Pick<WorkflowDescription, 'workflowId' | 'workflowType' | 'version' | 'status'>;

export type Ancestry = {
  /** The ancestors found, root first, up to `maxAncestors`. */
  chain: Ancestor[];
  /** The id of an ancestor that is no longer stored (purged): the walk ended there. */
  missing: string | null;
  /** The ancestry goes on beyond `maxAncestors`. */
  cut: boolean;
};

/** The ancestors of a workflow whose parent is `parentId`, root first (a purged ancestor ends the walk). */
export async function readAncestors(
  client: Pick<ShuttleClient, 'describe'>,
  parentId: string | undefined,
): Promise<Ancestry> {
  const chain: Ancestor[] = [];
  let next = parentId;
  let missing: string | null = null;
  while (next !== undefined && chain.length < maxAncestors) {
    try {
      const parent = await client.describe(next);
      chain.unshift(parent);
      next = parent.parentId;
    } catch (error) {
      if ((error as Error).name !== 'WorkflowNotFoundError') throw error;
      missing = next ?? null;
      break;
    }
  }
  return { chain, missing, cut: next !== undefined && missing === null };
}

/** The ancestry of `workflowId`, whose parent is `parentId` (`readAncestors`). */
export function workflowAncestorsQuery(
  client: Pick<ShuttleClient, 'describe'>,
  workflowId: string,
  parentId: string | undefined,
) {
  return queryOptions<Ancestry>({
    queryKey: queryKeys.workflowAncestors(workflowId, parentId),
    queryFn: () => readAncestors(client, parentId),
  });
}

/** `workflowAncestorsQuery`, asked only when the workflow has a parent. */
export function useWorkflowAncestors(workflowId: string, parentId: string | undefined) {
  return useQuery({
    ...workflowAncestorsQuery(useShuttleClient(), workflowId, parentId),
    enabled: parentId !== undefined,
  });
}

/** A child's timeline (its own children are in it), read only while `enabled` (its node is open). */
export function useChildTimeline(childId: string, enabled: boolean) {
  return useQuery({
    ...workflowTimelineQuery(useShuttleClient(), childId),
    retry: retryUnlessNotFound,
    enabled,
  });
}
