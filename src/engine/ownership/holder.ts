/**
 * Ownership values and their fail-closed decoding.
 *
 * - The epoch (`wf-owner-epoch:<id>`, `lease:epoch`) is a positive safe integer stored as a decimal string.
 *   A malformed epoch is not guessed at: `decodeEpoch` throws, and the workflow fails closed.
 * - The holder (`wf-owner-holder:<id>`, `lease:holder`) is `{ engineId, epoch, claimedAt, expiresAt }`.
 *   A malformed holder (empty engineId, epoch out of range, non-finite or absurd times) decodes to `null`,
 *   which every caller reads as "no live owner": such a claim is takeover-eligible at once.
 *
 * Conditions always use the exact strings last read or written (`raw`), never a re-encoding.
 */
import { CorruptRecordError } from '../errors';

export type Holder = { engineId: string; epoch: number; claimedAt: number; expiresAt: number };

/** A holder as read from storage: the exact string, and its decoding (null when malformed). */
export type ReadHolder = { raw: string; holder: Holder | null };

/** Times before 2000 or after 2200 are absurd for a claim and read as corrupt. */
const minTime = Date.UTC(2000, 0, 1);
const maxTime = Date.UTC(2200, 0, 1);

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
  for (const time of [claimedAt, expiresAt]) {
    if (typeof time !== 'number' || !Number.isFinite(time) || time < minTime || time > maxTime) return null;
  }
  if ((expiresAt as number) < (claimedAt as number)) return null;
  return { engineId, epoch, claimedAt: claimedAt as number, expiresAt: expiresAt as number };
}

export function readHolder(raw: string | null): ReadHolder | null {
  return raw === null ? null : { raw, holder: decodeHolder(raw) };
}

/**
 * Expiry judgment. A claim is expired when its holder is undecodable, when `now` is strictly past
 * `expiresAt + graceMs`, or when the liveness oracle says the holder's engine is certainly dead.
 */
export function isClaimExpired(
  holder: Holder | null,
  now: number,
  graceMs: number,
  holderDead: boolean,
): boolean {
  if (holder === null) return true;
  if (holderDead) return true;
  return now > holder.expiresAt + graceMs;
}
