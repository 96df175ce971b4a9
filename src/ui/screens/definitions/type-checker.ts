/**
 * The definition editor's type checker: the TypeScript language service over a virtual file system that
 * holds the authored file, the standard library declarations and the declarations of the workflow API. It
 * runs in its own Web Worker (typecheck.worker.ts); this module is the checking itself, free of the worker,
 * so a test runs it in Node.
 *
 * - `'shuttle'` and `'shuttle/workflow'` resolve to the declarations of the package's `shuttle/workflow`
 *   entry (src/public/workflow.ts), emitted by the TypeScript compiler from the engine's sources at build time
 *   (scripts/typecheck-environment.mjs): what a definition gets when it imports them at run time
 *   (src/host/authoring/compile.ts), and what the package ships. The built-in demos' `'../engine'` resolves
 *   there too, as it does when they are compiled.
 * - Lines and columns are 1-based, as everywhere in the editor.
 */
import ts from 'typescript';

/** The files a checker works with: the standard library and the workflow API's declarations. */
export type CheckerEnvironment = {
  /** `lib` names (`es2023`, `webworker`) and the `lib.*.d.ts` files they need, by file name. */
  libs: { lib: readonly string[]; files: Readonly<Record<string, string>> };
  /** The `shuttle/workflow` entry's declarations: the entry's path and every file, by path. */
  declarations: { entry: string; files: Readonly<Record<string, string>> };
};

/** A problem TypeScript finds: `syntax` (the parser's) or `type` (the checker's). */
export type TypeProblem = {
  kind: 'syntax' | 'type';
  message: string;
  line: number;
  column: number;
  /** Where the problem's text ends (exclusive). */
  endLine: number;
  endColumn: number;
  /** TypeScript's error number (2322: a type that is not assignable). */
  code: number;
};

export type QuickInfo = { from: number; to: number; type: string; doc: string };

export type CompletionItem = {
  name: string;
  kind: string;
  sortText: string;
  insertText?: string;
  source?: string;
  data?: ts.CompletionEntryData;
};

export type Completions = { from: number; to: number; items: CompletionItem[] };

export type CompletionDetail = { signature: string; doc: string };

/** The module names a definition may import the workflow API by (src/host/authoring/compile.ts). */
const workflowModules = new Set(['shuttle', 'shuttle/workflow', '../engine']);

const libFolder = '/lib/';
const declarationFolder = '/node_modules/shuttle/';
/** Where the authored file lives, unless a check names another file. */
export const definitionFile = '/src/definitions/definition.ts';

/**
 * Where a built-in demo's source lives, beside the authored file: a copy of a demo that imports types from
 * another (`import type { ShipmentInput } from './shipment'`, kept by Copy as template) finds them there.
 * Type-only imports vanish when a definition is compiled, so these are the types it runs with.
 */
export function siblingFile(name: string): string {
  return `/src/definitions/${name}.ts`;
}

export const compilerOptions: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  isolatedModules: true,
  skipLibCheck: true,
  noEmit: true,
  types: [],
};

export class TypeChecker {
  private readonly files = new Map<string, { text: string; version: number }>();
  private readonly service: ts.LanguageService;
  private readonly entry: string;

  constructor(environment: CheckerEnvironment) {
    for (const [name, text] of Object.entries(environment.libs.files))
      this.files.set(libFolder + name, { text, version: 0 });
    for (const [path, text] of Object.entries(environment.declarations.files))
      this.files.set(declarationFolder + path, { text, version: 0 });
    this.entry = declarationFolder + environment.declarations.entry;
    if (!this.files.has(this.entry))
      throw new Error(
        `The workflow API's declarations have no entry ${environment.declarations.entry}: rebuild the studio.`,
      );
    const options = { ...compilerOptions, lib: environment.libs.lib.map((name) => `lib.${name}.d.ts`) };
    const files = this.files;
    const moduleHost: ts.ModuleResolutionHost = {
      fileExists: (path) => files.has(path),
      readFile: (path) => files.get(path)?.text,
      directoryExists: (path) => [...files.keys()].some((name) => name.startsWith(path.replace(/\/?$/, '/'))),
    };
    const host: ts.LanguageServiceHost = {
      getCompilationSettings: () => options,
      getScriptFileNames: () => [...files.keys()].filter((name) => !name.startsWith(libFolder)),
      getScriptVersion: (path) => String(files.get(path)?.version ?? 0),
      getScriptSnapshot: (path) => {
        const file = files.get(path);
        return file ? ts.ScriptSnapshot.fromString(file.text) : undefined;
      },
      getCurrentDirectory: () => '/',
      getDefaultLibFileName: () => `${libFolder}lib.d.ts`,
      fileExists: moduleHost.fileExists,
      readFile: moduleHost.readFile,
      directoryExists: moduleHost.directoryExists!,
      resolveModuleNameLiterals: (literals, containingFile) =>
        literals.map((literal) => {
          if (workflowModules.has(literal.text))
            return {
              resolvedModule: {
                resolvedFileName: this.entry,
                extension: ts.Extension.Dts,
                isExternalLibraryImport: false,
              },
            };
          return ts.resolveModuleName(literal.text, containingFile, options, moduleHost);
        }),
    };
    this.service = ts.createLanguageService(host, ts.createDocumentRegistry());
  }

