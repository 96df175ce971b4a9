/**
 * Queries about engines and ownership — this tab's engine (identity and status), every engine of the
 * database (presence records, with their result waiters and counters), the engine directory (every engine
 * the database ever ran, kept after presence ages out), every claim holder record — as one
 * `queryOptions` factory per query, which the hooks and every other reader of that query's data use; the
 * link to this tab's worker; and restarting this tab's engine.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useSyncExternalStore } from 'react';
import type { ClaimInfo } from '../../public';
import type { ClientConnection, ShuttleClient } from '../../public/browser';
import type { EngineDirectoryEntry, EngineRecord, HelloResult } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { displayColorOf, withDisplayColors } from './engine-colors';
import { queryKeys } from '../../public/react';

/**
 * The claim TTL, renewal interval and takeover grace the studio's engines run with (the worker host's
 * defaults): an expired claim is taken over once TTL + grace have passed without a renewal. The UI uses them
 * to draw how much life a claim has left and how long ago it was renewed.
 */
export { hostClaimTimings as claimTimings } from '../../public/browser';

/** This tab's engine: id, label, colour, mode, database and status (kept current by status pushes). */
export function thisEngineQuery(client: Pick<ShuttleClient, 'hello'>) {
  return queryOptions<HelloResult>({
    queryKey: queryKeys.self,
    queryFn: () => client.hello(),
    staleTime: Infinity,
  });
}

/** Ids of the workflows this tab's engine holds claims on. */
export function ownedWorkflowsQuery(client: Pick<ShuttleClient, 'ownedWorkflows'>) {
  return queryOptions({ queryKey: queryKeys.owned, queryFn: () => client.ownedWorkflows() });
}

/**
 * Every engine of the database, live or recently dead. Presence records change every second, so this is
 * live through the change feed; it also refetches every two seconds, since a crashed engine's Web Lock
 * vanishes without any write.
 */
export function enginesQuery(client: Pick<ShuttleClient, 'engines'>) {
  return queryOptions<EngineRecord[]>({
    queryKey: queryKeys.engines,
    // Drawn in the studio's own colours: distinct within the list and legible on both themes.
    queryFn: async () => withDisplayColors(await client.engines()),
    refetchInterval: 2_000,
  });
}

/** The key of the engine directory query: apart from `engines`, so a heartbeat does not refetch it. */
export const engineDirectoryKey = ['engine-directory'] as const;

/**
 * Every engine the database has run (`engineDirectory`), in the studio's colours. It changes only when an
 * engine starts or stops, and live engines are resolved from presence first, so it refreshes every 15 s, and
 * at once when presence lists an engine it does not know yet (`useEngineDirectory`).
 */
export function engineDirectoryQuery(client: Pick<ShuttleClient, 'api'>) {
  return queryOptions<EngineDirectoryEntry[]>({
    queryKey: engineDirectoryKey,
    queryFn: async () =>
      (await client.api.engineDirectory({})).map((entry) => ({ ...entry, color: displayColorOf(entry) })),
    staleTime: 10_000,
    refetchInterval: 15_000,
  });
}

/**
 * An engine the directory remembers but presence no longer lists, as an `EngineRecord`: not alive, holding
 * nothing, `stopped` when its stop time is known, else `dead`.
 */
export function rememberedEngine(entry: EngineDirectoryEntry): EngineRecord {
  return {
    engineId: entry.engineId,
    label: entry.label,
    shortLabel: entry.shortLabel,
    color: entry.color,
    mode: entry.mode,
    runtime: entry.runtime,
    startedAt: entry.startedAt,
    ...(entry.ordinal === null ? {} : { ordinal: entry.ordinal }),
    status: entry.stoppedAt === null ? 'dead' : 'stopped',
    lastSeenAt: entry.stoppedAt ?? entry.startedAt,
    claimsHeld: 0,
    protocolVersion: 0,
    resultWaiters: [],
    counters: { workflowsCompleted: 0, claimsLost: 0, writesFencedOut: 0, wakesDiscarded: 0, takeovers: 0 },
    alive: false,
    thisTab: false,
  };
}

/**
 * Engines by id — live presence first, then the directory — for resolving engine ids to labels and colours.
 * A directory entry fills in only engines presence does not list.
 */
export function mergeEngineDirectory(
  engines: readonly EngineRecord[],
  directory: readonly EngineDirectoryEntry[],
): Map<string, EngineRecord> {
  const byId = new Map<string, EngineRecord>();
  for (const entry of directory) byId.set(entry.engineId, rememberedEngine(entry));
  for (const engine of engines) byId.set(engine.engineId, engine);
  return byId;
}

