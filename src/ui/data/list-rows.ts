/**
 * Refreshing the rows that changed: when a store change notice names the workflows it touched, the open
 * workflow lists and the claims list are patched in place from the rows of the named workflows, read together
 * by id (`list({ ids })`), instead of being read again whole (up to 3,000 rows a list, or every claim of the
 * database).
 *
 * Guarantees of the pure part (`patchListPages`, `patchClaims`):
 * - a changed row that still matches its list's filter is replaced where it is; one that no longer matches
 *   (its status or owner moved out of the filter) or no longer exists leaves the list;
 * - a workflow not in the list that matches the filter is added (to the last page loaded: the screen sorts
 *   the rows itself, and the list's flattening drops a row that a page fetched later also holds);
 * - pages keep their cursors, so paging on continues exactly where it would have;
 * - rows that did not change keep their identity (the table skips rendering them).
 *
 * `refreshChangedRows` reads the changed rows in one call, a few storage transactions whatever their number
 * (a `describe` per workflow took two transactions each, and with three tabs listing, those reads cost ten
 * times what the starts they followed did). It refreshes whole when more workflows changed than the lists
 * hold (reading them again costs less), and above `maxPatchedRows` changed at once, as the worker's notices
 * do above the same number. Lists that no screen shows are only marked stale: they cost nothing until shown.
 */
import type { InfiniteData, Query, QueryClient, QueryKey } from '@tanstack/react-query';
import type { ClaimInfo, ListFilter, ListPage, WorkflowSummary } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { matchesListFilter } from '../../public/browser';
import { queryKeys } from '../../public/react';

/** Whether `row` belongs in a list asked for with `filter`: the filters `list` applies, decided by the engine's code. */
export { matchesListFilter };

/** What became of each changed workflow: its row now, or null when it no longer exists. */
export type RowChanges = ReadonlyMap<string, WorkflowSummary | null>;

/**
 * The list's pages with the changed rows replaced, removed or added (see the module's guarantees). A list of
 * every run (`filter.allRuns`) holds a row per run: a change (a description of the latest run) replaces the
 * row of its own run only, and the rows of earlier runs stay (they are finished and never change) — so a
 * finished id started again keeps its earlier row and gains one for the new run.
 */
export function patchListPages<P>(
  data: InfiniteData<ListPage, P>,
  filter: ListFilter,
  changes: RowChanges,
): InfiniteData<ListPage, P> {
  const byRun = filter.allRuns === true;
  const seen = new Set<string>();
  const pages = data.pages.map((page) => {
    let changed = false;
    const items: WorkflowSummary[] = [];
    for (const item of page.items) {
      if (!changes.has(item.workflowId)) {
        items.push(item);
        continue;
      }
      const row = changes.get(item.workflowId);
      if (byRun && row && item.run !== row.run) {
        items.push(item);
        continue;
      }
      seen.add(item.workflowId);
      changed = true;
      if (row && matchesListFilter(row, filter)) items.push(row);
    }
    return changed ? { ...page, items } : page;
  });
  const added = [...changes.entries()].flatMap(([workflowId, row]) =>
    !seen.has(workflowId) && row && matchesListFilter(row, filter) ? [row] : [],
  );
  if (added.length > 0) {
    const last = pages.length - 1;
    if (last < 0) pages.push({ items: added, nextCursor: null });
    else pages[last] = { ...pages[last]!, items: [...pages[last]!.items, ...added] };
  }
  return { ...data, pages };
}

/**
 * The rows of a list's pages, each workflow once (a row added by a patch may come again with a later page);
 * with `byRun` (a list of every run) each run of a workflow once.
 */
export function uniqueRows(pages: readonly ListPage[], options: { byRun?: boolean } = {}): WorkflowSummary[] {
  const seen = new Set<string>();
  const rows: WorkflowSummary[] = [];
  for (const page of pages)
    for (const item of page.items) {
      const key = options.byRun ? rowKey(item) : item.workflowId;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push(item);
    }
  return rows;
}

/** A row's identity in a list of every run: the workflow id and the run. */
export function rowKey(row: Pick<WorkflowSummary, 'workflowId' | 'run'>): string {
  return `${row.workflowId}\u0000${row.run}`;
}

/**
 * The claims list with the claims of the changed workflows as their rows now say: replaced, added, or
 * removed when the workflow has no holder (or no longer exists).
 */
export function patchClaims(claims: readonly ClaimInfo[], changes: RowChanges): ClaimInfo[] {
  const next: ClaimInfo[] = [];
  const seen = new Set<string>();
  const claimOf = (row: WorkflowSummary): ClaimInfo | null =>
    row.owner
      ? { workflowId: row.workflowId, holder: row.owner, holderCorrupt: false, epoch: row.epoch }
      : null;
  for (const claim of claims) {
    if (!changes.has(claim.workflowId)) {
      next.push(claim);
      continue;
    }
    seen.add(claim.workflowId);
    const row = changes.get(claim.workflowId);
    const patched = row ? claimOf(row) : null;
    if (patched) next.push(patched);
  }
  for (const [workflowId, row] of changes) {
    if (seen.has(workflowId) || !row) continue;
    const patched = claimOf(row);
    if (patched) next.push(patched);
  }
  return next;
}

