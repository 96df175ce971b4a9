/**
 * The external activities a workflow waits on (declared `completion: 'external'`): the leaves of its pending
 * operation that carry a completion token — the token `completeActivity` / `failActivity` take.
 */
import type { WorkflowDescription } from '../../../public';

export type WaitingExternalActivity = {
  name: string;
  token: string;
  attempt: number;
  /** The last attempt's error, when it was failed before and runs again. */
  lastError: { name: string; message: string } | null;
  since: number;
};

export function waitingExternalActivities(
  workflow: Pick<WorkflowDescription, 'pending'>,
): WaitingExternalActivity[] {
  const pending = workflow.pending;
  if (!pending) return [];
  return pending.leaves.flatMap((leaf) =>
    leaf.kind === 'activity' && !leaf.done && leaf.completionToken
      ? [
          {
            name: leaf.name,
            token: leaf.completionToken,
            attempt: leaf.attempt ?? 1,
            lastError: leaf.lastError ? { name: leaf.lastError.name, message: leaf.lastError.message } : null,
            since: pending.since,
          },
        ]
      : [],
  );
}
