/**
 * Pure ownership transitions. Each builder returns the `{ conditions, operations }` of one conditional
 * batch and does no I/O, so the rules are testable without storage. The stateful layer (claims.ts,
 * global-lease.ts) reads the current values, calls a builder, merges the result with the workflow's own
 * conditions and operations (timeline entry, checkpoint), and commits it as one batch.
 *
 * Rules encoded here (docs/ownership.md, "Epochs and fences"):
 * - A new epoch is always `(stored epoch ?? 0) + 1`, conditioned on the stored string just read: never a
 *   literal, never reset. Epoch keys are never deleted.
 * - acquire: holder absent and epoch unchanged. takeover: holder and epoch both unchanged (exact strings).
 * - renew (the store-wide lease only; workflow claims live by their engine's session): holder equals the
 *   exact value this engine last wrote; only `expiresAt` changes.
 * - release: epoch equals ours → delete the holder only. (Epoch equality implies the holder, if present,
 *   is ours: only epoch-minting transitions write a holder for another engine.)
 * - rotation (terminate, suspend, timeout, purge): epoch unchanged → epoch + 1, holder deleted.
 */
import type { Condition, Operation } from '../../storage/types';
import { mutation } from '../mutations';
import { encodeEpoch, encodeHolder, type Holder } from './holder';

export type Transition = { conditions: Condition[]; operations: Operation[] };

export type MintedClaim = Transition & { epoch: number; epochRaw: string; holder: Holder; holderRaw: string };

export type ClaimKeys = { epochKey: string; holderKey: string };

/**
 * Who mints: the engine, the time, and the TTL of a holder that carries its own expiry (the store-wide
 * lease); `ttlMs: null` mints a holder that lives as long as its engine's session (a workflow claim).
 */
export type Minter = { engineId: string; now: number; ttlMs: number | null };

function mint(
  keys: ClaimKeys,
  storedEpoch: number | null,
  who: Minter,
  conditions: Condition[],
): MintedClaim {
  const epoch = (storedEpoch ?? 0) + 1;
  const epochRaw = encodeEpoch(epoch);
  const holder: Holder = {
    engineId: who.engineId,
    epoch,
    claimedAt: who.now,
    expiresAt: who.ttlMs === null ? null : who.now + who.ttlMs,
  };
  const holderRaw = encodeHolder(holder);
  return {
    conditions,
    operations: [
      { type: 'put', key: keys.epochKey, value: epochRaw },
      { type: 'put', key: keys.holderKey, value: holderRaw },
    ],
    epoch,
    epochRaw,
    holder,
    holderRaw,
  };
}

/** Acquire an unowned claim. `epochRaw`/`storedEpoch` are what was just read (null: absent). */
export function buildAcquire(
  keys: ClaimKeys,
  read: { epochRaw: string | null; storedEpoch: number | null },
  who: Minter,
): MintedClaim {
  return mint(keys, read.storedEpoch, who, [
    { key: keys.holderKey, expected: null },
    { key: keys.epochKey, expected: read.epochRaw },
  ]);
}

/** Take over an expired claim. The new epoch is minted from the stored epoch, whatever the holder says. */
export function buildTakeover(
  keys: ClaimKeys,
  read: { epochRaw: string | null; storedEpoch: number | null; holderRaw: string },
  who: Minter,
): MintedClaim {
  const storedEpoch =
    mutation() === 'takeover-keeps-epoch' && read.storedEpoch !== null
      ? read.storedEpoch - 1
      : read.storedEpoch;
  return mint(keys, storedEpoch, who, [
    { key: keys.holderKey, expected: read.holderRaw },
    { key: keys.epochKey, expected: read.epochRaw },
  ]);
}

export function buildRenew(
  keys: ClaimKeys,
  current: { holder: Holder; holderRaw: string },
  now: number,
  ttlMs: number,
): Transition & { holder: Holder; holderRaw: string } {
  const holder: Holder = { ...current.holder, expiresAt: now + ttlMs };
  const holderRaw = encodeHolder(holder);
  return {
    conditions: [{ key: keys.holderKey, expected: current.holderRaw }],
    operations: [{ type: 'put', key: keys.holderKey, value: holderRaw }],
    holder,
    holderRaw,
  };
}

export function buildRelease(keys: ClaimKeys, current: { epochRaw: string }): Transition {
  return {
    conditions: [{ key: keys.epochKey, expected: current.epochRaw }],
    operations: [{ type: 'delete', key: keys.holderKey }],
  };
}

/** External rotation: deposes whoever holds the claim. */
export function buildRotation(
  keys: ClaimKeys,
  read: { epochRaw: string | null; storedEpoch: number | null },
): Transition & { epoch: number } {
  const epoch = (read.storedEpoch ?? 0) + 1;
  return {
    conditions: [{ key: keys.epochKey, expected: read.epochRaw }],
    operations: [
      { type: 'put', key: keys.epochKey, value: encodeEpoch(epoch) },
      { type: 'delete', key: keys.holderKey },
    ],
    epoch,
  };
}