  /** Puts `text` in the file `path` (the authored file unless named); a new text is a new version. */
  setFile(text: string, path: string = definitionFile): void {
    const file = this.files.get(path);
    if (file?.text === text) return;
    this.files.set(path, { text, version: (file?.version ?? 0) + 1 });
  }

  /** The syntax and type problems of `path` (the authored file unless named), in source order. */
  problems(path: string = definitionFile): TypeProblem[] {
    const source = this.service.getProgram()?.getSourceFile(path);
    if (!source) throw new Error(`The type checker has no file ${path}.`);
    const syntactic = this.service.getSyntacticDiagnostics(path);
    // After a syntax error the checker's findings are mostly echoes of it: show the parser's alone.
    const all: [ts.Diagnostic, TypeProblem['kind']][] =
      syntactic.length > 0
        ? syntactic.map((diagnostic) => [diagnostic, 'syntax'])
        : this.service.getSemanticDiagnostics(path).map((diagnostic) => [diagnostic, 'type']);
    return all
      .filter(([diagnostic]) => diagnostic.category === ts.DiagnosticCategory.Error)
      .map(([diagnostic, kind]) => {
        const start = diagnostic.start ?? 0;
        const end = start + (diagnostic.length ?? 0);
        const from = source.getLineAndCharacterOfPosition(start);
        const to = source.getLineAndCharacterOfPosition(end);
        return {
          kind,
          message: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
          line: from.line + 1,
          column: from.character + 1,
          endLine: to.line + 1,
          endColumn: to.character + 1,
          code: diagnostic.code,
        };
      })
      .sort((a, b) => a.line - b.line || a.column - b.column);
  }

  /** The type (and documentation) of what is at `offset` in the authored file, or null. */
  quickInfo(offset: number, path: string = definitionFile): QuickInfo | null {
    const info = this.service.getQuickInfoAtPosition(path, offset);
    if (!info) return null;
    const type = ts.displayPartsToString(info.displayParts);
    if (!type) return null;
    return {
      from: info.textSpan.start,
      to: info.textSpan.start + info.textSpan.length,
      type,
      doc: documentation(info.documentation, info.tags),
    };
  }

  /** What may be written at `offset`: the language service's completions, or null. */
  completions(offset: number, path: string = definitionFile): Completions | null {
    const result = this.service.getCompletionsAtPosition(path, offset, {
      includeCompletionsWithInsertText: true,
      includeCompletionsForModuleExports: false,
    });
    if (!result) return null;
    const text = this.files.get(path)!.text;
    let from = offset;
    while (from > 0 && /[\w$]/.test(text[from - 1]!)) from--;
    const span = result.optionalReplacementSpan;
    return {
      from: span ? span.start : from,
      to: span ? span.start + span.length : offset,
      items: result.entries.map((entry) => ({
        name: entry.name,
        kind: entry.kind,
        sortText: entry.sortText,
        ...(entry.insertText !== undefined ? { insertText: entry.insertText } : {}),
        ...(entry.source !== undefined ? { source: entry.source } : {}),
        ...(entry.data !== undefined ? { data: entry.data } : {}),
      })),
    };
  }

  /** A completion's signature and documentation. */
  completionDetail(
    offset: number,
    item: Pick<CompletionItem, 'name' | 'source' | 'data'>,
    path: string = definitionFile,
  ): CompletionDetail | null {
    const details = this.service.getCompletionEntryDetails(
      path,
      offset,
      item.name,
      undefined,
      item.source,
      undefined,
      item.data,
    );
    if (!details) return null;
    return {
      signature: ts.displayPartsToString(details.displayParts),
      doc: documentation(details.documentation, details.tags),
    };
  }
}

function documentation(parts: ts.SymbolDisplayPart[] | undefined, tags: ts.JSDocTagInfo[] | undefined) {
  const text = ts.displayPartsToString(parts);
  const tagText = (tags ?? [])
    .map((tag) => `@${tag.name}${tag.text ? ` ${ts.displayPartsToString(tag.text)}` : ''}`)
    .join('\n');
  return [text, tagText].filter((part) => part.length > 0).join('\n\n');
}
