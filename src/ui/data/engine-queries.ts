/**
 * Query hooks about engines and ownership: this tab's engine (identity and status), the link to its worker,
 * every engine of the database (presence records, with their result waiters and counters), and every claim
 * holder record.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useSyncExternalStore } from 'react';
import type { ClaimInfo } from '../../engine';
import type { ClientConnection } from '../../worker/client';
import type { EngineRecord, HelloResult } from '../../worker/protocol';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

/**
 * The claim TTL, renewal interval and takeover grace the studio's engines run with (the worker host's
 * defaults): an expired claim is taken over once TTL + grace have passed without a renewal. The UI uses them
 * to draw how much life a claim has left and how long ago it was renewed.
 */
export const claimTimings = { ttlMs: 6_000, renewIntervalMs: 1_000, graceMs: 2_000 } as const;

/** This tab's engine: id, label, colour, mode, database and status (kept current by status pushes). */
export function useThisEngine() {
  const client = useShuttleClient();
  return useQuery<HelloResult>({
    queryKey: queryKeys.self,
    queryFn: () => client.hello(),
    staleTime: Infinity,
  });
}

/** The link between this page and its worker: `ready`, or why the worker stopped. */
export function useConnection(): ClientConnection {
  const client = useShuttleClient();
  return useSyncExternalStore(
    (onChange) => client.onConnectionChange(onChange),
    () => client.connection,
  );
}

/** Ids of the workflows this tab's engine holds claims on. */
export function useOwnedWorkflows() {
  const client = useShuttleClient();
  return useQuery({ queryKey: queryKeys.owned, queryFn: () => client.ownedWorkflows() });
}

/**
 * Every engine of the database, live or recently dead. Presence records change every second, so this is
 * live through the change feed; it also refetches every two seconds, since a crashed engine's Web Lock
 * vanishes without any write.
 */
export function useEngines() {
  const client = useShuttleClient();
  return useQuery<EngineRecord[]>({
    queryKey: queryKeys.engines,
    queryFn: () => client.engines(),
    refetchInterval: 2_000,
  });
}

/** Engines by id, for resolving owners to labels and colours. Empty while loading. */
export function useEngineDirectory(): ReadonlyMap<string, EngineRecord> {
  const { data } = useEngines();
  return useMemo(() => new Map((data ?? []).map((engine) => [engine.engineId, engine])), [data]);
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

/** Every claim holder record of the database. */
export function useClaims() {
  const client = useShuttleClient();
  return useQuery<ClaimInfo[]>({
    queryKey: queryKeys.claims,
    queryFn: () => client.claims(),
    refetchInterval: 3_000,
  });
}

/** This tab's engine's `result()` waiters (other engines' come with `useEngines`). */
export function useResultWaiters() {
  const client = useShuttleClient();
  return useQuery({ queryKey: queryKeys.resultWaiters, queryFn: () => client.resultWaiters() });
}
