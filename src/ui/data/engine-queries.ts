/**
 * Query hooks about engines: this tab's engine (identity and status), the link to its worker, and every
 * engine of the database (presence records), looked up by id for owner chips.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo, useSyncExternalStore } from 'react';
import type { ClientConnection } from '../../worker/client';
import type { EngineRecord, HelloResult } from '../../worker/protocol';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

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

/** Every engine of the database, live or recently dead. */
export function useEngines() {
  const client = useShuttleClient();
  return useQuery({ queryKey: queryKeys.engines, queryFn: () => client.engines() });
}

/** Engines by id, for resolving owners to labels and colours. Empty while loading. */
export function useEngineDirectory(): ReadonlyMap<string, EngineRecord> {
  const { data } = useEngines();
  return useMemo(() => new Map((data ?? []).map((engine) => [engine.engineId, engine])), [data]);
}
