/**
 * The recorded outcome of one operation of a run (`operationOutcome`): an activity's or child's result, a
 * signal's payload, an error, the state after an update — for the event detail. Timeline entries carry no
 * values; this asks the engine to read them from the run's history.
 *
 * An outcome once recorded never changes (history is append-only), so a refetch — the workflow changed,
 * or a claim renewal refreshed its page — returns the one held without asking the engine again; while none
 * is recorded yet, every refetch asks, so the outcome appears once the operation finishes.
 */
import { queryOptions, useQuery } from '@tanstack/react-query';
import type { OperationOutcome, OutcomeOf } from '../../public';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';
import { retryUnlessNotFound } from './workflow-queries';

/** The outcome of the operation `of` names, in run `run` of `workflowId` (null: not recorded yet). */
export function operationOutcomeQuery(
  client: Pick<ShuttleClient, 'operationOutcome'>,
  workflowId: string,
  run: number,
  of: OutcomeOf,
) {
  return queryOptions<OperationOutcome | null>({
    queryKey: queryKeys.operationOutcome(workflowId, run, of),
    queryFn: async ({ client: queryClient, queryKey }) =>
      queryClient.getQueryData<OperationOutcome | null>(queryKey) ??
      (await client.operationOutcome(workflowId, { ...of, run })),
    retry: retryUnlessNotFound,
  });
}

/** `operationOutcomeQuery`, asked only while `of` names an operation. */
export function useOperationOutcome(workflowId: string, run: number, of: OutcomeOf | null) {
  const client = useShuttleClient();
  return useQuery({
    ...operationOutcomeQuery(client, workflowId, run, of ?? { pos: -1 }),
    enabled: of !== null,
  });
}
