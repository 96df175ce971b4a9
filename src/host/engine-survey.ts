/**
 * The host's view of the other engines of its store: it lists them for the studio (`engines`), feeds the
 * death watch, warns of tabs of another build, prunes long-dead presence records, and takes a dead or
 * departing engine's workflows over at once.
 *
 * Guarantees (engine-host.ts says where they fit):
 * - Every heartbeat (and whenever the presence record of an engine the death watch does not cover yet is
 *   written) the host surveys the other engines' records — presence first, then the locks, so an engine that
 *   is just starting is never mistaken for a dead one — feeds the death watch, warns once per engine that
 *   runs another protocol version, and every 30 s deletes records of engines dead for over 10 minutes.
 *   Surveys do not overlap; one asked for during another runs once more after it.
 * - `engines` says of each tab's engine whether its page is still open and hosts it (`tabOpen`: the page's
 *   Web Lock `shuttle-tab:<engineId>`, asked of the liveness oracle), null when the oracle cannot tell.
 * - When another engine dies (the death watch) or announces its exit, a maintenance pass runs at once, and
 *   again while the dead engine still holds claims, at most three times; the pages are told the list of
 *   engines changed (no write tells of a vanished lock).
 */
import type { Engine } from '../engine';
import {
  PROTOCOL_VERSION,
  type EngineCounters,
  type EngineMode,
  type EngineRecord,
  type HostState,
  type HostWarning,
  type Params,
} from '../protocol';
import type { Storage } from '../storage/types';
import type { EngineDeathWatch } from './death-watch';
import type { HostLiveness } from './engine-host';
import {
  engineStatusOf,
  isPresenceExpired,
  presenceKey,
  presencePrefix,
  prunePresence,
  readStoredPresence,
  recordCrash,
  waitersForPresence,
  type StoredPresence,
} from './presence';

/** What the presence record says about the engine's work, fresh from the engine. */
export type PresenceFacts = {
  claimsHeld: number;
  resultWaiters: ReturnType<Engine['resultWaiters']>;
  counters: EngineCounters;
};

export type EngineSurveyDeps = {
  engineId: string;
  now(): number;
  liveness: HostLiveness | undefined;
  /** The store, once open. */
  storage(): Storage | null;
  /** This host's engine, once it runs. */
  engine(): Engine | null;
  mode(): EngineMode | null;
  state(): HostState;
  disposed(): boolean;
  deathWatch(): EngineDeathWatch | null;
  presenceFacts(): PresenceFacts;
  warn(warning: HostWarning): void;
  /** Tells the pages these keys changed (the engines list, when a lock vanished). */
  changed(keys: readonly string[]): void;
};

export class EngineSurvey {
  readonly #deps: EngineSurveyDeps;
  #survey: Promise<void> | null = null;
  #surveyAgain = false;
  #lastPruneAt = 0;
  readonly #versionWarned = new Set<string>();

  constructor(deps: EngineSurveyDeps) {
    this.#deps = deps;
  }

