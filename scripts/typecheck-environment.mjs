/**
 * What the studio's type checker (src/ui/screens/definitions/typecheck/) checks a definition against, made
 * at build time from this repository's own files, so it never drifts from the code:
 *
 * - `declarationsOf(entry)`: the TypeScript declarations (`.d.ts`) of a public entry point and every module
 *   it reaches, emitted by the TypeScript compiler from the sources — the same declarations the package ships
 *   in lib/ for `shuttle/workflow`. Keyed by path relative to src (`engine/workflow.d.ts`).
 * - `libFiles(names)`: the standard library declarations (`lib.*.d.ts`) for the given `lib` names and every
 *   lib they reference, from the installed `typescript` package. Keyed by file name (`lib.es5.d.ts`).
 *
 * `typecheckEnvironment()` is the Vite plugin that serves both to the page and to Vitest: importing
 * `<entry>.ts?declarations` (e.g. `src/public/workflow.ts?declarations`) yields `{ files }` of that entry's
 * declarations, and `virtual:typescript-libs` yields `{ files, lib }` for the libs the checker uses. In the
 * dev server, an edit of a source the declarations came from rebuilds them.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const srcDir = join(root, 'src');
const libDir = dirname(createRequire(import.meta.url).resolve('typescript/lib/lib.es5.d.ts'));

/**
 * The libs a definition is checked with: the language the engine targets (tsconfig.engine.json's ES2023 and
 * ESNext.Disposable) and the globals of the Web Worker a definition's activities run in (`fetch`, timers,
 * `crypto`, `AbortSignal`).
 */
export const definitionLibs = ['es2023', 'esnext.disposable', 'webworker'];

/** The `.d.ts` files of `entry` (an absolute path under src) and everything it imports, by path under src. */
export function declarationsOf(entry) {
  const program = ts.createProgram({
    rootNames: [entry],
    options: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: definitionLibs.map((name) => `lib.${name}.d.ts`),
      types: [],
      strict: true,
      declaration: true,
      emitDeclarationOnly: true,
      skipLibCheck: true,
      noEmitOnError: false,
    },
  });
  const files = {};
  const sources = [];
  program.emit(undefined, (fileName, text) => {
    files[relative(srcDir, fileName).split('\\').join('/')] = text;
  });
  for (const source of program.getSourceFiles())
    if (!source.isDeclarationFile || !source.fileName.startsWith(libDir)) sources.push(source.fileName);
  if (Object.keys(files).length === 0) throw new Error(`No declarations were emitted for ${entry}.`);
  return { files, sources };
}

/** The `lib.*.d.ts` files for `names` (`es2023`, `webworker`) and every lib they reference, by file name. */
export function libFiles(names) {
  const files = {};
  const visit = (name) => {
    const fileName = `lib.${name.toLowerCase()}.d.ts`;
    if (fileName in files) return;
    const text = readFileSync(join(libDir, fileName), 'utf8');
    files[fileName] = text;
    for (const match of text.matchAll(/\/\/\/\s*<reference\s+lib="([^"]+)"/g)) visit(match[1]);
  };
  names.forEach(visit);
  return files;
}

const librariesId = 'virtual:typescript-libs';

/**
 * Emitted declarations by entry, shared by the page's build and its workers' builds (each worker is a build of
 * its own); forgotten when a source changes.
 */
const emitted = new Map();

/** The Vite plugin: `<entry>.ts?declarations` and `virtual:typescript-libs` (see above). */
export function typecheckEnvironment() {
  return {
    name: 'shuttle-typecheck-environment',
    watchChange() {
      emitted.clear();
    },
    resolveId(id) {
      return id === librariesId ? `\0${librariesId}` : null;
    },
    load(id) {
      if (id === `\0${librariesId}`)
        return `export default ${JSON.stringify({ lib: definitionLibs, files: libFiles(definitionLibs) })};`;
      const [path, query] = id.split('?');
      if (query !== 'declarations') return null;
      if (!path.startsWith(srcDir))
        throw new Error(`${id}: ?declarations is for the repository's own sources (under src/).`);
      if (!emitted.has(path)) emitted.set(path, declarationsOf(path));
      const { files, sources } = emitted.get(path);
      for (const source of sources) this.addWatchFile(source);
      return `export default ${JSON.stringify({ entry: relative(srcDir, path).replace(/\.tsx?$/, '.d.ts'), files })};`;
    },
  };
}
