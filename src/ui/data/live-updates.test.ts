import { InfiniteQueryObserver, QueryClient, type InfiniteData } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { ListFilter, ListPage, WorkflowSummary } from '../../public';
import { PROTOCOL_VERSION, type HelloResult, type PushMessage } from '../../public/browser';
import { changedRowsOf, connectLiveUpdates, refreshIntervalOf, staleQueriesOf } from './live-updates';
import { queryKeys } from '../../public/react';

function storeChanged(
  areas: Extract<PushMessage, { kind: 'store-changed' }>['areas'],
  workflowIds: string[] | null,
): PushMessage {
  return { kind: 'store-changed', v: PROTOCOL_VERSION, areas, workflowIds };
}

describe('live updates', () => {
  it('marks the changed workflows stale, and leaves their list rows to be refreshed one by one', () => {
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']))).toEqual([
      queryKeys.workflowDetail('w1'),
      queryKeys.workflowRuns('w1'),
    ]);
    expect(changedRowsOf(storeChanged(['workflows'], ['w1']))).toEqual({
      workflowIds: ['w1'],
      claims: false,
    });
    expect(changedRowsOf(storeChanged(['claims', 'timelines'], ['w1']))).toEqual({
      workflowIds: ['w1'],
      claims: true,
    });
    expect(staleQueriesOf(storeChanged(['timelines'], null))).toEqual([queryKeys.workflows]);
    expect(staleQueriesOf(storeChanged(['engines'], []))).toEqual([queryKeys.engines]);
    // a session renewal refreshes claims and open workflow pages, never the (possibly long) lists
    expect(staleQueriesOf(storeChanged(['sessions'], null))).toEqual([
      queryKeys.claims,
      queryKeys.openWorkflows,
    ]);
    expect(changedRowsOf(storeChanged(['sessions'], null))).toBeNull();
    expect(staleQueriesOf({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: 1 })).toEqual([]);
  });

  it('refreshes the schedules on schedule writes, and on workflow changes while the Schedules screen is shown', () => {
    expect(staleQueriesOf(storeChanged(['schedules'], null))).toEqual([queryKeys.schedules]);
    expect(staleQueriesOf(storeChanged(['schedules', 'workflows'], ['s@1']))).toContainEqual(
      queryKeys.schedules,
    );
    const elsewhere = { claimExpiries: false, schedules: false };
    const onSchedules = { claimExpiries: false, schedules: true };
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']), elsewhere)).not.toContainEqual(
      queryKeys.schedules,
    );
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']), onSchedules)).toContainEqual(
      queryKeys.schedules,
    );
    // a run of an earlier run's key is under the workflow's own: refreshing the workflow refreshes it
    expect(queryKeys.workflowDetail('w1', 2).slice(0, 4)).toEqual(queryKeys.workflowDetail('w1'));
    expect(refreshIntervalOf(queryKeys.schedules)).toBe(500);
  });

  it('refreshes the queues and queue positions on queue writes, and on workflow changes while the Queues screen is shown', () => {
    expect(staleQueriesOf(storeChanged(['queues'], null))).toEqual([queryKeys.queues]);
    // a position and a queue's page are under `queues`: the same invalidation refreshes them
    expect(queryKeys.queuePosition('w1').slice(0, 1)).toEqual(queryKeys.queues);
    expect(queryKeys.queue('payments').slice(0, 1)).toEqual(queryKeys.queues);
    const elsewhere = { claimExpiries: false, queues: false };
    const onQueues = { claimExpiries: false, queues: true };
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']), elsewhere)).not.toContainEqual(
      queryKeys.queues,
    );
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']), onQueues)).toContainEqual(queryKeys.queues);
    expect(staleQueriesOf(storeChanged(['schedules'], null))).not.toContainEqual(queryKeys.queues);
    expect(refreshIntervalOf(queryKeys.queuePosition('w1'))).toBe(500);
  });

  it('applies the pushes of one frame together at the frame, and patches the engine status at once', async () => {
    const queryClient = new QueryClient();
    const listKey = queryKeys.workflowList({ limit: 500 });
    await queryClient.fetchQuery({ queryKey: listKey, queryFn: () => [] });
    const list = queryClient.getQueryCache().find({ queryKey: listKey })!;
    queryClient.setQueryData<HelloResult>(queryKeys.self, {
      protocolVersion: PROTOCOL_VERSION,
      engineId: 'e',
      label: 'Tab A',
      shortLabel: 'A',
      color: '#000000',
      mode: 'engine',
      databaseName: 'db',
      status: { state: 'starting', since: 1 },
      runtime: { kind: 'tab' },
      store: "IndexedDB 'db'",
      claimTimings: { ttlMs: 6_000, renewIntervalMs: 1_000, graceMs: 2_000 },
      authoring: true,
    });
    let listener: (message: PushMessage) => void = () => undefined;
    const frames: (() => void)[] = [];
    const client = {
      subscribe: (push: (message: PushMessage) => void) => {
        listener = push;
        return () => undefined;
      },
      hello: () => Promise.reject(new Error('not asked in this test')),
      list: () => Promise.reject(new Error('not asked in this test')),
    };
    const stop = connectLiveUpdates(client, queryClient, { scheduleFrame: (flush) => frames.push(flush) });
    for (let index = 0; index < 50; index++) listener(storeChanged(['workflows'], [`w${index}`]));
    listener({ kind: 'status', v: PROTOCOL_VERSION, status: { state: 'running', since: 2 } });
    expect(queryClient.getQueryData<HelloResult>(queryKeys.self)?.status.state).toBe('running');
    expect(frames).toHaveLength(1);
    expect(list.state.isInvalidated).toBe(false);
    frames[0]!();
    expect(list.state.isInvalidated).toBe(true);
    stop();
  });

  it('refreshes the lists whole when a notice does not name the workflows, or names data it does not know', () => {
    expect(staleQueriesOf(storeChanged(['workflows'], null))).toContainEqual(queryKeys.workflowLists);
    expect(changedRowsOf(storeChanged(['workflows'], null))).toBeNull();
    expect(staleQueriesOf(storeChanged(['claims'], null))).toContainEqual(queryKeys.claims);
    expect(staleQueriesOf(storeChanged(['other', 'workflows'], ['w1']))).toContainEqual(
      queryKeys.workflowLists,
    );
    expect(changedRowsOf(storeChanged(['other', 'workflows'], ['w1']))).toBeNull();
    expect(changedRowsOf(storeChanged(['timelines', 'messages'], ['w1']))).toBeNull();
  });

  it('refreshes the whole claims list on a session renewal only while claim expiries are shown', () => {
    const renewal = storeChanged(['sessions'], null);
    expect(staleQueriesOf(renewal, { claimExpiries: false })).toEqual([queryKeys.openWorkflows]);
    expect(staleQueriesOf(renewal, { claimExpiries: true })).toContainEqual(queryKeys.claims);
  });

  it('patches the rows a burst of notices named, once, at the next frame, without reading the list again', async () => {
    const queryClient = new QueryClient();
    const summary = (workflowId: string, status: string) => ({ workflowId, status }) as WorkflowSummary;
    let listReads = 0;
    const listOptions = {
      queryKey: queryKeys.workflowList({ limit: 1000 }),
      queryFn: async (): Promise<ListPage> => {
        listReads++;
        return { items: [summary('w1', 'running'), summary('w2', 'running')], nextCursor: null };
      },
      initialPageParam: null as string | null,
      getNextPageParam: (page: ListPage) => page.nextCursor,
    };
    const observer = new InfiniteQueryObserver(queryClient, listOptions);
    const unsubscribe = observer.subscribe(() => undefined);
    await expect.poll(() => queryClient.getQueryData(listOptions.queryKey)).toBeDefined();
    let listener: (message: PushMessage) => void = () => undefined;
    const frames: (() => void)[] = [];
    const described: string[] = [];
    const client = {
      subscribe: (push: (message: PushMessage) => void) => {
        listener = push;
        return () => undefined;
      },
      hello: () => Promise.reject(new Error('not asked in this test')),
      list: async (filter: ListFilter = {}): Promise<ListPage> => {
        described.push(...(filter.ids ?? []));
        return {
          items: (filter.ids ?? []).map((workflowId) => summary(workflowId, 'completed')),
          nextCursor: null,
        };
      },
    };
    const stop = connectLiveUpdates(client, queryClient, {
      scheduleFrame: (flush) => frames.push(flush),
      shownViews: () => ({ claimExpiries: false }),
    });
    for (let index = 0; index < 5; index++) listener(storeChanged(['workflows'], ['w1']));
    expect(frames).toHaveLength(1);
    frames[0]!();
    await expect
      .poll(() =>
        queryClient
          .getQueryData<InfiniteData<ListPage>>(listOptions.queryKey)
          ?.pages[0]!.items.map((item) => `${item.workflowId}:${item.status}`),
      )
      .toEqual(['w1:completed', 'w2:running']);
    expect(described).toEqual(['w1']);
    expect(listReads).toBe(1);
    stop();
    unsubscribe();
  });

  it('refreshes big views at most once or twice a second, and small ones every frame', () => {
    expect(refreshIntervalOf(queryKeys.workflowList({ limit: 1000 }))).toBe(1_000);
    expect(refreshIntervalOf(queryKeys.claims)).toBe(500);
    expect(refreshIntervalOf(queryKeys.owned)).toBe(500);
    expect(refreshIntervalOf(queryKeys.metrics)).toBe(0);
    expect(refreshIntervalOf(queryKeys.workflowDetail('w1'))).toBe(0);
  });
});
