/**
 * Finishing an external activity (`completion: 'external'`) from the studio: complete it with a result, or
 * fail it with a message, by its token (`describe(id).pending.leaves[i].completionToken`). Exactly one
 * completion is accepted; a second is refused with `ActivityCompletionRefusedError`, shown in the engine's
 * words. The workflow's queries refresh at once (the change feed's `messages` area tells the other tabs).
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';

export type ActivityCompletion =
  | { kind: 'complete'; token: string; result?: unknown }
  | { kind: 'fail'; token: string; error: { name?: string; message: string } };

export function useCompleteActivity(workflowId: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (completion: ActivityCompletion): Promise<void> => {
      if (completion.kind === 'complete')
        await client.completeActivity(
          completion.token,
          ...(completion.result === undefined ? [] : [completion.result]),
        );
      else await client.failActivity(completion.token, completion.error);
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflow(workflowId) }),
  });
}
