/**
 * Chaos actions on any engine of the database — freeze, crash, graceful shutdown, restart — through the
 * client's control channel (`client.chaos`), which reaches the tab that hosts the engine. Each resolves
 * once that tab has acknowledged and acted. Also the environment the chaos drills run in: this tab's client
 * and engine, which only a tab that runs an engine has.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ShuttleClient } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { useThisEngine } from './engine-queries';
import { queryKeys } from '../../public/react';
import { useFleet } from './studio-mode';

export type ChaosRequest =
  | { type: 'freeze'; engineId: string; seconds: number }
  | { type: 'crash'; engineId: string }
  | { type: 'shutdown'; engineId: string }
  | { type: 'restart'; engineId: string };

/** Sends one chaos request. */
export function runChaos(client: ShuttleClient, request: ChaosRequest): Promise<unknown> {
  const { chaos } = client;
  switch (request.type) {
    case 'freeze':
      return chaos.freeze(request.engineId, request.seconds);
    case 'crash':
      return chaos.crash(request.engineId);
    case 'shutdown':
      return chaos.shutdown(request.engineId);
    case 'restart':
      return chaos.restart(request.engineId);
  }
}

/** A chaos request as a mutation; refreshes engines and claims when it settles. */
export function useChaos() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: ChaosRequest) => runChaos(client, request),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.engines });
      void queryClient.invalidateQueries({ queryKey: queryKeys.claims });
      void queryClient.invalidateQueries({ queryKey: queryKeys.self });
    },
  });
}

/**
 * What a chaos drill drives: this page's client, its database, and its engine (in server mode the studio
 * server's observer: the drills then break the fleet's worker processes, which the server controls).
 */
export type ChaosEnvironment = {
  client: ShuttleClient;
  databaseName: string;
  selfEngineId: string;
  /** Server mode: engines are worker processes; chaos goes to the fleet (kill, SIGSTOP, SIGTERM, start). */
  server: boolean;
};

/**
 * The environment drills run in, or null while there is none: loading, a viewer tab, or a server that
 * controls no fleet (it cannot break anything).
 */
export function useChaosEnvironment(): ChaosEnvironment | null {
  const client = useShuttleClient();
  const self = useThisEngine().data;
  const fleet = useFleet().data;
  if (!self) return null;
  if (self.runtime.kind === 'server')
    return fleet?.controlled
      ? { client, databaseName: self.databaseName, selfEngineId: self.engineId, server: true }
      : null;
  if (self.mode !== 'engine') return null;
  return { client, databaseName: self.databaseName, selfEngineId: self.engineId, server: false };
}
