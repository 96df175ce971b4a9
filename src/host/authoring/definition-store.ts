/**
 * Authored definitions in the shared store: `def:<name>:<version>` holds the source text (and who saved it
 * when). Every tab's worker compiles and registers what it finds there — at start-up for all of them, and
 * at once for each one the change feed reports — so a workflow authored in one tab runs, and can be taken
 * over, in any other.
 *
 * Rules, checked before anything is written:
 * - the source must compile into a definition (diagnostics come back otherwise);
 * - a built-in demo's name is reserved;
 * - changing the body of a version that unfinished workflows use is refused unless forced — replaying them
 *   on different code may break (NonDeterminismError); bump the version instead, and the old version stays
 *   registered for the workflows that started on it;
 * - a version that unfinished workflows use cannot be deleted.
 */
import type { DeleteOutcome, SaveOutcome } from '../../protocol/definitions';
import { hostKeys, type Engine } from '../../engine';
import type { Storage } from '../../storage';
import { compileDefinition, type CompileResult } from './compile';

/** What `def:<name>:<version>` holds. */
export type StoredDefinition = {
  name: string;
  version: number;
  source: string;
  savedAt: number;
  savedBy: string;
};

/** A definition shipped with the engine (a built-in demo, or deployed with a server) as the studio shows it. */
export type BuiltInInfo = {
  /** The TypeScript module the definition is exported from. */
  source: string | null;
  /** A short human title ("Order fulfilment"), or null for child types. */
  title: string | null;
  /** Started by a parent workflow, not offered on its own. */
  childOnly: boolean;
};

export type { DeleteOutcome, SaveOutcome };

const unfinishedStatuses = ['running', 'pending', 'suspended'] as const;

export function decodeStoredDefinition(key: string, raw: string): StoredDefinition | null {
  const parsed = hostKeys.parseDefinition(key);
  if (!parsed) return null;
  try {
    const value = JSON.parse(raw) as StoredDefinition;
    if (typeof value.source !== 'string' || value.name !== parsed.name || value.version !== parsed.version)
      return null;
    return value;
  } catch {
    return null;
  }
}

export async function listStoredDefinitions(storage: Storage): Promise<StoredDefinition[]> {
  const entries = await storage.scan(hostKeys.definitionsPrefix);
  return entries.flatMap(({ key, value }) => {
    const stored = decodeStoredDefinition(key, value);
    return stored ? [stored] : [];
  });
}

/** How many unfinished workflows started on this version of the type. */
export async function countUnfinished(engine: Engine, name: string, version: number): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await engine.list({
      workflowType: name,
      status: [...unfinishedStatuses],
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    count += page.items.filter((item) => item.version === version).length;
    if (!page.nextCursor) return count;
    cursor = page.nextCursor;
  }
}

export async function saveDefinition(
  storage: Storage,
  engine: Engine,
  source: string,
  options: { savedBy: string; reservedNames: ReadonlySet<string>; force?: boolean; now: number },
): Promise<{ outcome: SaveOutcome; compiled: CompileResult }> {
  let compiled = await compileDefinition(source, 'definition.ts');
  if (!compiled.ok)
    return { outcome: { ok: false, reason: 'invalid', diagnostics: compiled.diagnostics }, compiled };
  // The definition this engine registers once saved (AuthoredDefinitions.noteSaved) is this compilation:
  // compiled again under its own name, its stacks name `<name>.ts`, as every other engine's do (they compile
  // the stored record as `<name>.ts`), not the `definition.ts` of the first compilation.
  const named = await compileDefinition(source, `${compiled.definition.name}.ts`);
  if (named.ok) compiled = named;
  const { name, version } = compiled.definition;
  if (options.reservedNames.has(name))
    return {
      outcome: {
        ok: false,
        reason: 'reserved',
        name,
        message: `'${name}' is the name of a built-in demo. Give your definition another name (copy the template and rename it).`,
      },
      compiled,
    };
  const key = hostKeys.definition(name, version);
  const previousRaw = await storage.get(key);
  const previous = previousRaw === null ? null : decodeStoredDefinition(key, previousRaw);
  if (previous && previous.source !== source && !options.force) {
    const unfinished = await countUnfinished(engine, name, version);
    if (unfinished > 0) {
      // The next version nobody has saved yet, so the bump never lands on another version in use.
      const highest = Math.max(
        version,
        ...(await listStoredDefinitions(storage)).filter((d) => d.name === name).map((d) => d.version),
      );
      const suggestedVersion = highest + 1;
      return {
        outcome: {
          ok: false,
          reason: 'version-in-use',
          name,
          version,
          unfinished,
          suggestedVersion,
          message: `${unfinished} unfinished workflow${unfinished === 1 ? '' : 's'} of '${name}' version ${version} would replay on the changed code, which may break them. Save it as version ${suggestedVersion} instead (the old version stays for them), or save anyway.`,
        },
        compiled,
      };
    }
  }
  const stored: StoredDefinition = { name, version, source, savedAt: options.now, savedBy: options.savedBy };
  await storage.batch([{ type: 'put', key, value: JSON.stringify(stored) }]);
  return { outcome: { ok: true, name, version, created: previous === null }, compiled };
}

export async function deleteDefinition(
  storage: Storage,
  engine: Engine,
  name: string,
  version: number,
): Promise<DeleteOutcome> {
  const key = hostKeys.definition(name, version);
  if ((await storage.get(key)) === null)
    return {
      ok: false,
      reason: 'missing',
      message: `There is no saved definition '${name}' version ${version}.`,
    };
  const unfinished = await countUnfinished(engine, name, version);
  if (unfinished > 0)
    return {
      ok: false,
      reason: 'in-use',
      message: `${unfinished} unfinished workflow${unfinished === 1 ? '' : 's'} still use '${name}' version ${version}; it stays until they finish.`,
    };
  await storage.batch([{ type: 'delete', key }]);
  return { ok: true };
}

/** Rewrites the `version: N` of a definition's source (for the "bump the version" action). */
