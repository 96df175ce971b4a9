/**
 * Which studio this page is: **tab mode** (this tab runs its own engine in a Web Worker over IndexedDB) or
 * **server mode** (the page is connected to a studio server, `shuttle serve`, and runs no engine: an
 * observer engine on the server answers). Everything the UI says about engines, stores and chaos depends on
 * it, so it is read in one place; and, in server mode, the worker processes the server controls (`shuttle
 * dev`) and the actions on them: kill (SIGKILL), freeze (SIGSTOP for N s, then SIGCONT), thaw, graceful stop
 * (SIGTERM), start one more worker.
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ShuttleClient } from '../../public/browser';
import type { EngineRecord, FleetActionType, FleetProcess, HelloResult } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { claimTimings, useThisEngine } from './engine-queries';
import { queryKeys } from '../../public/react';

export type StudioMode = {
  /** True when the page is connected to a studio server and runs no engine of its own. */
  server: boolean;
  /** The store, in words: `IndexedDB 'shuttle'`, `PostgreSQL 127.0.0.1:5432/postgres (schema shuttle)`. */
  store: string | null;
  /** Whether definitions can be written, saved and run from the studio (off on servers). */
  authoring: boolean;
  /** Where the server runs (server mode, once known). */
  host: { hostName: string; pid: number } | null;
  /** The claim timings of the store's engines. */
  claimTimings: HelloResult['claimTimings'];
};

/** The studio mode of `hello` (or, before it answered, what the client knows: whether it talks to a server). */
export function studioModeOf(hello: HelloResult | undefined, isServer: boolean): StudioMode {
  const server = hello ? hello.runtime.kind === 'server' : isServer;
  return {
    server,
    store: hello ? (hello.store ?? hello.databaseName) : null,
    authoring: hello ? hello.authoring !== false && !server : !server,
    host:
      hello && hello.runtime.kind === 'server'
        ? { hostName: hello.runtime.hostName, pid: hello.runtime.pid }
        : null,
    claimTimings: hello?.claimTimings ?? claimTimings,
  };
}

/** The studio mode of this page. */
export function useStudioMode(): StudioMode {
  const client = useShuttleClient();
  const hello = useThisEngine().data;
  return studioModeOf(hello, client.isServer);
}

/** The query key of the fleet (kept here: the list of worker processes is this module's). */
export const fleetKey = ['fleet'] as const;

/** The worker processes the studio server controls; `controlled: false` when it controls none (or in a tab). */
export function fleetQuery(client: Pick<ShuttleClient, 'fleet' | 'isServer'>) {
  return queryOptions({
    queryKey: fleetKey,
    queryFn: () => client.fleet(),
    enabled: client.isServer,
    refetchInterval: 1_000,
  });
}

/** The fleet of the studio server (`fleetQuery`); undefined in tab mode and while loading. */
export function useFleet() {
  return useQuery(fleetQuery(useShuttleClient()));
}

/** A fleet action as the studio asks for it. */
export type FleetRequest =
  | { action: Exclude<FleetActionType, 'start' | 'freeze'>; engineId: string }
  | { action: 'freeze'; engineId: string; seconds: number }
  | { action: 'start' };

/** Sends one fleet action (through the client: `chaos` for kill / freeze / stop, `startWorker` to start). */
export async function runFleetAction(client: ShuttleClient, request: FleetRequest): Promise<unknown> {
  switch (request.action) {
    case 'start':
      return client.startWorker();
    case 'kill':
      return client.chaos.crash(request.engineId);
    case 'freeze':
      return client.chaos.freeze(request.engineId, request.seconds);
    case 'stop':
      return client.chaos.shutdown(request.engineId);
    case 'thaw':
      return client.thawWorker(request.engineId);
  }
}

/** A fleet action as a mutation; refreshes the fleet, engines and claims when it settles. */
export function useFleetAction() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: FleetRequest) => runFleetAction(client, request),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: fleetKey });
      void queryClient.invalidateQueries({ queryKey: queryKeys.engines });
      void queryClient.invalidateQueries({ queryKey: queryKeys.claims });
    },
  });
}

/** The process of the fleet that runs `engine`, if the server controls it. */
export function processOf(
  engine: Pick<EngineRecord, 'engineId'>,
  processes: readonly FleetProcess[] | undefined,
): FleetProcess | undefined {
  return processes?.find((process) => process.engineId === engine.engineId);
}

/** What the studio can do to a process now (nothing once it exited). */
export function fleetActionsFor(process: FleetProcess | undefined): {
  kill: boolean;
  freeze: boolean;
  thaw: boolean;
  stop: boolean;
} {
  const alive = process !== undefined && process.state !== 'exited';
  return {
    kill: alive,
    freeze: alive && process.state === 'running',
    thaw: alive && process.state === 'frozen',
    stop: alive && process.state !== 'stopping',
  };
}

/** How an engine's liveness reads: Web Locks in tabs, a PostgreSQL advisory lock for server processes. */
export function livenessText(engine: Pick<EngineRecord, 'alive' | 'runtime'>): string {
  const lock = engine.runtime?.kind === 'server' ? 'advisory lock' : 'Web Lock';
  if (engine.alive === true) return `${lock} held`;
  if (engine.alive === false) return `${lock} released`;
  return 'liveness unknown';
}

/** How "this page's own engine" is said of `engine`: `this tab`, `this server` (its observer), or null. */
export function selfWord(engine: Pick<EngineRecord, 'thisTab' | 'runtime'> | undefined): string | null {
  if (!engine?.thisTab) return null;
  return engine.runtime?.kind === 'server' ? 'this server' : 'this tab';
}
