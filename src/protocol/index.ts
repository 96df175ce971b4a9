/**
 * The wire contract between a studio page and an engine — its own tab's worker, or a server — and between
 * tabs: declared once, by domain. Types, declarations and validators only: nothing here runs an engine, so
 * the UI, the client, the host and the server all import it (docs/architecture.md).
 *
 * - `workflows.ts`, `schedules.ts`, `queues.ts`, `definitions.ts`, `inspection.ts`, `fleet.ts`: each domain's methods,
 *   one `method<Params, Result>({ rules })` declaration each (`declare.ts`);
 * - `methods.ts`: all of them together (`declarations`, the `Methods` type);
 * - `messages.ts`: requests, responses and pushed messages, and their validation (`parseRequest`);
 * - `control.ts`: the control channel between tabs;
 * - `shapes.ts`: shapes shared across domains (the protocol version, host status, presence, `hello`).
 *
 * Bump `PROTOCOL_VERSION` on any incompatible change of a shape.
 */
export * from './control';
export * from './declare';
export * from './definitions';
export * from './fields';
export * from './fleet';
export * from './inspection';
export * from './messages';
export * from './methods';
export * from './queues';
export * from './schedules';
export * from './shapes';
export * from './workflows';
