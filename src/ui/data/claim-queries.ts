/**
 * One workflow's claim as the detail page shows it: who holds it and whether that holder is live
 * (`claimHolder`, judged by the engine as a takeover would judge it: its session and the liveness oracle),
 * and the "Take over" action (`reclaim`), which claims it on this page's engine only when its holder is
 * expired or dead.
 *
 * - Liveness changes without any write: a frozen tab's session lapses, a crashed tab's Web Lock goes. So
 *   the holder is read again every second while the page is open on an unfinished run, besides the
 *   refreshes the change feed brings (the key lies under the workflow's, so session renewals and claim
 *   changes refresh it too).
 * - `claimLiveness` turns the engine's answer into what the page says: live (perhaps in its grace period),
 *   expired, holder dead, or no holder; and whether "Take over" may be offered (only when expired or dead).
 * - A reclaim's outcome comes back as data (`ReclaimOutcome`); `describeReclaim` says it in words, and
 *   whether it was a refusal. A viewer tab or the studio server rejects with `ObserverCannotClaimError`.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ClaimHolder, ReclaimOutcome } from '../../public';
import type { EngineStatus } from '../../public/browser';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { refreshChangedRows } from './list-rows';
import { queryKeys } from '../../public/react';
import { retryUnlessNotFound } from './workflow-queries';

/** How often an open page asks again whether the holder is live, in ms. */
export const claimHolderPollMs = 1_000;

/** The query key of a workflow's claim holder (under the workflow's own key). */
export function claimHolderKey(workflowId: string) {
  return [...queryKeys.workflow(workflowId), 'claim-holder'] as const;
}

/** Who holds the workflow's claim and whether that holder is live now; null when nobody holds it. */
export function claimHolderQuery(client: Pick<ShuttleClient, 'claimHolder'>, workflowId: string) {
  return queryOptions<ClaimHolder | null>({
    queryKey: claimHolderKey(workflowId),
    queryFn: () => client.claimHolder(workflowId),
    retry: retryUnlessNotFound,
  });
}

/** The claim holder of a workflow, polled every second while `enabled` (an unfinished run is shown). */
export function useClaimHolder(workflowId: string, enabled: boolean) {
  return useQuery({
    ...claimHolderQuery(useShuttleClient(), workflowId),
    enabled,
    refetchInterval: enabled ? claimHolderPollMs : false,
  });
}

/** What the page says of a claim. */
export type ClaimLiveness =
  /** Nobody holds it (finished, suspended, pending, or between owners). */
  | { state: 'none' }
  /** Its holder is live; `inGrace`: its claim expired, but the grace period has not run out. */
  | { state: 'live'; holder: ClaimHolder; inGrace: boolean }
  /** Its holder's session lapsed past the grace period: any engine may take it over. */
  | { state: 'expired'; holder: ClaimHolder }
  /** Its holder is dead (its Web Lock or advisory lock is gone) or stopped: any engine may take it over. */
  | { state: 'dead'; holder: ClaimHolder };

/**
 * The liveness of a claim from the engine's answer, at `now`. The engine's `live` decides whether it may
 * be taken over; the time and the holder's engine record (when known) only say why not.
 */
export function claimLiveness(
  holder: ClaimHolder | null,
  now: number,
  graceMs: number,
  holderStatus?: EngineStatus,
): ClaimLiveness {
  if (!holder) return { state: 'none' };
  if (holder.live) return { state: 'live', holder, inGrace: now > holder.expiresAt };
  if (holderStatus === 'dead' || holderStatus === 'crashed' || holderStatus === 'stopped')
    return { state: 'dead', holder };
  return now > holder.expiresAt + graceMs ? { state: 'expired', holder } : { state: 'dead', holder };
}

/** "Take over" is offered only when the holder is expired or dead. */
export function mayTakeOver(liveness: ClaimLiveness): boolean {
  return liveness.state === 'expired' || liveness.state === 'dead';
}

/** The words of a liveness, for the badge. */
export function livenessLabel(liveness: ClaimLiveness): string {
  switch (liveness.state) {
    case 'none':
      return 'no holder';
    case 'live':
      return liveness.inGrace ? 'live · in grace' : 'live';
    case 'expired':
      return 'expired';
    case 'dead':
      return 'holder dead';
  }
}

/**
 * A reclaim's outcome in words, and whether it took the workflow (`ok`) or was refused. `name` labels an
 * engine id (e.g. `Tab B`).
 */
export function describeReclaim(
  outcome: ReclaimOutcome,
  name: (engineId: string) => string,
): { ok: boolean; text: string } {
  switch (outcome.outcome) {
    case 'taken-over':
      return { ok: true, text: `Taken over by this engine at epoch ${outcome.epoch}.` };
    case 'acquired':
      return { ok: true, text: `Claimed by this engine at epoch ${outcome.epoch} (nobody held it).` };
    case 'already-held':
      return { ok: true, text: `This engine already holds it (epoch ${outcome.epoch}).` };
    case 'held-live':
      return {
        ok: false,
        text: `Refused: its holder ${name(outcome.holder.engineId)} is live (epoch ${outcome.holder.epoch}). Only an expired or dead holder's workflow can be taken over; it moves by itself if that engine stops.`,
      };
    case 'not-running':
      return {
        ok: false,
        text: 'Nothing to take over: it is not running (finished, suspended or pending).',
      };
    case 'ineligible':
      return {
        ok: false,
        text: "Refused: this engine cannot run it (it has no definition of this workflow's type and version).",
      };
    case 'lost-race':
      return { ok: false, text: 'Another engine claimed it at the same moment; it runs there now.' };
    case 'corrupt':
      return { ok: false, text: 'Refused: its records cannot be read (see the corrupt record notice).' };
  }
}

/** Takes the workflow over on this page's engine (`reclaim`); refreshes its page, rows and claims. */
export function useReclaim(workflowId: string) {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => client.reclaim(workflowId),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.workflow(workflowId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.owned });
      void refreshChangedRows(client, queryClient, [workflowId], { lists: true, claims: true });
    },
  });
}
