/**
 * The start dialog's start: an ordinary start (with an idempotency key, when given) or a signal-with-start,
 * resolving with what happened — the workflow and run, and whether this call started it (`started: false`:
 * the idempotency key had already started that run, or signal-with-start found the workflow running and
 * only delivered the signal). Refreshes the workflow's row in the lists at once, like every start.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { StartOptions } from '../../public';
import { useShuttleClient } from '../../public/react';
import { refreshChangedRows } from './list-rows';

/** What the dialog asks the engine for: a start, or a signal-with-start. */
export type StartPlan =
  | { kind: 'start'; options: StartOptions }
  | {
      kind: 'signal-with-start';
      options: StartOptions & { id: string };
      signalName: string;
      /** Absent: the signal carries no payload. */
      payload?: unknown;
    };

export type DialogStartRequest = { workflowType: string; input?: unknown } & StartPlan;

export type DialogStartOutcome = {
  kind: DialogStartRequest['kind'];
  workflowId: string;
  run: number;
  /** False: nothing was started (an earlier start's run was returned, or a running workflow was signalled). */
  started: boolean;
  /** The idempotency key asked with, if any. */
  idempotencyKey?: string;
  /** The signal sent, for signal-with-start. */
  signalName?: string;
};

export function useDialogStart() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (request: DialogStartRequest): Promise<DialogStartOutcome> => {
      if (request.kind === 'signal-with-start') {
        const result = await client.signalWithStart(
          request.workflowType,
          request.input,
          request.signalName,
          request.payload,
          request.options,
        );
        return { kind: request.kind, ...result, signalName: request.signalName };
      }
      const result = await client.startRun(request.workflowType, request.input, request.options);
      return {
        kind: request.kind,
        ...result,
        ...(request.options.idempotencyKey === undefined
          ? {}
          : { idempotencyKey: request.options.idempotencyKey }),
      };
    },
    onSuccess: (outcome) =>
      refreshChangedRows(client, queryClient, [outcome.workflowId], { lists: true, claims: true }),
  });
}