/** Engine ids the directory was already refetched for (once per unknown engine, so a missing entry cannot loop). */
const refetchedFor = new Set<string>();

/** Every claim holder record of the database. */
export function claimsQuery(client: Pick<ShuttleClient, 'claims'>) {
  return queryOptions<ClaimInfo[]>({
    queryKey: queryKeys.claims,
    queryFn: () => client.claims(),
    refetchInterval: 3_000,
  });
}

/** This tab's engine's `result()` waiters (other engines' come with the engines query). */
export function resultWaitersQuery(client: Pick<ShuttleClient, 'resultWaiters'>) {
  return queryOptions({ queryKey: queryKeys.resultWaiters, queryFn: () => client.resultWaiters() });
}

/** This tab's engine (`thisEngineQuery`). */
export function useThisEngine() {
  return useQuery(thisEngineQuery(useShuttleClient()));
}

/**
 * The link between this page and its worker: `ready`, or why the worker stopped. The client itself is the
 * store here (a property and its change callback), read with `useSyncExternalStore`.
 */
export function useConnection(): ClientConnection {
  const client = useShuttleClient();
  return useSyncExternalStore(
    (onChange) => client.onConnectionChange(onChange),
    () => client.connection,
  );
}

/** Ids of the workflows this tab's engine holds claims on (`ownedWorkflowsQuery`). */
export function useOwnedWorkflows() {
  return useQuery(ownedWorkflowsQuery(useShuttleClient()));
}

/** Every engine of the database (`enginesQuery`). */
export function useEngines() {
  return useQuery(enginesQuery(useShuttleClient()));
}

/**
 * Engines by id, for resolving owners, custody lanes and events to labels and colours: live presence first,
 * then the engine directory, so an engine is named and coloured the same long after its presence record
 * aged out (`mergeEngineDirectory`). Empty while loading.
 */
export function useEngineDirectory(): ReadonlyMap<string, EngineRecord> {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  const { data } = useEngines();
  const directory = useQuery(engineDirectoryQuery(client)).data;
  // An engine presence lists that the directory does not know yet (it started since the last fetch):
  // refetch now, so that it is still known once its presence record is gone.
  const unknown = useMemo(() => {
    if (!directory || !data) return null;
    const known = new Set(directory.map((entry) => entry.engineId));
    return data.find((engine) => !known.has(engine.engineId))?.engineId ?? null;
  }, [data, directory]);
  useEffect(() => {
    if (!unknown || refetchedFor.has(unknown)) return;
    refetchedFor.add(unknown);
    void queryClient.invalidateQueries({ queryKey: engineDirectoryKey });
  }, [unknown, queryClient]);
  return useMemo(() => mergeEngineDirectory(data ?? [], directory ?? []), [data, directory]);
}

/** Whether an engine runs workflows right now (alive and not stopped). */
export function isEngineLive(engine: EngineRecord): boolean {
  return (
    engine.alive !== false &&
    engine.status !== 'stopped' &&
    engine.status !== 'crashed' &&
    engine.status !== 'dead'
  );
}

/**
 * Claims held by live engines, for the side bar: from the presence records (one small record per engine,
 * refreshed every heartbeat), except this tab's own engine, whose held workflows the page knows at once
 * (`ownedWorkflowsQuery`, refreshed by its claim events): right after a handoff or a finished run the
 * presence record still counts what it held a second ago.
 */
export function claimsOfLiveEngines(
  engines: readonly EngineRecord[],
  self: { engineId: string; owned: number } | null,
): number {
  return engines
    .filter(isEngineLive)
    .reduce(
      (sum, engine) => sum + (self && engine.engineId === self.engineId ? self.owned : engine.claimsHeld),
      0,
    );
}

/** Every claim holder record of the database (`claimsQuery`). */
export function useClaims() {
  return useQuery(claimsQuery(useShuttleClient()));
}

/** This tab's engine's `result()` waiters (`resultWaitersQuery`). */
export function useResultWaiters() {
  return useQuery(resultWaitersQuery(useShuttleClient()));
}

/**
 * Replaces this tab's engine with a new one, without reloading the page; resolves once the new engine
 * answers. Live updates swap the cached data over to it (`useLiveUpdates`).
 */
export function useRestartThisTab() {
  const client = useShuttleClient();
  return useMutation({ mutationFn: () => client.restartThisTab() });
}
