/**
 * The fleet and chaos domain (src/protocol/fleet.ts): a page's `hello`, the engines of the store, and what a
 * page may do to an engine or to the worker processes of a fleet a server controls.
 */
import type { ShutdownReport } from '../../engine';
import type {
  EngineDirectoryEntry,
  EngineRecord,
  FleetActionOutcome,
  FleetActionType,
  FleetProcess,
  fleetMethods,
  HelloResult,
  Params,
  Result,
} from '../../protocol';
import { protocolMisuse, type DomainHandlers } from './types';

/** The worker processes a server controls (`shuttle dev`), for the studio's chaos on processes. */
export type FleetControl = {
  list(): FleetProcess[];
  /** Acts on the process running `engineId` (or, for `start`, starts one more). */
  act(engineId: string | null, action: FleetActionType, seconds?: number): Promise<FleetActionOutcome>;
};

/** What the host does for this domain (its start-up, its survey of the other engines, its chaos freeze). */
export type FleetService = {
  hello(params: Params<'hello'>): Promise<HelloResult>;
  engines(): Promise<EngineRecord[]>;
  /** The engine directory (engine-directory.ts). */
  engineDirectory(): Promise<EngineDirectoryEntry[]>;
  /** Null when the page may not stop this engine (a server's), with the reason thrown instead. */
  shutdown(): Promise<ShutdownReport>;
  freeze(seconds: number): Promise<Result<'freeze'>>;
  recordCrash(params: Params<'recordCrash'>): Promise<null>;
  engineExiting(engineId: string): null;
  fleet: FleetControl | undefined;
};

const fleetActions: readonly FleetActionType[] = ['kill', 'freeze', 'thaw', 'stop', 'start'];

export function fleetHandlers(service: FleetService): DomainHandlers<typeof fleetMethods> {
  return {
    hello: (params) => service.hello(params),
    engines: () => service.engines(),
    engineDirectory: () => service.engineDirectory(),
    shutdown: () => service.shutdown(),
    freeze: ({ seconds }) => service.freeze(seconds),
    recordCrash: (params) => service.recordCrash(params),
    engineExiting: async ({ engineId }) => service.engineExiting(engineId),
    fleet: async () => ({ controlled: service.fleet !== undefined, processes: service.fleet?.list() ?? [] }),
    fleetAction: async ({ engineId, action, seconds }) => {
      const fleet = service.fleet;
      if (!fleet)
        throw protocolMisuse(
          'This studio controls no worker processes: kill, freeze and start them where they run (shuttle dev controls the fleet it starts).',
        );
      if (!fleetActions.includes(action as FleetActionType))
        throw protocolMisuse(`Unknown fleet action '${action}'; use one of ${fleetActions.join(', ')}.`);
      if (action === 'freeze' && !(seconds !== undefined && seconds > 0 && seconds <= 600))
        throw protocolMisuse('freeze needs seconds above 0 and at most 600.');
      if (action !== 'start' && !engineId) throw protocolMisuse(`${action} needs the engineId of a worker.`);
      return fleet.act(engineId ?? null, action as FleetActionType, seconds);
    },
  };
}
