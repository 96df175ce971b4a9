/**
 * Live data for the React bindings: what the engine pushes (a store change naming the workflows it touched,
 * or "many") marks the bindings' queries stale, so a component showing a workflow or a list re-renders when
 * any tab's engine changes it. Invalidations are collected and applied at most once per `intervalMs` (a
 * burst of commits costs one refetch per query), and a query still fetching is not interrupted.
 *
 * The studio has a richer version of the same idea (src/ui/data/live-updates.ts: per-row list refreshes,
 * claims, schedules, this engine's activity) over the same query keys (query-keys.ts).
 */
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import type { ShuttleClient } from '../client/client';
import type { PushMessage, StoreArea } from '../protocol';
import { queryKeys } from './query-keys';

/** The areas of the store whose changes the bindings' queries show. */
const workflowAreas: readonly StoreArea[] = ['workflows', 'claims', 'messages', 'timelines', 'other'];

/** The bindings' queries a pushed message makes stale. */
export function staleWorkflowQueriesOf(message: PushMessage): QueryKey[] {
  if (message.kind !== 'store-changed') return [];
  const areas = new Set(message.areas);
  if (!workflowAreas.some((area) => areas.has(area))) return [];
  const stale: QueryKey[] = [queryKeys.workflowLists];
  if (message.workflowIds === null) stale.push(queryKeys.openWorkflows);
  else for (const workflowId of message.workflowIds) stale.push(queryKeys.workflow(workflowId));
  return stale;
}

/**
 * Keeps `queryClient`'s Shuttle queries live from `client`'s pushes until the returned function is called;
 * after the tab's engine is replaced (a page resumed from a freeze), everything is read again.
 */
export function connectWorkflowLiveUpdates(
  client: ShuttleClient,
  queryClient: QueryClient,
  intervalMs = 100,
): () => void {
  const pending = new Map<string, QueryKey>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    timer = null;
    for (const [id, queryKey] of pending) {
      if (queryClient.isFetching({ queryKey }) > 0) continue;
      pending.delete(id);
      void queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
    }
    if (pending.size > 0) timer = setTimeout(flush, intervalMs);
  };
  const unsubscribe = client.subscribe((message) => {
    for (const queryKey of staleWorkflowQueriesOf(message)) pending.set(JSON.stringify(queryKey), queryKey);
    if (pending.size > 0 && timer === null) timer = setTimeout(flush, intervalMs);
  });
  const stopEngineChange = client.onEngineChange(
    () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  );
  return () => {
    unsubscribe();
    stopEngineChange();
    if (timer !== null) clearTimeout(timer);
  };
}
