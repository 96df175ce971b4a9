import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { ListFilter, ListPage, TimelineEntry, WorkflowSummary } from '../../public';
import { queryKeys } from '../../public/react';
import {
  listPageSize,
  retryUnlessNotFound,
  workflowDescriptionQuery,
  workflowListQuery,
  workflowTimelineQuery,
} from './workflow-queries';

function named(name: string): Error {
  return Object.assign(new Error(name), { name });
}

function entry(seq: number): TimelineEntry {
  return { seq } as TimelineEntry;
}

/** A client whose timeline holds `entries`, recording what each call asked for. */
function timelineClient(entries: () => TimelineEntry[]) {
  const calls: ({ after?: number } | undefined)[] = [];
  return {
    calls,
    timeline: async (_workflowId: string, options?: { after?: number }) => {
      calls.push(options);
      return entries().filter((item) => options?.after === undefined || item.seq > options.after);
    },
  };
}

describe('workflow queries', () => {
  it('asks once more after a failure, but never again for a workflow that does not exist', () => {
    expect(retryUnlessNotFound(0, named('WorkerTimeoutError'))).toBe(true);
    expect(retryUnlessNotFound(1, named('WorkerTimeoutError'))).toBe(false);
    expect(retryUnlessNotFound(0, named('WorkflowNotFoundError'))).toBe(false);
    const query = workflowDescriptionQuery({ describe: () => Promise.reject(named('x')) }, 'w1');
    expect(query.queryKey).toEqual(queryKeys.workflowDetail('w1'));
    expect(query.retry).toBe(retryUnlessNotFound);
  });

  it('reads a timeline whole once, then only the entries after the last one it holds', async () => {
    const queryClient = new QueryClient();
    let stored = [entry(1), entry(2)];
    const client = timelineClient(() => stored);
    const query = workflowTimelineQuery(client, 'w1');
    expect(await queryClient.fetchQuery(query)).toEqual([entry(1), entry(2)]);
    stored = [...stored, entry(3)];
    expect(await queryClient.fetchQuery({ ...query, staleTime: 0 })).toEqual([entry(1), entry(2), entry(3)]);
    expect(client.calls).toEqual([undefined, { after: 2 }]);
  });

  it('reads a timeline whole again when it holds more entries than the record says there are', async () => {
    const queryClient = new QueryClient();
    let stored = [entry(1), entry(2), entry(3)];
    const client = timelineClient(() => stored);
    await queryClient.fetchQuery(workflowTimelineQuery(client, 'w1'));
    stored = [entry(1)];
    const reset = await queryClient.fetchQuery({ ...workflowTimelineQuery(client, 'w1', 1), staleTime: 0 });
    expect(reset).toEqual([entry(1)]);
    expect(client.calls).toEqual([undefined, undefined]);
  });

  it('pages the list on with the cursor of the last page and flattens the pages it holds', async () => {
    const queryClient = new QueryClient();
    const asked: ListFilter[] = [];
    const summary = (workflowId: string) => ({ workflowId }) as WorkflowSummary;
    const client = {
      list: async (filter: ListFilter = {}): Promise<ListPage> => {
        asked.push(filter);
        return filter.cursor
          ? { items: [summary('b')], nextCursor: null }
          : { items: [summary('a')], nextCursor: 'after-a' };
      },
    };
    const query = workflowListQuery(client, { status: ['running'] });
    const data = await queryClient.fetchInfiniteQuery({ ...query, pages: 2 });
    expect(asked).toEqual([
      { status: ['running'], limit: listPageSize },
      { status: ['running'], limit: listPageSize, cursor: 'after-a' },
    ]);
    expect(query.select!(data)).toEqual({ items: [summary('a'), summary('b')], hasMore: false, pages: 2 });
  });
});
