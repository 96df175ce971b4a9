/**
 * Engine sessions (`workflow-lease`): what keeps an engine's claims alive.
 *
 * A claim names its holder's engine; the claim is live while that engine's **session** is live. Each engine
 * writes its session record (`wf-session:<engineId>`) when it opens and renews it once per renew interval —
 * one write, however many workflows it holds — so holding a workflow that sleeps for a week costs nothing
 * while it sleeps. Takeover and fencing stay per workflow: a takeover mints the workflow's next epoch, and
 * every write of the old holder is refused by the epoch fence.
 *
 * Liveness of a holder, judged by every engine the same way (`isHolderLive`):
 * - a holder that does not decode is dead (fail-closed);
 * - a holder the liveness oracle reports dead is dead at once (a closed or crashed tab, a killed process);
 * - a holder written by an older build carries its own `expiresAt`: live until `expiresAt + grace`;
 * - otherwise the holder's session decides: live while the session exists, has not ended, and `now` is not
 *   past `expiresAt + grace` (grace = two renew intervals, as for every expiry in Shuttle).
 *
 * A session that ended (graceful shutdown) makes every claim of its engine takeover-eligible at once. The
 * record also lists the engine's active workflows (those with work in flight, at most `maxActiveIds`), so
 * that a successor takes those over first; parked ones move when they have work (a timer falls due, a
 * signal, an update or a cancel request arrives, a child finishes) or when the reclaim sweep reaches them.
 *
 * Records are decoded fail-closed: a malformed session reads as absent (its engine's claims are dead), and
 * the owner that meets its own record changed or gone re-creates it and re-validates its claims.
 */
import { keys } from '../keys';
import { mutation } from '../mutations';
import { isPlausibleTime, type Holder } from './holder';

export type Session = {
  engineId: string;
  startedAt: number;
  renewedAt: number;
  expiresAt: number;
  /** Set when the engine shut down gracefully: its claims are free at once. */
  endedAt?: number;
  /** Workflows with work in flight at the last renewal (a successor takes these first). */
  active?: string[];
  /** More workflows were active than the record lists. */
  activeOverflow?: boolean;
};

/** A session as read: the exact stored string (for compare-and-swap) and its decoding. */
export type ReadSession = { raw: string; session: Session | null };

/** At most this many active workflow ids are listed in a session record. */
export const maxActiveIds = 500;

export function sessionKey(engineId: string): string {
  return keys.session(engineId);
}

export function encodeSession(session: Session): string {
  return JSON.stringify(session);
}

export function decodeSession(raw: string): Session | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.engineId !== 'string' || record.engineId.length === 0) return null;
  for (const time of [record.startedAt, record.renewedAt, record.expiresAt])
    if (!isPlausibleTime(time)) return null;
  if (record.endedAt !== undefined && !isPlausibleTime(record.endedAt)) return null;
  if (
    record.active !== undefined &&
    !(Array.isArray(record.active) && record.active.every((id) => typeof id === 'string'))
  )
    return null;
  return value as Session;
}

/** Whether the holder of a claim is live, given its session (or its own expiry, for older holders). */
export function isHolderLive(
  holder: Holder | null,
  session: Session | null | undefined,
  now: number,
  graceMs: number,
  holderDead: boolean,
): boolean {
  if (holder === null || holderDead || mutation() === 'every-holder-dead') return false;
  if (holder.expiresAt !== null) return now <= holder.expiresAt + graceMs;
  return isSessionLive(session, now, graceMs);
}

export function isSessionLive(session: Session | null | undefined, now: number, graceMs: number): boolean {
  return !!session && session.endedAt === undefined && now <= session.expiresAt + graceMs;
}

/** When a claim stops being live, as the studio shows it (the session's expiry, or when it ended). */
export function claimExpiry(holder: Holder, session: Session | null | undefined): number {
  if (holder.expiresAt !== null) return holder.expiresAt;
  if (!session) return holder.claimedAt;
  return session.endedAt ?? session.expiresAt;
}

/** Why a claim is takeover-eligible, for the timeline. */
export type TakeoverReason = 'expired' | 'holder-dead' | 'holder-stopped' | 'undecodable-holder';

export function takeoverReason(
  holder: Holder | null,
  session: Session | null | undefined,
  now: number,
  graceMs: number,
  holderDead: boolean,
): TakeoverReason {
  if (holder === null) return 'undecodable-holder';
  if (holder.expiresAt === null && session?.endedAt !== undefined) return 'holder-stopped';
  const expiry = claimExpiry(holder, session);
  if (holderDead && now <= expiry + graceMs) return 'holder-dead';
  return 'expired';
}
