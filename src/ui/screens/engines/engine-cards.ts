/**
 * What an engine's card says, as pure functions (unit-tested): how many claims an engine holds — counted
 * from the claims table, the store's truth, so a dead engine whose presence record still says it held a
 * claim shows what the store says —, whether a restart can be offered, and whether the engine's tab is
 * still open.
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
 * Whether the Restart button can work: a tab's engine that runs, or that crashed or stopped while its page
 * stayed open and still hosts it (`tabOpen`: the page holds the engine's tab lock). A `dead` engine's tab is
 * gone (closed, or crashed with its page), and so is a tab whose lock is released (closed, or it restarted
 * into a newer engine): nothing could answer. Where nobody can tell (`tabOpen` null or absent: an older build,
 * a browser without Web Locks), a stopped or crashed engine is offered it, as before.
 */
export function canRestart(engine: Pick<EngineRecord, 'status' | 'mode' | 'runtime' | 'tabOpen'>): boolean {
  if (engine.mode !== 'engine' || engine.runtime?.kind === 'server') return false;
  if (engine.tabOpen === false) return false;
  return engine.status !== 'dead';
}

/**
 * What became of a tab engine's page, for its card: `open` (it hosts the engine), `replaced` (the page is
 * open but runs a newer engine of the same label: a restart or reload), `closed` (no page hosts it), or
 * `unknown` (a server process, or nobody can tell).
 */
export type TabState = 'open' | 'replaced' | 'closed' | 'unknown';

export function tabStateOf(
  engine: Pick<EngineRecord, 'engineId' | 'label' | 'startedAt' | 'mode' | 'runtime' | 'tabOpen'>,
  engines: readonly Pick<EngineRecord, 'engineId' | 'label' | 'startedAt' | 'tabOpen'>[],
): TabState {
  if (engine.runtime?.kind === 'server' || engine.tabOpen === null || engine.tabOpen === undefined)
    return 'unknown';
  if (engine.tabOpen) return 'open';
  const newer = engines.some(
    (other) =>
      other.engineId !== engine.engineId &&
      other.label === engine.label &&
      other.startedAt > engine.startedAt &&
      other.tabOpen === true,
  );
  return newer ? 'replaced' : 'closed';
}
