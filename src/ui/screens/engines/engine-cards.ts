/**
 * What an engine's card says, as pure functions (unit-tested): how many claims an engine holds — counted
 * from the claims table, the store's truth, so a dead engine whose presence record still says it held a
 * claim shows what the store says —, and whether a restart can be offered.
 */
import type { ClaimInfo } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { isEngineLive } from '../../data/engine-queries';

/**
 * Claims `engine` holds: the claims table's count once it is loaded, else the presence record's (live
 * engines only: a stopped, crashed or dead engine holds nothing it could renew).
 */
export function claimsHeldBy(
  engine: Pick<EngineRecord, 'engineId' | 'claimsHeld' | 'alive' | 'status'>,
  claims: readonly ClaimInfo[] | undefined,
): number {
  if (claims) return claims.filter((claim) => claim.holder?.engineId === engine.engineId).length;
  return isEngineLive(engine as EngineRecord) ? engine.claimsHeld : 0;
}

/**
 * Whether the Restart button makes sense: a tab's engine that runs, or that crashed or stopped while its tab
 * stayed open. A `dead` engine's tab is gone (closed, or crashed with its page), so nothing could answer.
 */
export function canRestart(engine: Pick<EngineRecord, 'status' | 'mode' | 'runtime'>): boolean {
  if (engine.mode !== 'engine' || engine.runtime?.kind === 'server') return false;
  return engine.status !== 'dead';
}
