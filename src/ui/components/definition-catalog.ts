/**
 * The definitions the worker reports, arranged for the studio: saved definitions grouped by name (newest
 * version first), the built-in demos, what can be started (one entry per name: its newest registered
 * version, which is what `start` runs), and lookups by name and version. Pure functions over
 * `DefinitionInfo[]`.
 */
import type { DefinitionInfo } from '../../public/browser';

/** Every saved version of one name, newest first. */
export type SavedGroup = { name: string; versions: DefinitionInfo[] };

export function groupDefinitions(definitions: readonly DefinitionInfo[]): {
  saved: SavedGroup[];
  builtIns: DefinitionInfo[];
} {
  const byName = new Map<string, DefinitionInfo[]>();
  for (const definition of definitions) {
    if (definition.builtIn) continue;
    const versions = byName.get(definition.name) ?? [];
    versions.push(definition);
    byName.set(definition.name, versions);
  }
  const saved = [...byName.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, versions]) => ({ name, versions: versions.sort((a, b) => b.version - a.version) }));
  return { saved, builtIns: definitions.filter((definition) => definition.builtIn) };
}

/**
 * The definition named `name`: the built-in of that name, or the saved `version` (the newest saved one
 * when `version` is null). Null when there is none.
 */
export function findDefinition(
  definitions: readonly DefinitionInfo[],
  name: string,
  version: number | null,
): DefinitionInfo | null {
  const matching = definitions.filter((definition) => definition.name === name);
  if (version !== null) return matching.find((definition) => definition.version === version) ?? null;
  return matching.reduce<DefinitionInfo | null>(
    (best, definition) => (!best || definition.version > best.version ? definition : best),
    null,
  );
}

/**
 * What can be started: registered definitions, one per name (its newest registered version), built-ins
 * first in their own order, then saved ones by name.
 */
export function startableDefinitions(definitions: readonly DefinitionInfo[]): DefinitionInfo[] {
  const newest = new Map<string, DefinitionInfo>();
  for (const definition of definitions) {
    if (!definition.registered) continue;
    const current = newest.get(definition.name);
    if (!current || definition.version > current.version) newest.set(definition.name, definition);
  }
  const all = [...newest.values()];
  return [
    ...all.filter((definition) => definition.builtIn),
    ...all.filter((definition) => !definition.builtIn).sort((a, b) => a.name.localeCompare(b.name)),
  ];
}

/** Every name in use, built-in or saved. */
export function takenNames(definitions: readonly DefinitionInfo[]): Set<string> {
  return new Set(definitions.map((definition) => definition.name));
}

/** One choice of the list's Type filter: a workflow type and the versions of it that are defined. */
export type TypeChoice = { name: string; versions: number[]; label: string };

/**
 * The Type filter's choices: one per name (the list filters by type, whatever the version), built-ins
 * first in their own order, then saved ones by name; a name defined in several versions says which
 * (`typo · v1, v2`), so two entries never read the same.
 */
export function typeChoices(definitions: readonly DefinitionInfo[]): TypeChoice[] {
  const byName = new Map<string, { builtIn: boolean; versions: Set<number> }>();
  for (const definition of definitions) {
    const entry = byName.get(definition.name) ?? { builtIn: definition.builtIn, versions: new Set() };
    entry.versions.add(definition.version);
    byName.set(definition.name, entry);
  }
  const choices = [...byName.entries()].map(([name, entry]) => {
    const versions = [...entry.versions].sort((a, b) => a - b);
    return {
      name,
      builtIn: entry.builtIn,
      versions,
      label: versions.length > 1 ? `${name} · ${versions.map((version) => `v${version}`).join(', ')}` : name,
    };
  });
  return [
    ...choices.filter((choice) => choice.builtIn),
    ...choices.filter((choice) => !choice.builtIn).sort((a, b) => a.name.localeCompare(b.name)),
  ].map(({ name, versions, label }) => ({ name, versions, label }));
}
