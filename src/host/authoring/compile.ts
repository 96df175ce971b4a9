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
 *
 * Determinism is checked twice (see determinism.ts and determinism-trap.ts):
 * - statically, before the module is evaluated: the source with its types removed is parsed with acorn and
 *   every use of time, randomness, timers or I/O in a workflow body outside an activity is reported, kind
 *   `'determinism'`, at the author's line and column (mapped through sucrase's source map);
 * - at run time: the module sees guarded `Date`, `Math`, `crypto`, timers, `fetch`…, which throw
 *   `NonDeterministicCallError` while the body runs (activities get the real behaviour), so what the static
 *   check cannot see (a module-level helper the body calls) still never runs silently.
 * Acorn is loaded lazily with sucrase; neither is in the page's bundle.
 */
import type { Diagnostic } from '../../protocol/definitions';
import type { Options as ParseOptions, Program } from 'acorn';
import { defineWorkflow, type AnyWorkflowDefinition, type QueueDefinition } from '../../engine';
import { isQueueDefinition } from '../../engine/queues/queue-options';
import * as workflowApi from '../../engine/workflow-api';
import { findNonDeterministicCode, topLevelNames, type EstreeNode } from './determinism';
import { barredInBody, guardedGlobals, runBodyInSteps } from './determinism-trap';
import { SourcePositions } from './source-positions';
import { registerDefinitionSource } from './stack-map';

/** One problem found in a definition's source. Lines and columns are 1-based. */
export type { Diagnostic };

export type CompileResult =
  { ok: true; definition: AnyWorkflowDefinition } | { ok: false; diagnostics: Diagnostic[] };

/**
 * What a definition module gets when it imports `'shuttle'` or `'shuttle/workflow'`: the workflow API, the
 * one list the package's `shuttle/workflow` entry exports (src/engine/workflow-api.ts).
 */
export const workflowModuleApi = Object.freeze({ ...workflowApi });

const importable = new Set(['shuttle', 'shuttle/workflow', '../engine']);
const shadowed = ['self', 'postMessage', 'importScripts', 'indexedDB', 'caches', 'close'] as const;
/**
 * The module is evaluated as `(function (require, exports, …) {<compiled code>\n})`, its header on the code's
 * first line, so a line of the evaluated code is the same line of the compiled code — which sucrase keeps on
 * the author's line: stack traces of run-time errors name the author's lines. (`new Function` put two header
 * lines before the body, and a workflow that failed at line 7 said line 9.) Only line 1's columns are shifted,
 * by the header's length.
 */
function moduleFunctionHeader(parameters: readonly string[]): string {
  return `(function (${parameters.join(', ')}) {`;
}

type Transform = (
  code: string,
  options: {
    transforms: string[];
    filePath: string;
    production: boolean;
    sourceMapOptions?: { compiledFilename: string };
  },
) => { code: string; sourceMap?: { mappings: string } };
type Parse = (code: string, options: ParseOptions) => Program;
type Compiler = { transform: Transform; parse: Parse };
let compiler: Promise<Compiler> | null = null;

function loadCompiler(): Promise<Compiler> {
  compiler ??= Promise.all([import('sucrase'), import('acorn')]).then(([sucrase, acorn]) => ({
    transform: sucrase.transform as Transform,
    parse: acorn.parse,
  }));
  return compiler;
}

/** Line of the first `export default` (where a bad default export is reported), else 1. */
function exportLine(source: string): number {
  const index = source.search(/export\s+default/);
  return index < 0 ? 1 : source.slice(0, index).split('\n').length;
}

/**
 * The source position of the innermost frame of `fileName` in the error's stack, if there is one: the
 * position in the evaluated code, mapped back to the author's source through `positions`.
 */
function findPosition(
  error: unknown,
  fileName: string,
  positions: SourcePositions,
  headerLength: number,
): { line: number; column: number } | null {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const escaped = fileName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(stack);
  if (!match) return null;
  const compiledLine = Math.max(1, Number(match[1]));
  const { line, column } = positions.original(
    compiledLine,
    Math.max(0, Number(match[2]) - 1 - (compiledLine === 1 ? headerLength : 0)),
  );
  return { line, column: column + 1 };
}

/**
 * The non-deterministic code of the source's workflow bodies (determinism.ts), at the author's lines and
 * columns, and the names the module declares at its top level (null when unknown). A source acorn cannot
 * parse after sucrase removed its types (syntax newer than acorn knows) is not checked here; the runtime
 * guards still apply to it.
 */
