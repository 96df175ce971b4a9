/**
 * Every method of the wire contract, served: one module per domain of src/protocol, put together here. The
 * `Handlers` type has one entry per declared method, so a method declared without its handler does not
 * compile.
 */
import type { HostDefinitions } from '../host-definitions';
import { definitionHandlers } from './definitions';
import { fleetHandlers, type FleetService } from './fleet';
import { inspectionHandlers } from './inspection';
import { queueHandlers } from './queues';
import { scheduleHandlers } from './schedules';
import type { HandlerContext, Handlers } from './types';
import { workflowHandlers } from './workflows';

export type { FleetControl, FleetService } from './fleet';
export type { Handler, HandlerContext, Handlers, HostPort } from './types';
export { protocolMisuse, unavailableError } from './types';

export function createHandlers(
  context: HandlerContext & { engineId: string },
  services: { definitions: HostDefinitions; fleet: FleetService },
): Handlers {
  return {
    ...workflowHandlers(context),
    ...scheduleHandlers(context),
    ...queueHandlers(context),
    ...definitionHandlers(context, services.definitions),
    ...inspectionHandlers(context),
    ...fleetHandlers(services.fleet),
  };
}
