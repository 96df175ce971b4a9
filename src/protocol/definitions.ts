/**
 * The definitions domain of the wire contract: the workflow definitions a studio lists, compiles, saves and
 * deletes (authored in the studio, or built in), and what each of those answers.
 */
import { method, type Empty } from './declare';

/**
 * One problem of a definition's source, at a 1-based line and column: a syntax error, an exception while the
 * module loaded, a missing or wrong default export, or a determinism rule broken.
 */
export type Diagnostic = {
  kind: 'syntax' | 'evaluation' | 'export' | 'determinism';
  message: string;
  line: number;
  column: number;
};

/** The same, as the studio names it. */
export type DefinitionDiagnostic = Diagnostic;

/** What compiling a source (without saving it) found: the name and version it declares, or its problems. */
export type CompileReport =
  { ok: true; name: string; version: number } | { ok: false; diagnostics: Diagnostic[] };

/** What saving a definition did. */
export type SaveOutcome =
  | { ok: true; name: string; version: number; created: boolean }
  | { ok: false; reason: 'invalid'; diagnostics: Diagnostic[] }
  | { ok: false; reason: 'reserved'; name: string; message: string }
  | {
      ok: false;
      reason: 'version-in-use';
      name: string;
      version: number;
      unfinished: number;
      suggestedVersion: number;
      message: string;
    };

/** What deleting a saved definition did. */
export type DeleteOutcome = { ok: true } | { ok: false; reason: 'in-use' | 'missing'; message: string };

/**
 * A workflow definition as the studio shows it: a built-in demo, or one authored in the studio and saved
 * (`def:<name>:<version>`). Each saved version is listed on its own.
 */
export type DefinitionInfo = {
  name: string;
  version: number;
  description: string | null;
  /** Prefilled input of the start dialog; null when the definition has none. */
  sampleInput: unknown;
  queries: string[];
  updates: string[];
  /** A built-in demo: read-only in the editor, copyable as a template. */
  builtIn: boolean;
  /** A short human title (the built-in demos'), or null. */
  title: string | null;
  /** Normally started by a parent workflow, not by people. */
  childOnly: boolean;
  /** The TypeScript module, as shipped (built-ins) or as saved; null when it is not known. */
  source: string | null;
  /** When it was saved (epoch ms); null for built-ins. */
  savedAt: number | null;
  /** The engine that saved it; null for built-ins. */
  savedBy: string | null;
  /** Whether this tab's engine has registered it: only a registered definition can be started here. */
  registered: boolean;
  /**
   * Why this tab's engine could not load the saved source (line and column of each problem); null when it
   * loaded. An older body of the same version may still be registered.
   */
  loadProblems: DefinitionDiagnostic[] | null;
};

export const definitionMethods = {
  /** Built-in and saved definitions, with their sources; see `DefinitionInfo`. */
  definitions: method<Empty, DefinitionInfo[]>({}),
  /**
   * Compiles and loads a definition's source (in a throwaway worker, so an endless loop cannot stall the
   * engine) without saving it: the name and version it declares, or its diagnostics.
   */
  compileDefinition: method<{ source: string }, CompileReport>({ source: 'string' }),
  /**
   * Saves a definition as `def:<name>:<version>`; every tab's engine registers it at once. Refused (nothing
   * written) when it does not compile (`invalid`), takes a built-in's name (`reserved`), or changes the body
   * of a version that unfinished workflows use (`version-in-use`, with a `suggestedVersion`) unless `force`.
   */
  saveDefinition: method<{ source: string; force?: boolean }, SaveOutcome>({
    source: 'string',
    force: 'boolean?',
  }),
  /** Deletes a saved version; refused (`in-use`) while unfinished workflows use it. */
  deleteDefinition: method<{ name: string; version: number }, DeleteOutcome>({
    name: 'string',
    version: 'integer',
  }),
} as const;
