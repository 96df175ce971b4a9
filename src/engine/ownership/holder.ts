/**
 * Ownership values and their fail-closed decoding.
 *
 * - The epoch (`wf-owner-epoch:<id>`, `lease:epoch`) is a positive safe integer stored as a decimal string.
 *   A malformed epoch is not guessed at: `decodeEpoch` throws, and the workflow fails closed.
 * - The holder (`wf-owner-holder:<id>`, `lease:holder`) is `{ engineId, epoch, claimedAt, expiresAt }`.
 *   The store-wide lease renews its own `expiresAt`; a workflow claim has `expiresAt: null` and lives as long
 *   as its engine's session (session.ts). A malformed holder (empty engineId, epoch out of range, non-finite
 *   or absurd times) decodes to `null`, which every caller reads as "no live owner": such a claim is
 *   takeover-eligible at once.
 *
 * Conditions always use the exact strings last read or written (`raw`), never a re-encoding.
 */
import { CorruptRecordError } from '../errors';

/** `expiresAt: null`: the claim lives as long as its engine's session (workflow claims). */
export type Holder = { engineId: string; epoch: number; claimedAt: number; expiresAt: number | null };

/** A holder as read from storage: the exact string, and its decoding (null when malformed). */
export type ReadHolder = { raw: string; holder: Holder | null };

/** Times before 2000 or after 2200 are absurd for a claim and read as corrupt. */
export const plausibleTimes = { min: Date.UTC(2000, 0, 1), max: Date.UTC(2200, 0, 1) } as const;

/** A finite time in epoch ms between 2000 and 2200 (anything else in an ownership record is corrupt). */
export function isPlausibleTime(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= plausibleTimes.min &&
    value <= plausibleTimes.max
  );
}

export function encodeEpoch(epoch: number): string {
  return String(epoch);
}

/** Decodes an epoch string; `null` for absent. Throws CorruptRecordError for anything else malformed. */
export function decodeEpoch(key: string, raw: string | null): number | null {
  if (raw === null) return null;
  if (!/^[1-9][0-9]*$/.test(raw))
    throw new CorruptRecordError(key, `epoch ${JSON.stringify(raw.slice(0, 40))} is not a positive integer`);
  const epoch = Number(raw);
  if (!Number.isSafeInteger(epoch))
    throw new CorruptRecordError(key, `epoch ${raw.slice(0, 40)} is out of range`);
  return epoch;
}

/** Like decodeEpoch, but a malformed value yields undefined instead of throwing. */
export function tryDecodeEpoch(raw: string | null): number | null | undefined {
  try {
    return decodeEpoch('', raw);
  } catch {
    return undefined;
  }
}

export function encodeHolder(holder: Holder): string {
  return JSON.stringify({
    engineId: holder.engineId,
    epoch: holder.epoch,
    claimedAt: holder.claimedAt,
    expiresAt: holder.expiresAt,
  });
}

export function decodeHolder(raw: string): Holder | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { engineId, epoch, claimedAt, expiresAt } = value as Record<string, unknown>;
  if (typeof engineId !== 'string' || engineId.length === 0 || engineId.length > 256) return null;
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 1) return null;
  if (!isPlausibleTime(claimedAt)) return null;
  if (expiresAt !== null && !(isPlausibleTime(expiresAt) && expiresAt >= claimedAt)) return null;
  return { engineId, epoch, claimedAt, expiresAt };
}

export function readHolder(raw: string | null): ReadHolder | null {
  return raw === null ? null : { raw, holder: decodeHolder(raw) };
}

/**
 * Expiry judgment of a holder that carries its own expiry (the store-wide lease). It is expired when it is
 * undecodable, when `now` is strictly past `expiresAt + graceMs`, or when the liveness oracle says the
 * holder's engine is certainly dead. Workflow claims are judged by their session (session.ts).
 */
export function isClaimExpired(
  holder: Holder | null,
  now: number,
  graceMs: number,
  holderDead: boolean,
): boolean {
  if (holder === null) return true;
  if (holderDead) return true;
  return holder.expiresAt === null || now > holder.expiresAt + graceMs;
}
