/**
 * Queries about workflows and definitions — one `queryOptions` factory per query, which the hooks and every
 * other reader of that query's data use — and the mutations that act on workflows.
 *
 * - The list asks for at most 1,000 workflows per page (the engine's limit) and pages on with a cursor;
 *   the screen sorts what was fetched (workflow-sort.ts), so any column sorts without another round trip.
 *   Live changes patch the rows they name (list-rows.ts), so each workflow is listed once even when a
 *   patched-in row comes again with a page fetched later.
 * - A timeline is fetched incrementally: the first fetch reads it whole, later ones only the entries after
 *   the last one held (timelines are append-only), so a 10,000-entry timeline costs one read, not one per
 *   change.
 * - Mutations refetch what they change at once, without waiting for the change feed: the workflow's own
 *   queries, and its row in the lists.
 */
import {
  infiniteQueryOptions,
  queryOptions,
  useInfiniteQuery,
  useMutation,
  useQueries,
  useQuery,
  useQueryClient,
  type QueryClient,
} from '@tanstack/react-query';
import type {
  FenceRejection,
  ListFilter,
  ListPage,
  RunSummary,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
  WorkflowSummary,
} from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { refreshChangedRows, uniqueRows } from './list-rows';
import { queryKeys } from '../../public/react';

/** Page size of the workflows list (the engine's maximum). */
export const listPageSize = 1000;

/** Pages the list loads by itself (up to 3,000 workflows); beyond that the person asks for more. */
export const autoPages = 3;

/** How many workflows the command palette's jump-to lists. */
export const searchLimit = 8;

/** Workflows matching `filter`, a page of up to 1,000 at a time, flattened to one list. */
export function workflowListQuery(
  client: Pick<ShuttleClient, 'list'>,
  filter: Omit<ListFilter, 'limit' | 'cursor'> = {},
) {
  const fullFilter: ListFilter = { ...filter, limit: listPageSize };
  return infiniteQueryOptions({
    queryKey: queryKeys.workflowList(fullFilter),
    queryFn: ({ pageParam }) => client.list(pageParam ? { ...fullFilter, cursor: pageParam } : fullFilter),
    initialPageParam: null as string | null,
    getNextPageParam: (page: ListPage) => page.nextCursor,
    select: (data): { items: WorkflowSummary[]; hasMore: boolean; pages: number } => ({
      items: uniqueRows(data.pages, { byRun: fullFilter.allRuns === true }),
      hasMore: data.pages.at(-1)?.nextCursor != null,
      pages: data.pages.length,
    }),
    placeholderData: (previous) => previous,
  });
}

/** Up to `searchLimit` workflows whose id starts with `idPrefix` (the command palette's jump-to). */
export function workflowSearchQuery(client: Pick<ShuttleClient, 'list'>, idPrefix: string) {
  return queryOptions({
    queryKey: queryKeys.workflowSearch(idPrefix),
    queryFn: () => client.list({ idPrefix, limit: searchLimit }),
    staleTime: 1_000,
    placeholderData: (previous) => previous,
  });
}

/** A missing workflow is an answer, not a failure: it is not asked for again; anything else is, once. */
export function retryUnlessNotFound(failureCount: number, error: Error): boolean {
  return error.name !== 'WorkflowNotFoundError' && failureCount < 1;
}

/**
 * One workflow's description (status, owner, state, input, result…): of its latest run, or of `run` (an
 * earlier run kept by run history, or the latest when `run` is the latest run's number).
 */
export function workflowDescriptionQuery(
  client: Pick<ShuttleClient, 'describe'>,
  workflowId: string,
  run?: number,
) {
  return queryOptions<WorkflowDescription>({
    queryKey: queryKeys.workflowDetail(workflowId, run),
    queryFn: () => (run === undefined ? client.describe(workflowId) : client.describe(workflowId, { run })),
    retry: retryUnlessNotFound,
  });
}

