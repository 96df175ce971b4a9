/**
 * Actions on workflows that the detail page and the list offer beside the per-workflow ones of
 * workflow-queries.ts: rerun a finished workflow with the same input (a new workflow, with a new id), and
 * cancel or terminate every workflow a filter matches (each one through the engine, reporting how many
 * succeeded and which failed, with their errors).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListFilter, WorkflowDescription, WorkflowStatus } from '../../engine';
import { isTerminal } from '../../engine/vocabulary';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

/** Starts a new workflow of the same type with the same input; resolves with its id. */
export function useRerun() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (workflow: Pick<WorkflowDescription, 'workflowType' | 'input'>) =>
      client.start(workflow.workflowType, workflow.input),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  });
}

export type BulkKind = 'cancel' | 'terminate';

/** The statuses a bulk action applies to: cancel asks running work; terminate ends anything unfinished. */
export function bulkTargets(kind: BulkKind, status: WorkflowStatus): boolean {
  if (isTerminal(status)) return false;
  return kind === 'terminate' ? true : status === 'running' || status === 'pending';
}

export type BulkOutcome = { done: string[]; failed: { workflowId: string; error: Error }[] };

/** Every workflow id `filter` matches that `kind` applies to (all pages). */
export async function collectBulkTargets(
  client: {
    list(
      filter: ListFilter,
    ): Promise<{ items: { workflowId: string; status: WorkflowStatus }[]; nextCursor: string | null }>;
  },
  filter: ListFilter,
  kind: BulkKind,
  limit = 10_000,
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.list({ ...filter, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) if (bulkTargets(kind, item.status)) ids.push(item.workflowId);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length < limit);
  return ids.slice(0, limit);
}

/** Cancels or terminates each of `workflowIds`, a few at a time; never throws. */
export function useBulkAction() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({
      kind,
      workflowIds,
      reason,
    }: {
      kind: BulkKind;
      workflowIds: readonly string[];
      reason?: string;
    }): Promise<BulkOutcome> => {
      const outcome: BulkOutcome = { done: [], failed: [] };
      const queue = [...workflowIds];
      const act = (id: string) =>
        kind === 'cancel' ? client.cancel(id, reason) : client.terminate(id, reason);
      await Promise.all(
        Array.from({ length: Math.min(8, queue.length) }, async () => {
          for (let id = queue.shift(); id !== undefined; id = queue.shift())
            await act(id).then(
              () => outcome.done.push(id!),
              (error: unknown) =>
                outcome.failed.push({
                  workflowId: id!,
                  error: error instanceof Error ? error : new Error(String(error)),
                }),
            );
        }),
      );
      return outcome;
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  });
}

/**
 * The ids a bulk action would act on now (counted when the confirmation opens, so it can say how many).
 * `unownedOnly` applies the list's "nobody owns it" filter, which the engine does not.
 */
export function useBulkTargets(
  filter: Omit<ListFilter, 'limit' | 'cursor'>,
  kind: BulkKind | null,
  unownedOnly = false,
) {
  const client = useShuttleClient();
  return useQuery({
    queryKey: ['workflows', 'bulk-targets', kind, filter, unownedOnly],
    enabled: kind !== null,
    staleTime: 0,
    gcTime: 0,
    queryFn: async () => {
      if (!unownedOnly) return collectBulkTargets(client, filter, kind!);
      const ids = await collectBulkTargets(client, filter, kind!);
      const descriptions = await Promise.all(ids.map((id) => client.describe(id)));
      return descriptions
        .filter((description) => !description.owner)
        .map((description) => description.workflowId);
    },
  });
}
