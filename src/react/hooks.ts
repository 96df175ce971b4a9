/**
 * The React bindings' hooks (`shuttle/react`): a workflow's live description, a live list, and the actions
 * an app takes — each over the client `ShuttleProvider` provides, with TanStack Query's caching and the
 * engine's pushes keeping every result current (live.ts). Errors are the engine's, rebuilt on the page:
 * `error.name` is `WorkflowNotFoundError`, `WorkflowAlreadyExistsError`, …
 */
import {
  queryOptions,
  useMutation,
  useQuery,
  useQueryClient,
  type UseMutationResult,
  type UseQueryResult,
} from '@tanstack/react-query';
import type { ListFilter, StartOptions, WorkflowDescription, WorkflowSummary } from '../engine';
import type { ShuttleClient } from '../client/client';
import type { StartedRun } from '../protocol';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

/** The query behind `useWorkflow`. */
function workflowQuery(client: ShuttleClient, workflowId: string, run?: number) {
  return queryOptions({
    queryKey: queryKeys.workflowDetail(workflowId, run),
    queryFn: () => client.api.describe(run === undefined ? { workflowId } : { workflowId, run }),
  });
}

/**
 * One workflow's description — status, state, result or error, owner, what it waits on — of its latest
 * run or of `run`, kept live: it changes when any tab's engine changes the workflow. Not fetched while
 * `workflowId` is null or empty.
 *
 * @example
 * const { data: job } = useWorkflow(jobId);
 * return <p>{job?.status} {job?.state.progress as number}%</p>;
 */
export function useWorkflow(
  workflowId: string | null | undefined,
  options: { run?: number } = {},
): UseQueryResult<WorkflowDescription> {
  const client = useShuttleClient();
  return useQuery({
    ...workflowQuery(client, workflowId ?? '', options.run),
    enabled: typeof workflowId === 'string' && workflowId.length > 0,
  });
}

/**
 * The workflows matching `filter` (status, type, owner, id prefix; at most `limit`, default 100, newest
 * first), kept live.
 */
export function useWorkflows(filter: ListFilter = {}): UseQueryResult<WorkflowSummary[]> {
  const client = useShuttleClient();
  const full: ListFilter = { limit: 100, ...filter };
  return useQuery({
    queryKey: queryKeys.workflowList(full),
    queryFn: async () => (await client.api.list({ filter: full })).items,
  });
}

/** What `useStartWorkflow`'s `mutate` takes. */
export type StartWorkflowRequest = { workflowType: string; input?: unknown; options?: StartOptions };

/**
 * Starts a workflow (on whichever tab's engine — this one's, which claims it); resolves with its id and run.
 *
 * @example
 * const start = useStartWorkflow();
 * <button onClick={() => start.mutate({ workflowType: 'upload', input: { file } })}>Upload</button>
 */
export function useStartWorkflow(): UseMutationResult<StartedRun, Error, StartWorkflowRequest> {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: StartWorkflowRequest) => client.api.start(request),
    onSuccess: ({ workflowId }) => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflow(workflowId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists });
    },
  });
}

/** What `useSignalWorkflow`'s `mutate` takes. */
export type SignalWorkflowRequest = { workflowId: string; name: string; payload?: unknown };

/** Sends a signal to a workflow, wherever it runs. */
export function useSignalWorkflow(): UseMutationResult<null, Error, SignalWorkflowRequest> {
  const client = useShuttleClient();
  return useMutation({ mutationFn: (request: SignalWorkflowRequest) => client.api.signal(request) });
}
