/**
 * Compiling and loading workflow definitions authored in the studio, inside the worker.
 *
 * A definition is a TypeScript module whose default export is `defineWorkflow({ … })`. `compileDefinition`
 * turns it into JavaScript with sucrase (loaded lazily, the first time a definition is compiled), evaluates
 * it, and checks its default export. Sucrase keeps line numbers, so every problem — a syntax error, an
 * exception while the module loads, a missing or wrong default export — is reported with the line and
 * column of the source, for the editor to show inline.
 *
 * What the module may use: it can import only the engine's public workflow API, as `'shuttle'` (the built-in
 * demos' `'../engine'` is accepted too, so their source compiles as it is; type-only imports vanish at
 * compile time). The worker's own capabilities (`self`, `postMessage`, `importScripts`, `indexedDB`,
 * `caches`) are shadowed so a definition cannot talk to the page or open the engine's database. Standard
 * JavaScript, `fetch` and timers stay available: activities need them. This keeps definitions honest; it is
 * not a security sandbox (code that tries hard can still reach the global object), and the studio runs
 * only code its own user wrote.
 */
import {
  ActivityFailedError,
  ActivityTimeoutError,
  CancelledError,
  ChildWorkflowFailedError,
  defineWorkflow,
  delay,
  type AnyWorkflowDefinition,
} from '../../engine';

/** One problem found in a definition's source. Lines and columns are 1-based. */
export type Diagnostic = {
  kind: 'syntax' | 'evaluation' | 'export';
  message: string;
  line: number;
  column: number;
};

export type CompileResult =
  { ok: true; definition: AnyWorkflowDefinition } | { ok: false; diagnostics: Diagnostic[] };

/** What a definition module gets when it imports `'shuttle'`. */
export const workflowModuleApi = Object.freeze({
  defineWorkflow,
  delay,
  CancelledError,
  ActivityFailedError,
  ActivityTimeoutError,
  ChildWorkflowFailedError,
});

const importable = new Set(['shuttle', '../engine']);
const shadowed = ['self', 'postMessage', 'importScripts', 'indexedDB', 'caches', 'close'] as const;
/** `new Function` puts its parameter list and a line break before the body. */
const functionHeaderLines = 2;

type Transform = (
  code: string,
  options: { transforms: string[]; filePath: string; production: boolean },
) => { code: string };
let sucrase: Promise<Transform> | null = null;

function loadSucrase(): Promise<Transform> {
  sucrase ??= import('sucrase').then((module) => module.transform as Transform);
  return sucrase;
}

/** Line of the first `export default` (where a bad default export is reported), else 1. */
function exportLine(source: string): number {
  const index = source.search(/export\s+default/);
  return index < 0 ? 1 : source.slice(0, index).split('\n').length;
}

/** The source position of an error thrown by code evaluated from `fileName`, read from its stack. */
function positionOf(error: unknown, fileName: string): { line: number; column: number } {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const escaped = fileName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
  if (!match) return { line: 1, column: 1 };
  return { line: Math.max(1, Number(match[1]) - functionHeaderLines), column: Number(match[2]) };
}

/**
 * Compiles and evaluates `source`. Never throws: every problem comes back as a diagnostic.
 * @param fileName a name for stack traces and messages, e.g. `order-v2.ts`
 */
export async function compileDefinition(source: string, fileName: string): Promise<CompileResult> {
  if (typeof source !== 'string' || source.trim() === '')
    return {
      ok: false,
      diagnostics: [
        {
          kind: 'export',
          message: 'The definition is empty: write a module whose default export is defineWorkflow({ … }).',
          line: 1,
          column: 1,
        },
      ],
    };
  let code: string;
  try {
    const transform = await loadSucrase();
    code = transform(source, {
      transforms: ['typescript', 'imports'],
      filePath: fileName,
      production: true,
    }).code;
  } catch (error) {
    const loc = (error as { loc?: { line: number; column: number } }).loc;
    const message =
      error instanceof Error ? error.message.replace(/^Error transforming [^:]*: /, '') : String(error);
    return {
      ok: false,
      diagnostics: [
        {
          kind: 'syntax',
          message: `Syntax error: ${message}`,
          line: loc?.line ?? 1,
          column: loc?.column ?? 1,
        },
      ],
    };
  }
  const module = { exports: {} as Record<string, unknown> };
  const require = (specifier: string) => {
    if (importable.has(specifier)) return workflowModuleApi;
    throw new Error(
      `A workflow definition can import only 'shuttle' (the engine's workflow API), not '${specifier}'.`,
    );
  };
  try {
    const evaluate = new Function(
      'require',
      'exports',
      'module',
      ...shadowed,
      `${code}\n//# sourceURL=${fileName}`,
    ) as (...args: unknown[]) => void;
    evaluate(require, module.exports, module, ...shadowed.map(() => undefined));
  } catch (error) {
    const { line, column } = positionOf(error, fileName);
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return {
      ok: false,
      diagnostics: [
        { kind: 'evaluation', message: `The module threw while loading: ${message}`, line, column },
      ],
    };
  }
  const exported = module.exports.default;
  if (exported === undefined)
    return {
      ok: false,
      diagnostics: [
        {
          kind: 'export',
          message:
            'The module has no default export. End it with: export default defineWorkflow({ name, version, *run(ctx, input) { … } });',
          line: exportLine(source),
          column: 1,
        },
      ],
    };
  try {
    // defineWorkflow already validated it; anything else is checked the same way.
    const definition = defineWorkflow(exported as AnyWorkflowDefinition);
    return { ok: true, definition };
  } catch (error) {
    return {
      ok: false,
      diagnostics: [
        {
          kind: 'export',
          message: `The default export is not a workflow definition: ${error instanceof Error ? error.message : String(error)}`,
          line: exportLine(source),
          column: 1,
        },
      ],
    };
  }
}
