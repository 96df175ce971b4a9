/**
 * Construction gates, run by `createEngine` before any recovery or claim:
 *
 * 1. Capability gate: a fencing mode (`lease`, `workflow-lease`) on storage without an atomic
 *    `conditionalBatch` fails with a message naming the mode and the capability, before any key is read.
 * 2. Mode marker: `ownership-mode-marker` holds `{ mode, establishedAt }`. The first fencing-mode engine on
 *    a fresh store writes it (expected absent); every later fencing-mode engine compares. A different mode
 *    fails with `OwnershipModeMismatchError` and touches nothing else. A corrupt marker fails construction
 *    and is never overwritten. `none` engines neither read nor write the marker.
 */
import type { Storage } from '../../storage/types';
import { CorruptRecordError, InvalidOptionsError, OwnershipModeMismatchError } from '../errors';
import { keys } from '../keys';
import type { OwnershipMode } from '../options';

export type ModeMarker = { mode: OwnershipMode; establishedAt: number };

export function checkCapability(storage: Storage, mode: OwnershipMode): void {
  if (mode === 'none') return;
  if (!storage.capabilities?.conditionalBatch)
    throw new InvalidOptionsError(
      `Ownership mode '${mode}' needs storage with the 'conditionalBatch' capability (an atomic compare-and-swap across writers), and this storage does not have it. Use 'none', or a store that supports it (MemoryStorage, IndexedDbStorage).`,
    );
}

function decodeMarker(raw: string): ModeMarker {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new CorruptRecordError(keys.modeMarker, 'not valid JSON');
  }
  const { mode, establishedAt } = (value ?? {}) as Record<string, unknown>;
  if (
    (mode !== 'lease' && mode !== 'workflow-lease') ||
    typeof establishedAt !== 'number' ||
    !Number.isFinite(establishedAt)
  )
    throw new CorruptRecordError(keys.modeMarker, 'not a { mode, establishedAt } marker of a fencing mode');
  return { mode, establishedAt };
}

/** Stamps or checks the store's mode marker. Idempotent. */
export async function checkModeMarker(
  storage: Storage,
  commit: (
    conditions: { key: string; expected: string | null }[],
    operations: { type: 'put'; key: string; value: string }[],
  ) => Promise<boolean>,
  mode: OwnershipMode,
  now: number,
): Promise<ModeMarker | null> {
  if (mode === 'none') return null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const raw = await storage.get(keys.modeMarker);
    if (raw !== null) {
      const marker = decodeMarker(raw);
      if (marker.mode !== mode) throw new OwnershipModeMismatchError(mode, marker.mode, marker.establishedAt);
      return marker;
    }
    const marker: ModeMarker = { mode, establishedAt: now };
    if (
      await commit(
        [{ key: keys.modeMarker, expected: null }],
        [{ type: 'put', key: keys.modeMarker, value: JSON.stringify(marker) }],
      )
    )
      return marker;
  }
  throw new InvalidOptionsError(
    'Could not establish the ownership mode marker: it kept changing underneath. Is another engine misbehaving?',
  );
}