/** What `refreshChangedRows` did (for tests and the curious). */
export type RowRefresh = {
  /** Workflows whose rows were read by id. */
  described: number;
  /** List and claims queries patched in place. */
  patched: number;
  /** Whether the lists were marked stale instead (too many changes, or a read failed). */
  refreshedWhole: boolean;
};

/** Up to this many changed workflows are always patched, however short the lists. */
const alwaysPatch = 16;

/**
 * Above this many changed workflows at once, the lists are refreshed whole, however long they are (the
 * engine's limit of ids per `list`, and the worker's limit of ids per notice).
 */
export const maxPatchedRows = 1000;

function filterOf(queryKey: QueryKey): ListFilter {
  const filter = queryKey[2];
  return typeof filter === 'object' && filter !== null ? (filter as ListFilter) : {};
}

/**
 * Brings the open workflow lists (and the claims list, when `claims` is set) up to date for the workflows
 * in `workflowIds`: reads their rows together (`list({ ids })`: a few transactions for all of them) and
 * patches the lists in place, or — when more changed than the lists hold, when no list is on screen, or
 * when the read fails — marks the lists stale so they refetch whole. A list fetching meanwhile gets the same
 * patch again when its fetch lands.
 */
export async function refreshChangedRows(
  client: Pick<ShuttleClient, 'list'>,
  queryClient: QueryClient,
  workflowIds: readonly string[],
  options: { lists: boolean; claims: boolean },
): Promise<RowRefresh> {
  const cache = queryClient.getQueryCache();
  const lists = options.lists ? cache.findAll({ queryKey: queryKeys.workflowLists }) : [];
  const activeLists = lists.filter((query) => query.isActive());
  const claims = options.claims ? cache.find({ queryKey: queryKeys.claims, exact: true }) : undefined;
  const activeClaims = claims?.isActive() && claims.state.data !== undefined ? claims : undefined;
  const wholeRefresh = (): RowRefresh => {
    if (options.lists)
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists }, { cancelRefetch: false });
    if (options.claims)
      void queryClient.invalidateQueries(
        { queryKey: queryKeys.claims, exact: true },
        { cancelRefetch: false },
      );
    return { described: 0, patched: 0, refreshedWhole: true };
  };
  if (workflowIds.length === 0) return { described: 0, patched: 0, refreshedWhole: false };
  if (activeLists.length === 0 && !activeClaims) return wholeRefresh();
  const loadedRows =
    activeLists.reduce(
      (sum, query) =>
        sum +
        ((query.state.data as InfiniteData<ListPage> | undefined)?.pages.reduce(
          (rows, page) => rows + page.items.length,
          0,
        ) ?? 0),
      0,
    ) + ((activeClaims?.state.data as ClaimInfo[] | undefined)?.length ?? 0);
  // Reading k rows by id costs about what reading k loaded rows again costs.
  const patchable = Math.min(maxPatchedRows, Math.max(alwaysPatch, loadedRows));
  const ids = [...new Set(workflowIds)];
  if (ids.length > patchable) return wholeRefresh();

  const changes = new Map<string, WorkflowSummary | null>(ids.map((id) => [id, null]));
  try {
    // The latest run's row of each (`allRuns` lists keep their earlier runs' rows: they never change).
    for (const row of (await client.list({ ids, limit: ids.length })).items) changes.set(row.workflowId, row);
  } catch {
    return wholeRefresh();
  }

  // A fetch in flight may have read its rows before these changes and land after this patch: the same
  // patch is applied again when it lands (no new reads; a later change comes with a notice of its own).
  const patch = (query: Query, apply: (data: never) => unknown) => {
    const data = query.state.data;
    if (data === undefined) return false;
    queryClient.setQueryData(query.queryKey, apply(data as never));
    return true;
  };
  const patchOnce = (query: Query, apply: (data: never) => unknown) => {
    const applied = patch(query, apply);
    if (query.state.fetchStatus === 'fetching')
      void query.promise?.then(
        () => patch(query, apply),
        () => undefined,
      );
    return applied;
  };
  // Only what a screen shows is patched. A list no screen shows may have missed changes while no list was
  // shown (those only marked it stale), and a patch would clear that mark (`setQueryData` does) with those
  // changes still missing: it is marked stale again instead, and read whole when a screen shows it.
  const markStale = (query: Query) =>
    void queryClient.invalidateQueries({ queryKey: query.queryKey, exact: true }, { cancelRefetch: false });
  let patched = 0;
  for (const query of lists) {
    if (!query.isActive()) {
      markStale(query);
      continue;
    }
    const filter = filterOf(query.queryKey);
    if (patchOnce(query, (data: InfiniteData<ListPage, unknown>) => patchListPages(data, filter, changes)))
      patched++;
  }
  if (claims && !activeClaims) markStale(claims);
  else if (claims && patchOnce(claims, (data: ClaimInfo[]) => patchClaims(data, changes))) patched++;
  return { described: changes.size, patched, refreshedWhole: false };
}