function checkDeterminism(
  source: string,
  fileName: string,
  { transform, parse }: Compiler,
): { diagnostics: Diagnostic[]; declared: ReadonlySet<string> | null } {
  let program: Program;
  let positions: SourcePositions;
  try {
    const stripped = transform(source, {
      transforms: ['typescript'],
      filePath: fileName,
      production: true,
      sourceMapOptions: { compiledFilename: fileName },
    });
    program = parse(stripped.code, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
    positions = new SourcePositions(stripped.sourceMap?.mappings ?? '');
  } catch {
    return { diagnostics: [], declared: null };
  }
  const tree = program as unknown as EstreeNode;
  const diagnostics = findNonDeterministicCode(tree).map((finding): Diagnostic => {
    const { line, column } = positions.original(finding.line, finding.column);
    return { kind: 'determinism', message: finding.message, line, column: column + 1 };
  });
  return { diagnostics, declared: topLevelNames(tree) };
}

/**
 * Compiles and evaluates `source`. Never throws: every problem comes back as a diagnostic.
 * @param fileName a name for stack traces and messages, e.g. `order-v2.ts` (stacks name it through the engine's
 *   `mapStack`: stack-map.ts)
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
  const evaluated = await evaluateModule(source, fileName);
  if (!evaluated.ok) return evaluated;
  const exported = evaluated.exports.default;
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
    return { ok: true, definition: runBodyInSteps(definition) };
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

/**
 * The outcome of compiling a definition file that may export several workflows (a server deploys those), and
 * the queues it declares (`defineQueue`) beside them.
 */
export type CompileModuleResult =
  | { ok: true; definitions: AnyWorkflowDefinition[]; queues: QueueDefinition[] }
  | { ok: false; diagnostics: Diagnostic[] };

/**
 * Compiles and evaluates a definition file exactly as the studio does (same imports, same determinism checks)
 * and returns every workflow definition it exports, the default and named ones, and every queue it exports
 * (`export const payments = defineQueue(…)`). A file that exports neither is a diagnostic of kind `export`.
 */
export async function compileModule(source: string, fileName: string): Promise<CompileModuleResult> {
  const evaluated = await evaluateModule(source, fileName);
  if (!evaluated.ok) return evaluated;
  const definitions: AnyWorkflowDefinition[] = [];
  const queues: QueueDefinition[] = [];
  for (const value of new Set(Object.values(evaluated.exports)))
    if (isWorkflowDefinition(value)) definitions.push(runBodyInSteps(defineWorkflow(value)));
    else if (isQueueDefinition(value)) queues.push(value);
  if (definitions.length > 0 || queues.length > 0) return { ok: true, definitions, queues };
  return {
    ok: false,
    diagnostics: [
      {
        kind: 'export',
        message:
          'The module exports no workflow definition. Export one or more: export default defineWorkflow({ … }) or export const name = defineWorkflow({ … }).',
        line: exportLine(source),
        column: 1,
      },
    ],
  };
}

function isWorkflowDefinition(value: unknown): value is AnyWorkflowDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; version?: unknown; run?: unknown };
  return (
    typeof candidate.name === 'string' &&
    typeof candidate.version === 'number' &&
    typeof candidate.run === 'function'
  );
}

/** Compiles `source` with sucrase, checks determinism, and evaluates it; its exports, or diagnostics. */
async function evaluateModule(
  source: string,
  fileName: string,
): Promise<{ ok: true; exports: Record<string, unknown> } | { ok: false; diagnostics: Diagnostic[] }> {
  let code: string;
  let positions: SourcePositions;
  let loaded: Compiler;
  try {
    loaded = await loadCompiler();
    const compiled = loaded.transform(source, {
      transforms: ['typescript', 'imports'],
      filePath: fileName,
      production: true,
      sourceMapOptions: { compiledFilename: fileName },
    });
    code = compiled.code;
    positions = new SourcePositions(compiled.sourceMap?.mappings ?? '');
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
  const determinism = checkDeterminism(source, fileName, loaded);
  if (determinism.diagnostics.length > 0) return { ok: false, diagnostics: determinism.diagnostics };
  const module = { exports: {} as Record<string, unknown> };
  // The guarded globals' names are parameters of the module's function; `locate` needs the header's length
  // and the module's source URL (stack-map.ts: one per evaluation, mapped back to `fileName` in stacks).
  let headerLength = 0;
  let sourceUrl = fileName;
  const locate = (error: Error) => findPosition(error, sourceUrl, positions, headerLength);
  // A name the module declares itself is its own (and could not also be a parameter of its function).
  const guarded = Object.entries(guardedGlobals(fileName, locate)).filter(
    ([name]) => !determinism.declared?.has(name),
  );
  const header = moduleFunctionHeader([
    'require',
    'exports',
    'module',
    ...shadowed,
    ...guarded.map(([name]) => name),
  ]);
  headerLength = header.length;
  sourceUrl = registerDefinitionSource(fileName, positions, headerLength);
  const require = (specifier: string) => {
    barredInBody('require()', 'require', fileName, locate);
    if (importable.has(specifier)) return workflowModuleApi;
    throw new Error(
      `A workflow definition can import only 'shuttle' or 'shuttle/workflow' (the workflow API), not '${specifier}'.`,
    );
  };
  try {
    // Indirect eval: the code sees the global scope only, as with `new Function`.
    const evaluate = (0, eval)(`${header}${code}\n})\n//# sourceURL=${sourceUrl}`) as (
      ...args: unknown[]
    ) => void;
    evaluate(
      require,
      module.exports,
      module,
      ...shadowed.map(() => undefined),
      ...guarded.map(([, value]) => value),
    );
  } catch (error) {
    const { line, column } = locate(error as Error) ?? { line: 1, column: 1 };
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return {
      ok: false,
      diagnostics: [
        { kind: 'evaluation', message: `The module threw while loading: ${message}`, line, column },
      ],
    };
  }
  return { ok: true, exports: module.exports };
}
