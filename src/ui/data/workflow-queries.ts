/**
 * Query hooks about workflows and definitions, and the start mutation.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListFilter, StartOptions, WorkflowSummary } from '../../engine';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

/** Largest page the workflows list asks for until it pages and virtualises. */
const listLimit = 500;

/** Workflows matching `filter`, newest first. */
export function useWorkflowList(filter: Omit<ListFilter, 'limit' | 'cursor'> = {}) {
  const client = useShuttleClient();
  const fullFilter: ListFilter = { ...filter, limit: listLimit };
  return useQuery({
    queryKey: queryKeys.workflowList(fullFilter),
    queryFn: () => client.list(fullFilter),
    select: (page): { items: WorkflowSummary[]; hasMore: boolean } => ({
      items: [...page.items].sort(
        (a, b) => b.createdAt - a.createdAt || a.workflowId.localeCompare(b.workflowId),
      ),
      hasMore: page.nextCursor !== null,
    }),
    placeholderData: (previous) => previous,
  });
}

/** The definitions registered on this tab's engine. */
export function useDefinitions() {
  const client = useShuttleClient();
  return useQuery({
    queryKey: queryKeys.definitions,
    queryFn: () => client.definitions(),
    staleTime: 60_000,
  });
}

export type StartRequest = { workflowType: string; input?: unknown; options?: StartOptions };

/** Starts a workflow; resolves with its id. */
export function useStartWorkflow() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ workflowType, input, options }: StartRequest) =>
      client.start(workflowType, input, options),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.workflowLists }),
  });
}
