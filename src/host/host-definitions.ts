/**
 * The host's definitions: the built-in (or deployed) ones it was given, and those authored in the studio
 * and saved (`def:<name>:<version>`), which it compiles, registers, lists, saves and deletes.
 *
 * Guarantees (engine-host.ts says where they fit):
 * - Every saved definition is registered before the engine recovers anything (`load`), one that fails is
 *   reported with its problems, never fatal; one saved later, in any tab, is registered the moment the change
 *   feed reports it, and a full reclaim pass follows so workflows of a type this engine did not know are
 *   claimed at once (passes do not overlap; registrations during one run one more after it).
 * - Authored activities start only when no storage call of this worker is in flight (activity-guard.ts).
 * - Sources are compiled in the compile sandbox before they are saved or checked, when there is one.
 * - A host that does not load authored definitions (a server, by default) refuses to compile, save or delete
 *   one (`AuthoringDisabledError`), and lists the saved ones read-only, unregistered.
 */
import { hostKeys, type AnyWorkflowDefinition, type Engine } from '../engine';
import type { DefinitionInfo, HostWarning, Result } from '../protocol';
import type { Storage } from '../storage/types';
import { startActivitiesWhenQuiet } from './authoring/activity-guard';
import { AuthoredDefinitions, type LoadedDefinition } from './authoring/authored-definitions';
import { compileHere, type CompileReport, type CompileSandbox } from './authoring/compile-sandbox';
import {
  deleteDefinition,
  listStoredDefinitions,
  saveDefinition,
  type BuiltInInfo,
} from './authoring/definition-store';
import type { StorageActivity } from './storage-activity';
import { unavailableError } from './handlers/types';

export type HostDefinitionsDeps = {
  engineId: string;
  now(): number;
  /** The definitions every engine registers (the built-in demos); their names are reserved. */
  workflows: readonly AnyWorkflowDefinition[];
  builtInInfo: ReadonlyMap<string, BuiltInInfo> | undefined;
  /** Whether saved definitions are loaded, compiled and saved here (a tab: yes; a server: only if opted in). */
  authoring: boolean;
  compileSandbox: Pick<CompileSandbox, 'check' | 'dispose'> | undefined;
  warn(warning: HostWarning): void;
  /** Saved definitions were (re)loaded: their keys, for the pages' refetch. */
  loaded(keys: readonly string[]): void;
  /** The engine to reclaim with after new types were registered, or null when it may not (not running). */
  reclaimingEngine(): Engine | null;
};

/** Longest definition source the studio accepts, in characters. */
const maxSourceLength = 200_000;

export class HostDefinitions {
  readonly #deps: HostDefinitionsDeps;
  #storage: Storage | null = null;
  #authored: AuthoredDefinitions | null = null;
  #reclaiming: Promise<void> | null = null;
  #reclaimAgain = false;

  constructor(deps: HostDefinitionsDeps) {
    this.#deps = deps;
  }

