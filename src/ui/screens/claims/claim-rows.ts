/**
 * How the Claims screen reads the holder records: each claim's remaining life and renew age, whether it is
 * contested (its epoch rose above 1 recently: it changed hands or was fought over) or expired with nobody
 * having taken it over yet, and the order to show them in — trouble first.
 */
import type { ClaimInfo } from '../../../public';

export type ClaimRow = {
  workflowId: string;
  claim: ClaimInfo;
  /** ms until the claim expires (negative: expired that long ago); null without a holder. */
  expiresInMs: number | null;
  /** ms since the holder last renewed (estimated from expiry and TTL); null without a holder. */
  renewAgeMs: number | null;
  contested: boolean;
  expired: boolean;
};

/** A claim counts as contested while its epoch is above 1 and it was (re)claimed within this window. */
export const contestedWindowMs = 60_000;

export function toClaimRows(claims: readonly ClaimInfo[], now: number, ttlMs: number): ClaimRow[] {
  return claims.map((claim) => {
    const holder = claim.holder;
    const expiresInMs = holder ? holder.expiresAt - now : null;
    return {
      workflowId: claim.workflowId,
      claim,
      expiresInMs,
      renewAgeMs: holder ? Math.max(0, now - (holder.expiresAt - ttlMs)) : null,
      contested:
        (claim.epoch ?? holder?.epoch ?? 0) > 1 &&
        holder !== null &&
        now - holder.claimedAt < contestedWindowMs,
      expired: claim.holderCorrupt || (expiresInMs !== null && expiresInMs <= 0),
    };
  });
}

/** Expired first, then contested, then soonest to expire; ties by workflow id. */
export function sortClaimRows(rows: readonly ClaimRow[]): ClaimRow[] {
  const rank = (row: ClaimRow) => (row.expired ? 0 : row.contested ? 1 : 2);
  return [...rows].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.expiresInMs ?? Infinity) - (b.expiresInMs ?? Infinity) ||
      (a.workflowId < b.workflowId ? -1 : 1),
  );
}
