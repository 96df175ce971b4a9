/**
 * Chaos actions on any engine of the database — freeze, crash, graceful shutdown, restart — through the
 * client's control channel (`client.chaos`), which reaches the tab that hosts the engine. Each resolves
 * once that tab has acknowledged and acted.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ShuttleClient } from '../../worker/client';
import { useShuttleClient } from './client-context';
import { queryKeys } from './query-keys';

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
