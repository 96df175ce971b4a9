/**
 * Every method of the wire contract, assembled from its domains (each declares its own, once): the table
 * `parseRequest` validates against, and the types the host's handlers and the client's facade derive from.
 */
import { definitionMethods } from './definitions';
import type { MethodDeclaration, ParamsOf, ResultOf } from './declare';
import { fleetMethods } from './fleet';
import { inspectionMethods } from './inspection';
import { queueMethods } from './queues';
import { scheduleMethods } from './schedules';
import { workflowMethods } from './workflows';

/** Every method's declaration, by domain. */
export const declarations = {
  ...workflowMethods,
  ...scheduleMethods,
  ...queueMethods,
  ...definitionMethods,
  ...inspectionMethods,
  ...fleetMethods,
} as const satisfies Record<string, MethodDeclaration<object, unknown>>;

/** The domains, for documentation and for the host's handler modules (src/host/handlers). */
export const domains = {
  workflows: workflowMethods,
  schedules: scheduleMethods,
  queues: queueMethods,
  definitions: definitionMethods,
  inspection: inspectionMethods,
  fleet: fleetMethods,
} as const;

type Declarations = typeof declarations;

/** Every method, with its params and its result. */
export type Methods = {
  [M in keyof Declarations]: { params: ParamsOf<Declarations[M]>; result: ResultOf<Declarations[M]> };
};

export type Method = keyof Methods;
export type Params<M extends Method> = Methods[M]['params'];
export type Result<M extends Method> = Methods[M]['result'];

/** Every method name, in a stable order. */
export const methods = Object.keys(declarations) as Method[];

export function isMethod(value: unknown): value is Method {
  return typeof value === 'string' && Object.hasOwn(declarations, value);
}