  /**
   * The presence record of an engine the death watch does not cover yet was written (a tab just opened, or
   * its engine now holds its lock): survey now, so a crash of a tab opened a moment ago is noticed at once
   * rather than after the next heartbeat's survey.
   */
  noticeNewEngines(keys: readonly string[]): void {
    const watch = this.#deps.deathWatch();
    if (!watch || this.#deps.state() !== 'running') return;
    const uncovered = keys.some(
      (key) =>
        key.startsWith(presencePrefix) &&
        key !== presenceKey(this.#deps.engineId) &&
        !watch.covers(key.slice(presencePrefix.length)),
    );
    if (uncovered) void this.surveyOnce();
  }

  /**
   * Surveys the other engines, or — when a survey is already reading — once more after it: a presence
   * record written while a survey reads (an engine that was `starting` turning `running`) may be missing from
   * what that survey read, and would otherwise wait for the next heartbeat's survey to be watched.
   */
  surveyOnce(): Promise<void> {
    if (this.#survey) {
      this.#surveyAgain = true;
      return this.#survey;
    }
    this.#survey = this.#surveyEngines()
      .catch((error: unknown) => {
        console.warn('[shuttle worker] could not survey the other engines', error);
      })
      .finally(() => {
        this.#survey = null;
        if (this.#surveyAgain && !this.#deps.disposed()) {
          this.#surveyAgain = false;
          void this.surveyOnce();
        }
      });
    return this.#survey;
  }

  async #surveyEngines(): Promise<void> {
    const storage = this.#deps.storage();
    if (!storage || this.#deps.disposed()) return;
    // Presence first, then the locks: an engine writes `running` only once it holds its lock, so a record
    // read as running is in the lock snapshot taken after it, and a tab that is just starting is never
    // mistaken for a dead one (both at once could pair a fresh `running` with an older snapshot).
    const entries = await readStoredPresence(storage);
    const live = await this.#liveEngineIds();
    const watch = this.#deps.deathWatch();
    if (live && watch)
      watch.observe(
        entries.map(({ presence }) => presence),
        live,
      );
    const now = this.#deps.now();
    for (const { presence } of entries) {
      if (presence.engineId === this.#deps.engineId || presence.protocolVersion === PROTOCOL_VERSION)
        continue;
      const alive = live ? live.has(presence.engineId) : null;
      if (
        engineStatusOf(presence, alive, now) === 'dead' ||
        presence.status === 'stopped' ||
        presence.status === 'crashed'
      )
        continue;
      if (this.#versionWarned.has(presence.engineId)) continue;
      this.#versionWarned.add(presence.engineId);
      this.#deps.warn({
        name: 'VersionMismatchWarning',
        engineId: presence.engineId,
        message: `${presence.label} runs a different build of the studio (protocol version ${presence.protocolVersion}; this tab runs ${PROTOCOL_VERSION}). Reload ${presence.label} so that every tab runs the same build.`,
      });
    }
    if (now - this.#lastPruneAt >= 30_000) {
      this.#lastPruneAt = now;
      await prunePresence(storage, withAlive(entries, live), now);
    }
  }

  /** Live engine ids from the liveness oracle; null when it cannot list them (or there is none). */
  async #liveEngineIds(): Promise<ReadonlySet<string> | null> {
    return (await this.#deps.liveness?.liveEngineIds?.().catch(() => null)) ?? null;
  }

  /**
   * Another engine died (its Web Lock was released): take over its claims now. The first pass may be one
   * that began before the death (passes are shared), so run again while the dead engine still holds claims.
   */
  async reclaimFrom(engineId: string): Promise<void> {
    // The page's list of engines is stale now (nothing was written: a lock vanished), so say so.
    this.#deps.changed([presenceKey(engineId)]);
    for (let pass = 0; pass < 3; pass++) {
      const engine = this.#deps.engine();
      if (!engine || this.#deps.state() !== 'running' || this.#deps.disposed()) return;
      try {
        await engine.reclaim();
        const claims = await engine.claims();
        if (!claims.some((claim) => claim.holder?.engineId === engineId)) return;
      } catch {
        return; // the engine is stopping, or storage failed: its own passes carry on
      }
    }
  }

  /** Another tab is going away: count its engine dead now and take its workflows over. */
  engineExiting(engineId: string): null {
    const liveness = this.#deps.liveness;
    if (engineId === this.#deps.engineId || !liveness?.markGone) return null;
    liveness.markGone(engineId);
    if (this.#deps.mode() === 'engine') void this.reclaimFrom(engineId);
    return null;
  }

  /** Records in another engine's presence that its tab terminated its worker. */
  async recordCrash(storage: Storage, params: Params<'recordCrash'>): Promise<null> {
    if (params.engineId === this.#deps.engineId) return null;
    await recordCrash(storage, params.engineId, params.at);
    return null;
  }

  /** Every engine of the store as the studio lists it; prunes the records of engines long dead. */
  async engines(storage: Storage): Promise<EngineRecord[]> {
    const { liveness, engineId } = this.#deps;
    const [entries, live, openTabs] = await Promise.all([
      readStoredPresence(storage),
      liveness?.liveEngineIds ? this.#liveEngineIds() : Promise.resolve(undefined),
      liveness?.openTabEngineIds?.().catch(() => null) ?? Promise.resolve(null),
    ]);
    const now = this.#deps.now();
    const listed = await Promise.all(
      entries.map(async (entry) => {
        const { presence } = entry;
        let alive: boolean | null = null;
        if (live) alive = live.has(presence.engineId);
        else if (live === undefined && liveness)
          alive = !(await liveness.isDead(presence.engineId).catch(() => false));
        return { ...entry, alive };
      }),
    );
    const expired = listed.filter(({ presence, alive }) => isPresenceExpired(presence, alive, now));
    if (expired.length > 0) void prunePresence(storage, expired, now).catch(() => undefined);
    return listed
      .filter((entry) => !expired.includes(entry))
      .map(({ presence, alive }): EngineRecord => {
        const thisTab = presence.engineId === engineId;
        const status = engineStatusOf(presence, alive, now);
        const record: EngineRecord = {
          ...presence,
          status,
          alive,
          thisTab,
          ...(presence.runtime.kind === 'tab'
            ? { tabOpen: openTabs ? openTabs.has(presence.engineId) : null }
            : {}),
          // A stopped, crashed or dead engine renews nothing: whatever its last record said, it holds no
          // claim it could keep (the claims table shows the ones not taken over yet).
          ...(status === 'stopped' || status === 'crashed' || status === 'dead' ? { claimsHeld: 0 } : {}),
        };
        if (thisTab && this.#deps.engine()) {
          const facts = this.#deps.presenceFacts();
          record.claimsHeld = facts.claimsHeld;
          record.resultWaiters = waitersForPresence(facts.resultWaiters);
          record.counters = facts.counters;
        }
        return record;
      });
  }
}

function withAlive(entries: readonly StoredPresence[], live: ReadonlySet<string> | null) {
  return entries.map((entry) => ({ ...entry, alive: live ? live.has(entry.presence.engineId) : null }));
}