/** Every stored run of a workflow id, latest first (the detail screen's run switcher). */
export function workflowRunsQuery(client: Pick<ShuttleClient, 'runs'>, workflowId: string) {
  return queryOptions<RunSummary[]>({
    queryKey: queryKeys.workflowRuns(workflowId),
    queryFn: () => client.runs(workflowId),
    retry: retryUnlessNotFound,
  });
}

/**
 * Timeline entries after those in `cached` (all of them if nothing is cached or the run changed), of the
 * latest run or of `run`.
 */
export async function fetchTimeline(
  client: Pick<ShuttleClient, 'timeline'>,
  workflowId: string,
  cached: readonly TimelineEntry[] | undefined,
  run?: number,
): Promise<TimelineEntry[]> {
  const read = (after?: number) => {
    const options = { ...(run === undefined ? {} : { run }), ...(after === undefined ? {} : { after }) };
    return Object.keys(options).length === 0
      ? client.timeline(workflowId)
      : client.timeline(workflowId, options);
  };
  const last = cached?.at(-1);
  if (!cached || !last) return read();
  const more = await read(last.seq);
  // A new run starts its sequence again: a lower seq than ours means our entries belong to an older run.
  if (more.length > 0 && more[0]!.seq <= last.seq) return read();
  return more.length === 0 ? (cached as TimelineEntry[]) : [...cached, ...more];
}

/**
 * A workflow's durable timeline, kept complete incrementally: each fetch reads only the entries after those
 * already cached. `expectedLength` is the timeline's length as the workflow's record states it: holding more
 * means the timeline was reset (a new run), and it is read whole.
 */
export function workflowTimelineQuery(
  client: Pick<ShuttleClient, 'timeline'>,
  workflowId: string,
  expectedLength?: number,
  run?: number,
) {
  return queryOptions<TimelineEntry[]>({
    queryKey: queryKeys.workflowTimeline(workflowId, run),
    queryFn: ({ client: queryClient, queryKey }) => {
      const cached = queryClient.getQueryData<TimelineEntry[]>(queryKey);
      const trusted =
        expectedLength !== undefined && cached && cached.length > expectedLength ? undefined : cached;
      return fetchTimeline(client, workflowId, trusted, run);
    },
    retry: retryUnlessNotFound,
    structuralSharing: false,
  });
}

/** Writes of deposed engines refused by storage: for one workflow, or every workflow. */
export function fenceRejectionsQuery(client: Pick<ShuttleClient, 'fenceRejections'>, workflowId?: string) {
  return queryOptions<FenceRejection[]>({
    queryKey: workflowId ? queryKeys.fenceRejectionsOf(workflowId) : queryKeys.fenceRejections,
    queryFn: () => client.fenceRejections(workflowId),
  });
}

/** The definitions registered on this tab's engine. */
export function definitionsQuery(client: Pick<ShuttleClient, 'definitions'>) {
  return queryOptions({
    queryKey: queryKeys.definitions,
    queryFn: () => client.definitions(),
    staleTime: 60_000,
  });
}

/** Workflows matching `filter` (`workflowListQuery`); `fetchNextPage` loads more. */
export function useWorkflowList(filter: Omit<ListFilter, 'limit' | 'cursor'> = {}) {
  return useInfiniteQuery(workflowListQuery(useShuttleClient(), filter));
}

/** The palette's jump-to (`workflowSearchQuery`), asked only while `enabled`. */
export function useWorkflowSearch(idPrefix: string, enabled: boolean) {
  return useQuery({ ...workflowSearchQuery(useShuttleClient(), idPrefix), enabled });
}

/**
 * One workflow's description (`workflowDescriptionQuery`), of its latest run or of `run`. While another run
 * of the same id loads, the run shown so far stays (the run switcher).
 */
export function useWorkflowDescription(workflowId: string, run?: number) {
  return useQuery({
    ...workflowDescriptionQuery(useShuttleClient(), workflowId, run),
    placeholderData: (previous, query) => (query?.queryKey[2] === workflowId ? previous : undefined),
  });
}

/** Every stored run of a workflow id (`workflowRunsQuery`). */
export function useWorkflowRuns(workflowId: string) {
  return useQuery(workflowRunsQuery(useShuttleClient(), workflowId));
}

