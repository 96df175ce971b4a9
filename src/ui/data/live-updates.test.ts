import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type HelloResult, type PushMessage } from '../../host/protocol';
import { connectLiveUpdates, staleQueriesOf } from './live-updates';
import { queryKeys } from './query-keys';

function storeChanged(
  areas: Extract<PushMessage, { kind: 'store-changed' }>['areas'],
  workflowIds: string[] | null,
): PushMessage {
  return { kind: 'store-changed', v: PROTOCOL_VERSION, areas, workflowIds };
}

describe('live updates', () => {
  it('marks the lists and the changed workflows stale when workflow records change', () => {
    expect(staleQueriesOf(storeChanged(['workflows'], ['w1']))).toEqual([
      queryKeys.workflowLists,
      queryKeys.workflowDetail('w1'),
    ]);
    expect(staleQueriesOf(storeChanged(['timelines'], null))).toEqual([queryKeys.workflows]);
    expect(staleQueriesOf(storeChanged(['engines'], []))).toEqual([queryKeys.engines]);
    // a session renewal refreshes claims and open workflow pages, never the (possibly long) lists
    expect(staleQueriesOf(storeChanged(['sessions'], null))).toEqual([
      queryKeys.claims,
      queryKeys.openWorkflows,
    ]);
    expect(staleQueriesOf({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: 1 })).toEqual([]);
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
});
