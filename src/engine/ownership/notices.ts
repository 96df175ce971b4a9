/**
 * Displacement notices (`workflow-lease`): how an engine learns that another engine took one of its claims
 * away, without reading every holder it believes it holds.
 *
 * An engine's registry of claims (claims.ts) is a cache of the holder records it wrote. Since claims live by
 * sessions, nothing rewrites a holder while its engine is live — except another engine's transition that
 * displaces it: an operator's terminate, suspend or time-out (a rotation), a purge, or a takeover after this
 * engine was judged gone (its session expired, or the liveness oracle said dead while it was in fact only cut
 * off). Each of those writes, **in the same batch**, a notice addressed to the displaced engine:
 * `wf-owner-notice:<engine>:<workflow>` = `{ epoch, newEpoch, cause, by, at }`. Because it lands atomically
 * with the displacement, a notice exists exactly when the displacement happened; nothing can see the one
 * without the other.
 *
 * The displaced engine reads its notices (one scan of its own prefix) in every renewal pass, and at once when
 * its change feed reports one; for each notice whose epoch is the one it holds, it drops the claim with the
 * usual `claim.lost` event and warning, stops driving the workflow, and tries to claim it again if it is
 * running without a live holder (a new run of a terminated id, a resumed workflow) — a rotation is not a
 * fight between engines, so no cooldown is started. Then it deletes the notices it read (each conditioned on
 * the value it read, so a newer notice for the same workflow is never lost).
 *
 * No notice is written to an engine that cannot be unaware of the displacement: itself, and — for a takeover,
 * which reads the holder's session anyway — one whose session has ended (it let every claim go when it ended
 * it) or is gone (pruned long after it stopped; if it comes back, it finds its session record missing and
 * re-validates every claim). A notice nobody reads — its engine crashed for good — is deleted by the reclaim
 * pass: with that engine's session when the session is pruned, or, when the engine has no session at all, by
 * the full pass every engine makes when it opens.
 */
import type { Operation } from '../../storage/types';
import { keys } from '../keys';
import { decodeHolder } from './holder';

/** What displaced the claim. */
export type DisplacementCause = 'terminated' | 'suspended' | 'timed-out' | 'purged' | 'taken-over';

export type DisplacementNotice = {
  /** The epoch the displaced engine held. */
  epoch: number;
  /** The epoch the displacement minted (null: none, a purge keeps the epoch). */
  newEpoch: number | null;
  cause: DisplacementCause;
  /** The engine whose transition displaced the claim. */
  by: string;
  at: number;
};

const causes: readonly DisplacementCause[] = ['terminated', 'suspended', 'timed-out', 'purged', 'taken-over'];

/**
 * The notice operation for a transition of `engineId` that deletes or replaces the holder `holderRaw` of
 * `workflowId`, or none when the holder names no other engine (absent, undecodable, or this engine's own).
 */
export function displacementNotice(
  workflowId: string,
  holderRaw: string | null,
  displacement: { cause: DisplacementCause; by: string; at: number; newEpoch: number | null },
): Operation[] {
  const holder = holderRaw === null ? null : decodeHolder(holderRaw);
  if (!holder || holder.engineId === displacement.by) return [];
  const notice: DisplacementNotice = { epoch: holder.epoch, ...displacement };
  return [{ type: 'put', key: keys.ownerNotice(holder.engineId, workflowId), value: JSON.stringify(notice) }];
}

/** Decodes a stored notice; null when it is malformed (such a notice is deleted unread). */
export function decodeNotice(raw: string): DisplacementNotice | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { epoch, newEpoch, cause, by, at } = value as Record<string, unknown>;
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 1) return null;
  if (newEpoch !== null && (typeof newEpoch !== 'number' || !Number.isSafeInteger(newEpoch))) return null;
  if (typeof cause !== 'string' || !causes.includes(cause as DisplacementCause)) return null;
  if (typeof by !== 'string' || by.length === 0 || typeof at !== 'number' || !Number.isFinite(at))
    return null;
  return { epoch, newEpoch, cause: cause as DisplacementCause, by, at };
}

/** Why a claim was lost, as the `claim.lost` event and warning say it. */
export function describeDisplacement(notice: DisplacementNotice): string {
  const epochs = notice.newEpoch === null ? '' : ` (epoch ${notice.epoch} → ${notice.newEpoch})`;
  switch (notice.cause) {
    case 'taken-over':
      return `engine ${notice.by} took it over${epochs} while this engine was judged gone`;
    case 'purged':
      return `engine ${notice.by} purged it`;
    default:
      return `engine ${notice.by} ${notice.cause === 'timed-out' ? 'timed it out' : `${notice.cause} it`}${epochs}`;
  }
}
