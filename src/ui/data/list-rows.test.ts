import { InfiniteQueryObserver, QueryClient, QueryObserver, type InfiniteData } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import type { ClaimInfo, ListFilter, ListPage, WorkflowOwner, WorkflowSummary } from '../../public';
import {
  matchesListFilter,
  maxPatchedRows,
  patchClaims,
  patchListPages,
  refreshChangedRows,
  uniqueRows,
  type RowChanges,
} from './list-rows';
import { queryKeys } from '../../public/react';
import { workflowListQuery } from './workflow-queries';

const ownerA: WorkflowOwner = { engineId: 'engine-a', epoch: 1, claimedAt: 10, expiresAt: 6_010 };

function row(workflowId: string, changes: Partial<WorkflowSummary> = {}): WorkflowSummary {
  return {
    workflowId,
    workflowType: 'countdown',
    version: 1,
    run: 1,
    status: 'running',
    createdAt: 1,
    updatedAt: 1,
    owner: ownerA,
    epoch: 1,
    waitingOn: "sleep 'tick'",
    ...changes,
  };
}

function pages(...lists: { items: WorkflowSummary[]; nextCursor: string | null }[]) {
  return { pages: lists, pageParams: lists.map((_, index) => (index === 0 ? null : `cursor-${index}`)) };
}

describe('list rows: patching a list in place', () => {
  const running: ListFilter = { status: 'running', limit: 1000 };

  it('replaces a changed row that still matches, where it was, and leaves the other rows untouched', () => {
    const [a, b, c] = [row('a'), row('b'), row('c')];
    const data = pages({ items: [a, b], nextCursor: 'wf:b' }, { items: [c], nextCursor: null });
    const newer = row('b', { updatedAt: 99, waitingOn: null });
    const patched = patchListPages(data, running, new Map([['b', newer]]));
    expect(patched.pages[0]!.items).toEqual([a, newer]);
    expect(patched.pages[0]!.items[0]).toBe(a);
    expect(patched.pages[1]).toBe(data.pages[1]);
    expect(patched.pages.map((page) => page.nextCursor)).toEqual(['wf:b', null]);
  });

  it('removes a row whose status no longer matches the filter, and a row whose workflow is gone', () => {
    const data = pages({ items: [row('a'), row('b'), row('c')], nextCursor: null });
    const changes: RowChanges = new Map([
      ['a', row('a', { status: 'completed', owner: null })],
      ['c', null],
    ]);
    expect(patchListPages(data, running, changes).pages[0]!.items.map((item) => item.workflowId)).toEqual([
      'b',
    ]);
  });

  it('adds a new workflow that matches the filter to the last page loaded, keeping every cursor', () => {
    const data = pages({ items: [row('a')], nextCursor: 'wf:a' }, { items: [row('b')], nextCursor: 'wf:b' });
    const fresh = row('z');
    const patched = patchListPages(data, running, new Map([['z', fresh]]));
    expect(patched.pages[1]!.items).toEqual([row('b'), fresh]);
    expect(patched.pages.map((page) => page.nextCursor)).toEqual(['wf:a', 'wf:b']);
    expect(patched.pageParams).toBe(data.pageParams);
  });

  it('does not add a new workflow that the filter leaves out', () => {
    const data = pages({ items: [row('a')], nextCursor: null });
    const changes = new Map([['z', row('z', { status: 'completed' })]]);
    expect(patchListPages(data, running, changes).pages[0]!.items.map((item) => item.workflowId)).toEqual([
      'a',
    ]);
  });

  it('adds a matching workflow to a list that had no page yet', () => {
    const patched = patchListPages({ pages: [], pageParams: [] }, {}, new Map([['z', row('z')]]));
    expect(patched.pages).toEqual([{ items: [row('z')], nextCursor: null }]);
  });

  it('lists each workflow once when a row added by a patch comes again with a page fetched later', () => {
    const later = row('z', { updatedAt: 5 });
    expect(
      uniqueRows([
        { items: [row('a'), row('z')], nextCursor: 'wf:a' },
        { items: [later, row('b')], nextCursor: null },
      ]).map((item) => item.workflowId),
    ).toEqual(['a', 'z', 'b']);
  });

  it('keeps a row per run in a list of every run: a new run adds a row, earlier runs stay', () => {
    const filter: ListFilter = { allRuns: true };
    const run1 = row('w', { run: 1, status: 'completed', owner: null });
    const data = pages({ items: [run1, row('x')], nextCursor: null });
    const run2 = row('w', { run: 2, status: 'running' });
    const patched = patchListPages(data, filter, new Map([['w', run2]]));
    expect(patched.pages[0]!.items.map((item) => `${item.workflowId}#${item.run}`)).toEqual([
      'w#1',
      'x#1',
      'w#2',
    ]);
    // a change of the latest run replaces its own row only
    const run2done = row('w', { run: 2, status: 'completed', owner: null });
    const again = patchListPages(patched, filter, new Map([['w', run2done]]));
    expect(again.pages[0]!.items.filter((item) => item.workflowId === 'w')).toEqual([run1, run2done]);
    // a list of latest runs keeps one row per id
    const latestOnly = patchListPages(data, {}, new Map([['w', run2]]));
    expect(latestOnly.pages[0]!.items.map((item) => `${item.workflowId}#${item.run}`)).toEqual([
      'w#2',
      'x#1',
    ]);
    expect(
      uniqueRows(again.pages.concat([{ items: [run1], nextCursor: null }]), { byRun: true }).map(
        (item) => `${item.workflowId}#${item.run}`,
      ),
    ).toEqual(['w#1', 'x#1', 'w#2']);
  });

  it('applies every filter the engine applies: statuses, type, owner and id prefix', () => {
    const item = row('order-7', { workflowType: 'order', status: 'suspended', owner: null });
    expect(matchesListFilter(item, {})).toBe(true);
    expect(matchesListFilter(item, { status: ['running', 'suspended'] })).toBe(true);
    expect(matchesListFilter(item, { status: 'running' })).toBe(false);
    expect(matchesListFilter(item, { workflowType: 'countdown' })).toBe(false);
    expect(matchesListFilter(item, { ownerEngineId: 'engine-a' })).toBe(false);
    expect(matchesListFilter(row('x'), { ownerEngineId: 'engine-a' })).toBe(true);
    expect(matchesListFilter(item, { idPrefix: 'order-' })).toBe(true);
    expect(matchesListFilter(item, { idPrefix: 'order-8' })).toBe(false);
  });
});

