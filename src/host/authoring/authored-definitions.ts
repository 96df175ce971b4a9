/**
 * The authored definitions one engine knows: every `def:<name>:<version>` of the store, compiled and
 * registered with the engine — all of them before the engine recovers anything at start-up (so a workflow
 * of an authored type is never claimed by an engine that cannot run it), and each one again the moment the
 * change feed reports it saved, by this tab or any other.
 *
 * Guarantees:
 * - Loads run one at a time, in the order asked for, so an older save of a key never overtakes a newer one;
 *   a record whose source this engine already registered is not compiled again.
 * - A record that does not compile, cannot be read, or takes a built-in's name is kept with its problems
 *   (for the studio to show, with line and column); it is not registered, and nothing else is affected.
 * - A version once registered stays registered while the engine lives, even if its record is deleted or
 *   later saved broken: workflows that started on it keep running. A changed body that compiles replaces it.
 * - After a load that registered something, `onRegistered` is called: the host then looks for workflows of
 *   the types it now knows (a reclaim pass), so they are claimed at once.
 */
import { hostKeys, type AnyWorkflowDefinition } from '../../engine';
import type { Storage } from '../../storage';
import { compileDefinition, type Diagnostic } from './compile';
import { decodeStoredDefinition, type StoredDefinition } from './definition-store';

/** One `def:` record as this engine loaded it. */
export type LoadedDefinition = {
  key: string;
  name: string;
  version: number;
  /** The stored record; null when it could not be read. */
  stored: StoredDefinition | null;
  /** The registered definition (possibly of an earlier save, when the latest one is broken), or null. */
  definition: AnyWorkflowDefinition | null;
  /** Why the latest record could not be loaded; null when it loaded. */
  problems: Diagnostic[] | null;
};

export type AuthoredDefinitionsOptions = {
  storage: Storage;
  /** Registers a definition with the engine (same name and version replaces). */
  register(definition: AnyWorkflowDefinition): void;
  /** Names authored definitions may not take (the built-ins'). */
  reservedNames: ReadonlySet<string>;
  /** Wraps each compiled definition before it is registered (the activity guard). Default: none. */
  prepare?: (definition: AnyWorkflowDefinition) => AnyWorkflowDefinition;
  /** Called after a load registered at least one definition. */
  onRegistered?: () => void;
  /**
   * Called with the keys of every load once it is done (registered or not): what the page sees of them has
   * changed now, which may be after it refetched for the change feed's notice of the same records.
   */
  onLoaded?: (keys: readonly string[]) => void;
  /** Called for every record that could not be loaded. */
  onProblem?: (loaded: LoadedDefinition) => void;
};

export class AuthoredDefinitions {
  readonly #options: AuthoredDefinitionsOptions;
  readonly #loaded = new Map<string, LoadedDefinition>();
  #queue: Promise<void> = Promise.resolve();

  constructor(options: AuthoredDefinitionsOptions) {
    this.#options = options;
  }

  /** Every loaded record, by name then version. */
  list(): LoadedDefinition[] {
    return [...this.#loaded.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version - b.version);
  }

  /** Loads every `def:` record of the store. */
  loadAll(): Promise<void> {
    return this.#enqueue(async () => {
      const entries = await this.#options.storage.scan(hostKeys.definitionsPrefix);
      const registered = await this.#loadEntries(entries.map(({ key, value }) => ({ key, raw: value })));
      return { keys: entries.map(({ key }) => key), registered };
    });
  }

  /** Loads the records the change feed reported (a deleted one is forgotten; its registration stays). */
  reload(keys: readonly string[]): Promise<void> {
    const definitionKeys = [...new Set(keys)].filter((key) => key.startsWith(hostKeys.definitionsPrefix));
    if (definitionKeys.length === 0) return this.#queue;
    return this.#enqueue(async () => {
      const values = await this.#options.storage.getMany(definitionKeys);
      const present: { key: string; raw: string }[] = [];
      definitionKeys.forEach((key, index) => {
        const raw = values[index];
        if (raw === null || raw === undefined) this.#loaded.delete(key);
        else present.push({ key, raw });
      });
      return { keys: definitionKeys, registered: await this.#loadEntries(present) };
    });
  }

  /**
   * Registers a definition this engine compiled itself while saving it, so it can be started here at once;
   * the change feed's report of the same record then finds nothing new to do.
   */
  noteSaved(stored: StoredDefinition, definition: AnyWorkflowDefinition): void {
    const key = hostKeys.definition(stored.name, stored.version);
    const prepared = this.#prepare(definition);
    this.#options.register(prepared);
    this.#loaded.set(key, {
      key,
      name: stored.name,
      version: stored.version,
      stored,
      definition: prepared,
      problems: null,
    });
  }

  #enqueue(load: () => Promise<{ keys: string[]; registered: boolean }>): Promise<void> {
    const next = this.#queue.then(load).then(({ keys, registered }) => {
      if (keys.length > 0) this.#options.onLoaded?.(keys);
      if (registered) this.#options.onRegistered?.();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Loads `entries`; resolves with whether anything was registered. */
  async #loadEntries(entries: readonly { key: string; raw: string }[]): Promise<boolean> {
    let registered = false;
    for (const { key, raw } of entries) {
      const parsed = hostKeys.parseDefinition(key);
      if (!parsed) continue;
      const previous = this.#loaded.get(key);
      const stored = decodeStoredDefinition(key, raw);
      if (stored && previous?.stored?.source === stored.source && previous.problems === null) {
        this.#loaded.set(key, { ...previous, stored });
        continue;
      }
      const loaded = await this.#load(key, parsed, stored, previous?.definition ?? null);
      this.#loaded.set(key, loaded);
      if (loaded.problems) this.#options.onProblem?.(loaded);
      else registered = true;
    }
    return registered;
  }

  async #load(
    key: string,
    { name, version }: { name: string; version: number },
    stored: StoredDefinition | null,
    registered: AnyWorkflowDefinition | null,
  ): Promise<LoadedDefinition> {
    const failed = (message: string, line = 1, column = 1): LoadedDefinition => ({
      key,
      name,
      version,
      stored,
      definition: registered,
      problems: [{ kind: 'export', message, line, column }],
    });
    if (!stored) return failed(`The stored record ${key} could not be read (it is not a saved definition).`);
    if (this.#options.reservedNames.has(name))
      return failed(`'${name}' is the name of a built-in demo; this saved definition is ignored.`);
    const compiled = await compileDefinition(stored.source, `${name}.ts`);
    if (!compiled.ok)
      return { key, name, version, stored, definition: registered, problems: compiled.diagnostics };
    const { definition } = compiled;
    if (definition.name !== name || definition.version !== version)
      return failed(
        `The source declares '${definition.name}' version ${definition.version}, but it is stored as '${name}' version ${version}.`,
      );
    const prepared = this.#prepare(definition);
    try {
      this.#options.register(prepared);
    } catch (error) {
      return failed(`The engine refused it: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { key, name, version, stored, definition: prepared, problems: null };
  }

  #prepare(definition: AnyWorkflowDefinition): AnyWorkflowDefinition {
    return this.#options.prepare ? this.#options.prepare(definition) : definition;
  }
}
