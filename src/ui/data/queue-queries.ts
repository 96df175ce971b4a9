/**
 * Workflow queues, read-only: every queue of the store (the Queues screen and its side-bar figure), one
 * queue's page, and where a workflow stands in its queue (its page). Live through the store-change pushes
 * (live-updates.ts: the `queues` area, and workflow changes while the Queues screen is shown). They go over
 * the protocol's facade (`client.api`), like any method the console does not wrap.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import type { QueuePosition, QueueView } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { queryKeys, useShuttleClient } from '../../public/react';

/** Every queue of the store, by name. */
export function queuesQuery(client: Pick<ShuttleClient, 'api'>) {
  return queryOptions<QueueView[]>({
    queryKey: queryKeys.queues,
    queryFn: async () =>
      (await client.api.queues({})).sort((a, b) =>
        a.name.localeCompare(b.name, undefined, { numeric: true }),
      ),
  });
}

/** One queue (`QueueNotFoundError` when no engine declared it: not retried). */
export function queueQuery(client: Pick<ShuttleClient, 'api'>, name: string) {
  return queryOptions<QueueView>({
    queryKey: queryKeys.queue(name),
    queryFn: () => client.api.describeQueue({ name }),
    retry: (failureCount, error) => error.name !== 'QueueNotFoundError' && failureCount < 2,
  });
}

/** Where a workflow stands in its queue; null when it is not queued (or finished). */
export function queuePositionQuery(client: Pick<ShuttleClient, 'api'>, workflowId: string) {
  return queryOptions<QueuePosition | null>({
    queryKey: queryKeys.queuePosition(workflowId),
    queryFn: () => client.api.queuePosition({ workflowId }),
    retry: (failureCount, error) => error.name !== 'WorkflowNotFoundError' && failureCount < 2,
  });
}

export function useQueues() {
  return useQuery(queuesQuery(useShuttleClient()));
}

export function useQueue(name: string, enabled = true) {
  return useQuery({ ...queueQuery(useShuttleClient(), name), enabled });
}

/** Asked only while `enabled` (the workflow was started onto a queue and has not finished). */
export function useQueuePosition(workflowId: string, enabled: boolean) {
  return useQuery({ ...queuePositionQuery(useShuttleClient(), workflowId), enabled });
}