describe('list rows: patching the claims list', () => {
  const claim = (workflowId: string, holder: WorkflowOwner | null = ownerA): ClaimInfo => ({
    workflowId,
    holder,
    holderCorrupt: false,
    epoch: holder?.epoch ?? null,
  });

  it('takes a taken-over claim’s new holder, drops a released one, and adds a new one', () => {
    const ownerB: WorkflowOwner = { engineId: 'engine-b', epoch: 2, claimedAt: 50, expiresAt: 6_050 };
    const claims = [claim('kept'), claim('moved'), claim('released')];
    const changes: RowChanges = new Map([
      ['moved', row('moved', { owner: ownerB, epoch: 2 })],
      ['released', row('released', { status: 'completed', owner: null })],
      ['new', row('new')],
      ['gone', null],
    ]);
    expect(patchClaims(claims, changes)).toEqual([claim('kept'), claim('moved', ownerB), claim('new')]);
  });
});

describe('list rows: refreshing the rows a notice named', () => {
  /** A client whose store holds `rows`, counting its list calls and the rows it was asked for by id. */
  function store(rows: Map<string, WorkflowSummary>, options: { slowListsAfter?: number } = {}) {
    const calls = { list: 0, byIds: 0, rowsById: 0 };
    const client = {
      list: async (filter: ListFilter = {}): Promise<ListPage> => {
        if (filter.ids) {
          calls.byIds++;
          calls.rowsById += filter.ids.length;
          return {
            items: filter.ids.flatMap((id) => {
              const item = rows.get(id);
              return item && matchesListFilter(item, filter) ? [item] : [];
            }),
            nextCursor: null,
          };
        }
        calls.list++;
        const items = [...rows.values()].filter((item) => matchesListFilter(item, filter));
        // A slow list answers with the rows it read before waiting: a stale answer.
        if (options.slowListsAfter !== undefined && calls.list > options.slowListsAfter)
          await new Promise((resolve) => setTimeout(resolve, 200));
        return { items, nextCursor: null };
      },
    };
    return { client, calls };
  }

  async function openList(queryClient: QueryClient, client: ReturnType<typeof store>['client'], filter = {}) {
    const observer = new InfiniteQueryObserver(queryClient, workflowListQuery(client, filter));
    const unsubscribe = observer.subscribe(() => undefined);
    await queryClient.getQueryCache().find({ queryKey: workflowListQuery(client, filter).queryKey })!.promise;
    const items = () => {
      const data = queryClient.getQueryData<InfiniteData<ListPage>>(
        workflowListQuery(client, filter).queryKey,
      );
      return uniqueRows(data?.pages ?? []).map((item) => `${item.workflowId}:${item.status}`);
    };
    return { items, unsubscribe };
  }

  it('patches an open list from the named workflows’ rows, read together, without reading the list again', async () => {
    const rows = new Map<string, WorkflowSummary>(
      Array.from({ length: 100 }, (_, index) => [`w${index}`, row(`w${index}`)] as const),
    );
    const { client, calls } = store(rows);
    const queryClient = new QueryClient();
    const list = await openList(queryClient, client, { status: 'running' });
    rows.set('w1', row('w1', { status: 'completed' }));
    rows.set('new', row('new'));
    rows.delete('w2');
    const result = await refreshChangedRows(client, queryClient, ['w1', 'new', 'w2'], {
      lists: true,
      claims: false,
    });
    expect(result).toEqual({ described: 3, patched: 1, refreshedWhole: false });
    expect(calls).toEqual({ list: 1, byIds: 1, rowsById: 3 });
    expect(list.items()).toHaveLength(99);
    expect(list.items()).toContain('new:running');
    expect(list.items()).not.toContain('w1:running');
    expect(list.items()).not.toContain('w2:running');
    list.unsubscribe();
  });

  it('reads a short list again whole when more workflows changed than it holds', async () => {
    const rows = new Map(Array.from({ length: 20 }, (_, index) => [`w${index}`, row(`w${index}`)] as const));
    const { client, calls } = store(rows);
    const queryClient = new QueryClient();
    const list = await openList(queryClient, client);
    const changed = [...rows.keys(), ...Array.from({ length: 20 }, (_, index) => `other${index}`)];
    for (const id of rows.keys()) rows.set(id, row(id, { status: 'completed' }));
    const result = await refreshChangedRows(client, queryClient, changed, { lists: true, claims: false });
    expect(result.refreshedWhole).toBe(true);
    expect(calls.byIds).toBe(0);
    await expect.poll(() => calls.list).toBe(2);
    await expect.poll(() => list.items().every((item) => item.endsWith(':completed'))).toBe(true);
    list.unsubscribe();
  });

  it('reads a long list again whole when more workflows changed at once than are ever patched', async () => {
    const rows = new Map<string, WorkflowSummary>(
      Array.from({ length: 3_000 }, (_, index) => [`w${index}`, row(`w${index}`)] as const),
    );
    const { client, calls } = store(rows);
    const queryClient = new QueryClient();
    const list = await openList(queryClient, client);
    const changed = [...rows.keys()].slice(0, maxPatchedRows + 1);
    const result = await refreshChangedRows(client, queryClient, changed, { lists: true, claims: false });
    expect(result.refreshedWhole).toBe(true);
    expect(calls.byIds).toBe(0);
    const fewer = await refreshChangedRows(client, queryClient, changed.slice(1), {
      lists: true,
      claims: false,
    });
    expect(fewer.refreshedWhole).toBe(false);
    expect(calls).toMatchObject({ byIds: 1, rowsById: maxPatchedRows });
    list.unsubscribe();
  });

  it('only marks the lists stale when no screen shows one', async () => {
    const { client, calls } = store(new Map([['a', row('a')]]));
    const queryClient = new QueryClient();
    await queryClient.fetchInfiniteQuery(workflowListQuery(client));
    const result = await refreshChangedRows(client, queryClient, ['a'], { lists: true, claims: false });
    expect(result.refreshedWhole).toBe(true);
    expect(calls).toEqual({ list: 1, byIds: 0, rowsById: 0 });
    expect(
      queryClient.getQueryCache().findAll({ queryKey: queryKeys.workflowLists })[0]!.state.isInvalidated,
    ).toBe(true);
  });

  it('marks a list no screen shows stale instead of patching it, so changes it missed meanwhile are read', async () => {
    const rows = new Map([['a', row('a')]]);
    const { client, calls } = store(rows);
    const queryClient = new QueryClient();
    // The unfiltered list was shown, then its screen left: its query stays cached, inactive.
    const all = await openList(queryClient, client);
    all.unsubscribe();
    // 'b' starts while no list is shown: the lists are only marked stale.
    rows.set('b', row('b'));
    expect(
      (await refreshChangedRows(client, queryClient, ['b'], { lists: true, claims: false })).refreshedWhole,
    ).toBe(true);
    // Another list is shown, and 'a' changes: the shown list is patched, the hidden one stays stale.
    const running = await openList(queryClient, client, { status: 'running' });
    rows.set('a', row('a', { status: 'completed' }));
    const result = await refreshChangedRows(client, queryClient, ['a'], { lists: true, claims: false });
    expect(result).toMatchObject({ patched: 1, refreshedWhole: false });
    expect(running.items()).toEqual(['b:running']);
    const hidden = queryClient.getQueryCache().find({ queryKey: workflowListQuery(client, {}).queryKey })!;
    expect(hidden.state.isInvalidated).toBe(true);
    // Shown again, it is read whole: 'b', which no patch named while it was hidden, is there.
    const listsBefore = calls.list;
    const again = await openList(queryClient, client);
    await expect.poll(() => again.items()).toEqual(['a:completed', 'b:running']);
    expect(calls.list).toBeGreaterThan(listsBefore);
    running.unsubscribe();
    again.unsubscribe();
  });

  it('patches the claims list the side bar shows, so a new claim counts at once', async () => {
    const rows = new Map([['a', row('a')]]);
    const { client } = store(rows);
    const queryClient = new QueryClient();
    let claimReads = 0;
    const observer = new QueryObserver(queryClient, {
      queryKey: queryKeys.claims,
      queryFn: async (): Promise<ClaimInfo[]> => {
        claimReads++;
        return [{ workflowId: 'a', holder: ownerA, holderCorrupt: false, epoch: 1 }];
      },
    });
    const unsubscribe = observer.subscribe(() => undefined);
    await expect.poll(() => queryClient.getQueryData(queryKeys.claims)).toBeDefined();
    rows.set('b', row('b'));
    await refreshChangedRows(client, queryClient, ['b'], { lists: false, claims: true });
    expect(queryClient.getQueryData<ClaimInfo[]>(queryKeys.claims)?.map((claim) => claim.workflowId)).toEqual(
      ['a', 'b'],
    );
    expect(claimReads).toBe(1);
    unsubscribe();
  });

  it('applies the same patch again when a fetch that read the rows before the change lands after it', async () => {
    const rows = new Map([['a', row('a')]]);
    const { client, calls } = store(rows, { slowListsAfter: 1 });
    const queryClient = new QueryClient();
    const list = await openList(queryClient, client);
    void queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists }); // reads 'a' running, lands late
    await expect.poll(() => calls.list).toBe(2);
    rows.set('a', row('a', { status: 'completed' }));
    await refreshChangedRows(client, queryClient, ['a'], { lists: true, claims: false });
    expect(list.items()).toEqual(['a:completed']);
    await expect.poll(() => queryClient.isFetching()).toBe(0);
    expect(list.items()).toEqual(['a:completed']);
    expect(calls.rowsById).toBe(1);
    list.unsubscribe();
  });
});