/** Descriptions of several workflows by id (those not loaded yet, or missing, are absent). */
export function useWorkflowDescriptions(
  workflowIds: readonly string[],
): ReadonlyMap<string, WorkflowDescription> {
  const client = useShuttleClient();
  return useQueries({
    queries: workflowIds.map((workflowId) => workflowDescriptionQuery(client, workflowId)),
    combine: (results) => {
      const map = new Map<string, WorkflowDescription>();
      results.forEach((result, index) => {
        if (result.data) map.set(workflowIds[index]!, result.data);
      });
      return map;
    },
  });
}

/**
 * A workflow's durable timeline (`workflowTimelineQuery`), of its latest run or of `run`. While another run
 * of the same id loads, the run shown so far stays.
 */
export function useWorkflowTimeline(workflowId: string, expectedLength?: number, run?: number) {
  return useQuery({
    ...workflowTimelineQuery(useShuttleClient(), workflowId, expectedLength, run),
    placeholderData: (previous, query) => (query?.queryKey[2] === workflowId ? previous : undefined),
  });
}

/** Refused writes of deposed engines (`fenceRejectionsQuery`). */
export function useFenceRejections(workflowId?: string) {
  return useQuery(fenceRejectionsQuery(useShuttleClient(), workflowId));
}

/** The definitions registered on this tab's engine (`definitionsQuery`). */
export function useDefinitions() {
  return useQuery(definitionsQuery(useShuttleClient()));
}

export type StartRequest = { workflowType: string; input?: unknown; options?: StartOptions };

/** Starts a workflow; resolves with its id. */
export function useStartWorkflow() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ workflowType, input, options }: StartRequest) =>
      client.start(workflowType, input, options),
    onSuccess: (workflowId) =>
      refreshChangedRows(client, queryClient, [workflowId], { lists: true, claims: true }),
  });
}

function refreshWorkflow(client: Pick<ShuttleClient, 'list'>, queryClient: QueryClient, workflowId: string) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.workflow(workflowId) });
  void refreshChangedRows(client, queryClient, [workflowId], { lists: true, claims: true });
}

/** An action on one workflow, as the detail screen offers it. */
export type WorkflowAction =
  | { kind: 'signal'; name: string; payload?: unknown }
  | { kind: 'update'; name: string; arg?: unknown }
  | { kind: 'query'; name: string; arg?: unknown }
  | { kind: 'cancel'; reason?: string }
  | { kind: 'terminate'; reason?: string }
  | { kind: 'suspend' }
  | { kind: 'resume' };

/** Runs a `WorkflowAction`; resolves with the update's or query's value (null for the others). */
export function useWorkflowAction(workflowId: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (action: WorkflowAction): Promise<unknown> => {
      switch (action.kind) {
        case 'signal':
          await client.signal(workflowId, action.name, action.payload);
          return null;
        case 'update':
          return (await client.update(workflowId, action.name, action.arg)) ?? null;
        case 'query':
          return (await client.query(workflowId, action.name, action.arg)) ?? null;
        case 'cancel':
          await client.cancel(workflowId, action.reason);
          return null;
        case 'terminate':
          await client.terminate(workflowId, action.reason);
          return null;
        case 'suspend':
          await client.suspend(workflowId);
          return null;
        case 'resume':
          await client.resume(workflowId);
          return null;
      }
    },
    onSettled: (_data, _error, action) => {
      if (action.kind !== 'query') refreshWorkflow(client, queryClient, workflowId);
    },
  });
}

/** Calls `result(id)` on this tab's engine: registers a result waiter and resolves when it settles. */
export function useWaitForResult(workflowId: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationKey: ['result', workflowId],
    mutationFn: () => client.result(workflowId),
    onMutate: () => {
      // The waiter is registered in the worker right away: show it on the waiters screen.
      setTimeout(() => void queryClient.invalidateQueries({ queryKey: queryKeys.engines }), 100);
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.resultWaiters });
      void queryClient.invalidateQueries({ queryKey: queryKeys.engines });
    },
  });
}
