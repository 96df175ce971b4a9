/**
 * How definitions are named and offered in the studio. The built-in catalog's own title and "child only"
 * flag are used when the worker reports them (`DefinitionInfo.title`, `DefinitionInfo.childOnly`);
 * otherwise the title is made from the name (`slow-steps` → "Slow steps"), and a definition whose
 * description says it is a child of another is offered after the top-level ones.
 */
import type { DefinitionInfo } from '../../public/browser';

/** "Slow steps" for `slow-steps`, or the catalog title. */
export function humanTitle(definition: Pick<DefinitionInfo, 'name' | 'title'>): string {
  const title = definition.title;
  if (typeof title === 'string' && title.length > 0) return title;
  const words = definition.name
    .replace(/[-_]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Whether a definition is normally started by a parent workflow rather than by people. */
export function isChildOnly(definition: DefinitionInfo): boolean {
  if (definition.childOnly) return true;
  return /^child of\b/i.test(definition.description ?? '');
}

/** Whether to offer the definition as a demo to start (palette, first section of the start dialog). */
export function isOffered(definition: DefinitionInfo): boolean {
  return !isChildOnly(definition);
}