  /**
   * Registers every saved definition with `engine`, and from now on each one the change feed reports.
   * Returns the function that stops listening.
   */
  async load(storage: Storage, engine: Engine, activity: StorageActivity | null): Promise<() => void> {
    this.#storage = storage;
    if (!this.#deps.authoring) return () => undefined;
    const authored = new AuthoredDefinitions({
      storage,
      register: (definition) => engine.register(definition),
      reservedNames: this.#reservedNames(),
      ...(activity
        ? { prepare: (definition) => startActivitiesWhenQuiet(definition, (run) => activity.whenQuiet(run)) }
        : {}),
      onRegistered: () => void this.#reclaimNewTypes(),
      onLoaded: (keys) => this.#deps.loaded(keys),
      onProblem: (loaded) => this.#warnDefinition(loaded),
    });
    this.#authored = authored;
    const unwatch = storage.watch
      ? storage.watch(hostKeys.definitionsPrefix, (keys) => {
          authored.reload(keys).catch((error: unknown) => this.#warnDefinitionRead(error));
        })
      : () => undefined;
    await authored.loadAll().catch((error: unknown) => this.#warnDefinitionRead(error));
    return unwatch;
  }

  /** The store the host opened (for listing saved definitions where they are not loaded). */
  attach(storage: Storage): void {
    this.#storage = storage;
  }

  /** Compiles a source without saving it: in the sandbox when there is one. */
  async check(source: string): Promise<CompileReport> {
    this.#assertAuthoring('compile a definition');
    assertSourceSize(source);
    const sandbox = this.#deps.compileSandbox;
    return sandbox ? sandbox.check(source, 'definition.ts') : compileHere(source, 'definition.ts');
  }

  async save(engine: Engine, source: string, force: boolean): Promise<Result<'saveDefinition'>> {
    this.#assertAuthoring('save a definition');
    const checked = await this.check(source);
    if (!checked.ok) return { ok: false, reason: 'invalid', diagnostics: checked.diagnostics };
    const storage = this.#storage;
    if (!storage) throw unavailableError('The database is not open.');
    const now = this.#deps.now();
    const { engineId } = this.#deps;
    const { outcome, compiled } = await saveDefinition(storage, engine, source, {
      savedBy: engineId,
      reservedNames: this.#reservedNames(),
      force,
      now,
    });
    if (outcome.ok && compiled.ok)
      this.#authored?.noteSaved(
        { name: outcome.name, version: outcome.version, source, savedAt: now, savedBy: engineId },
        compiled.definition,
      );
    return outcome;
  }

  async delete(engine: Engine, name: string, version: number): Promise<Result<'deleteDefinition'>> {
    this.#assertAuthoring('delete a definition');
    const storage = this.#storage;
    if (!storage) throw unavailableError('The database is not open.');
    const outcome = await deleteDefinition(storage, engine, name, version);
    if (outcome.ok) await this.#authored?.reload([hostKeys.definition(name, version)]);
    return outcome;
  }

  /**
   * The built-in (or deployed) definitions, then every saved one: as loaded by this engine, or — where saved
   * definitions are not loaded (a server) — as stored, read-only and unregistered.
   */
  async list(): Promise<DefinitionInfo[]> {
    const builtIns = this.#deps.workflows.map((definition): DefinitionInfo => {
      const info = this.#deps.builtInInfo?.get(definition.name);
      return {
        ...describe(definition),
        builtIn: true,
        title: info?.title ?? null,
        childOnly: info?.childOnly ?? false,
        source: info?.source ?? null,
        savedAt: null,
        savedBy: null,
        registered: true,
        loadProblems: null,
      };
    });
    if (!this.#deps.authoring) {
      const stored = this.#storage ? await listStoredDefinitions(this.#storage) : [];
      return [
        ...builtIns,
        ...stored.map((definition): DefinitionInfo => ({
          ...unknownShape(definition.name, definition.version),
          builtIn: false,
          title: null,
          childOnly: false,
          source: definition.source,
          savedAt: definition.savedAt,
          savedBy: definition.savedBy,
          registered: false,
          loadProblems: null,
        })),
      ];
    }
    const authored = (this.#authored?.list() ?? []).map((loaded): DefinitionInfo => ({
      ...(loaded.definition ? describe(loaded.definition) : unknownShape(loaded.name, loaded.version)),
      builtIn: false,
      title: null,
      childOnly: false,
      source: loaded.stored?.source ?? null,
      savedAt: loaded.stored?.savedAt ?? null,
      savedBy: loaded.stored?.savedBy ?? null,
      registered: loaded.definition !== null,
      loadProblems: loaded.problems,
    }));
    return [...builtIns, ...authored];
  }

  #reservedNames(): Set<string> {
    return new Set(this.#deps.workflows.map((definition) => definition.name));
  }

  /**
   * New definitions were registered: claim the workflows of those types that nobody runs (a full reclaim
   * pass). Passes do not overlap; registrations during one run one more pass after it.
   */
  async #reclaimNewTypes(): Promise<void> {
    if (this.#reclaiming) {
      this.#reclaimAgain = true;
      return this.#reclaiming;
    }
    const run = async () => {
      do {
        this.#reclaimAgain = false;
        const engine = this.#deps.reclaimingEngine();
        if (!engine) return;
        await engine.recoverAll().catch(() => undefined); // stopping, or storage trouble: the passes retry
      } while (this.#reclaimAgain);
    };
    this.#reclaiming = run().finally(() => {
      this.#reclaiming = null;
    });
    return this.#reclaiming;
  }

  /** Refuses to change definitions from a page of a host that does not load them (a server). */
  #assertAuthoring(what: string): void {
    if (this.#deps.authoring) return;
    throw Object.assign(
      new Error(
        `This studio is connected to a server, which does not load definitions sent from the browser: it cannot ${what}. Deploy definitions with the worker processes (shuttle worker --workflows <file>), or start a worker with --load-studio-definitions to run definitions saved in the studio.`,
      ),
      { name: 'AuthoringDisabledError' },
    );
  }

  #warnDefinition(loaded: LoadedDefinition): void {
    const first = loaded.problems?.[0];
    this.#deps.warn({
      name: 'DefinitionWarning',
      message: `The saved definition '${loaded.name}' version ${loaded.version} could not be loaded${first ? ` (line ${first.line}, column ${first.column}): ${first.message}` : '.'}`,
    });
  }

  #warnDefinitionRead(error: unknown): void {
    this.#deps.warn({
      name: 'DefinitionWarning',
      message: `Could not read the saved definitions: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
}

function describe(definition: AnyWorkflowDefinition) {
  return {
    name: definition.name,
    version: definition.version,
    description: definition.description ?? null,
    sampleInput: definition.sampleInput ?? null,
    queries: Object.keys(definition.queries ?? {}),
    updates: Object.keys(definition.updates ?? {}),
  };
}

/** What the studio shows of a definition nobody here could load: its name and version. */
function unknownShape(name: string, version: number) {
  return { name, version, description: null, sampleInput: null, queries: [], updates: [] };
}

function assertSourceSize(source: string): void {
  if (source.length > maxSourceLength)
    throw Object.assign(
      new Error(
        `The definition is ${source.length.toLocaleString('en')} characters long; the studio accepts at most ${maxSourceLength.toLocaleString('en')}. Split it, or move data out of the source.`,
      ),
      { name: 'PayloadTooLargeError' },
    );
}
