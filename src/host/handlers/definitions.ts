/**
 * The definitions domain (src/protocol/definitions.ts): the definitions a studio lists, compiles, saves and
 * deletes. The work is the host's authored-definitions service (../host-definitions.ts).
 */
import type { definitionMethods } from '../../protocol';
import type { HostDefinitions } from '../host-definitions';
import { engineHandler, type DomainHandlers, type HandlerContext } from './types';

export function definitionHandlers(
  context: HandlerContext,
  definitions: HostDefinitions,
): DomainHandlers<typeof definitionMethods> {
  const on = engineHandler(context);
  return {
    definitions: on(() => definitions.list()),
    compileDefinition: ({ source }) => definitions.check(source),
    saveDefinition: on((engine, { source, force }) => definitions.save(engine, source, force ?? false)),
    deleteDefinition: on((engine, { name, version }) => definitions.delete(engine, name, version)),
  };
}
