/**
 * Purging finished workflows and how much room the store takes: the storage usage query, a purge of one
 * workflow (every run) or of one earlier run, and a purge by the Workflows list's filter with its dry run
 * (how many it would delete, asked when the confirmation opens). Purges refresh the lists, the workflow's
 * own queries and the storage usage at once; other tabs hear of them through the change feed (`workflows`).
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListFilter } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';

/** How much room the store takes: bytes, the quota when known, the largest parts. */
export function storageUsageQuery(client: Pick<ShuttleClient, 'storageUsage'>) {
  return queryOptions({
    queryKey: queryKeys.storage,
    queryFn: () => client.storageUsage(),
    staleTime: 30_000,
  });
}

export function useStorageUsage() {
  return useQuery(storageUsageQuery(useShuttleClient()));
}

/** The dry run of a purge by `filter`: how many finished workflows it would delete now (while `enabled`). */
export function usePurgePreview(filter: Omit<ListFilter, 'limit' | 'cursor'>, enabled: boolean) {
  const client = useShuttleClient();
  return useQuery({
    queryKey: queryKeys.purgePreview(filter),
    queryFn: () => client.purgeFinished(filter, { dryRun: true }),
    enabled,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
}

/** Purges every finished workflow `filter` matches (all their runs); resolves with matched / purged / failed. */
export function usePurgeFinished() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (filter: Omit<ListFilter, 'limit' | 'cursor'>) =>
      client.purgeFinished(filter, { dryRun: false }),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists });
      void queryClient.invalidateQueries({ queryKey: queryKeys.storage });
    },
  });
}

/** Purges a finished workflow (every run), or only its earlier run `run`. */
export function usePurgeWorkflow(workflowId: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (options: { run?: number }) => client.purge(workflowId, options),
    onSuccess: (_report, options) => {
      // Every list (a list of every run holds the purged run's row too) and the storage usage. The page's
      // own queries are dropped, not refetched: the caller navigates away from what no longer exists.
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists });
      void queryClient.invalidateQueries({ queryKey: queryKeys.storage });
      if (options.run === undefined) queryClient.removeQueries({ queryKey: queryKeys.workflow(workflowId) });
      else {
        queryClient.removeQueries({ queryKey: queryKeys.workflowDetail(workflowId, options.run) });
        queryClient.removeQueries({ queryKey: queryKeys.workflowTimeline(workflowId, options.run) });
        void queryClient.invalidateQueries({ queryKey: queryKeys.workflowRuns(workflowId) });
      }
    },
  });
}
