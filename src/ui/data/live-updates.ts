/**
 * Live data: turns what the worker pushes into cache updates. Store change notices and engine events mark
 * queries stale; the invalidations are collected and applied once per animation frame, so a burst of commits
 * costs one refetch per query, and a hidden tab (no frames) does no work until it is shown again. Status
 * pushes patch this tab's engine entry in place (or refetch it, if it has not loaded yet).
 */
import { useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { HelloResult, PushMessage } from '../../worker/protocol';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

/** The queries a pushed message makes stale. */
export function staleQueriesOf(message: PushMessage): QueryKey[] {
  switch (message.kind) {
    case 'store-changed': {
      const stale: QueryKey[] = [];
      const areas = new Set(message.areas);
      const perWorkflow = (key: (workflowId: string) => QueryKey, all: QueryKey) => {
        if (message.workflowIds === null) stale.push(all);
        else for (const workflowId of message.workflowIds) stale.push(key(workflowId));
      };
      if (areas.has('workflows') || areas.has('claims') || areas.has('other'))
        stale.push(queryKeys.workflowLists);
      if (areas.has('workflows') || areas.has('claims') || areas.has('messages') || areas.has('other'))
        perWorkflow(queryKeys.workflowDetail, queryKeys.workflows);
      if (areas.has('timelines') || areas.has('other'))
        perWorkflow(queryKeys.workflowTimeline, queryKeys.workflows);
      if (areas.has('claims') || areas.has('other')) stale.push(queryKeys.claims);
      if (areas.has('engines') || areas.has('other')) stale.push(queryKeys.engines);
      if (areas.has('definitions') || areas.has('other')) stale.push(queryKeys.definitions);
      if (areas.has('fence-rejections') || areas.has('other')) stale.push(queryKeys.fenceRejections);
      return stale;
    }
    case 'events': {
      const stale: QueryKey[] = [];
      const types = new Set(message.events.map((event) => event.type));
      if ([...types].some((type) => type.startsWith('claim.') || type.startsWith('workflow.')))
        stale.push(queryKeys.owned);
      if ([...types].some((type) => type.startsWith('result-waiter.'))) stale.push(queryKeys.resultWaiters);
      if (types.size > 0) stale.push(queryKeys.metrics);
      return stale;
    }
    default:
      return [];
  }
}

/** Options of `connectLiveUpdates`. */
export type LiveUpdateOptions = {
  /** Schedules the flush. Default: `requestAnimationFrame`. */
  scheduleFrame?: (flush: () => void) => unknown;
};

/**
 * Applies pushes from `subscribe` to `queryClient` until the returned function is called.
 *
 * @example
 * useEffect(() => connectLiveUpdates((listener) => client.subscribe(listener), queryClient), [client, queryClient]);
 */
export function connectLiveUpdates(
  subscribe: (listener: (message: PushMessage) => void) => () => void,
  queryClient: QueryClient,
  options: LiveUpdateOptions = {},
): () => void {
  const scheduleFrame = options.scheduleFrame ?? ((flush: () => void) => requestAnimationFrame(flush));
  const pending = new Map<string, QueryKey>();
  let scheduled = false;
  let stopped = false;
  const flush = () => {
    scheduled = false;
    if (stopped) return;
    const keys = [...pending.values()];
    pending.clear();
    for (const queryKey of keys) void queryClient.invalidateQueries({ queryKey });
  };
  const unsubscribe = subscribe((message) => {
    if (message.kind === 'status') {
      const current = queryClient.getQueryData<HelloResult>(queryKeys.self);
      // Before the first hello has answered there is nothing to patch: ask again instead.
      if (current)
        queryClient.setQueryData<HelloResult>(queryKeys.self, { ...current, status: message.status });
      else pending.set(JSON.stringify(queryKeys.self), queryKeys.self);
    }
    for (const queryKey of staleQueriesOf(message)) pending.set(JSON.stringify(queryKey), queryKey);
    if (pending.size > 0 && !scheduled) {
      scheduled = true;
      scheduleFrame(flush);
    }
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}

/** Keeps the query cache live while the calling component is mounted (the app mounts it once). */
export function useLiveUpdates(): void {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  useEffect(
    () => connectLiveUpdates((listener) => client.subscribe(listener), queryClient),
    [client, queryClient],
  );
}
