/**
 * The workflow definitions a server process runs: the files its operator names (`--workflows`), compiled
 * exactly as the studio compiles definitions (the same `'shuttle'` import, the same determinism checks), or
 * the built-in demos. Code comes only from the operator's files, never from the browser.
 *
 * A file is a TypeScript or JavaScript module that imports the workflow API from `'shuttle'` and exports one
 * or more `defineWorkflow({ … })`; a folder means every `.ts`/`.js`/`.mjs` file in it. Two kinds of files:
 * - one that imports nothing but `'shuttle'` (what the studio writes) is compiled exactly as the studio
 *   compiles definitions: determinism is checked statically and trapped at run time;
 * - one that imports anything else (your own modules, a database client, an SDK) is loaded as a Node module
 *   (through tsx, so TypeScript works), where `'shuttle'` is the engine's public API; its determinism is
 *   then your lint's job (see the workflows lint rule of this project).
 * Problems are reported as `file:line:column message`, and no process starts with a definition that failed
 * to load.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AnyWorkflowDefinition } from '../engine';
import { compileModule, type CompileModuleResult } from '../host/authoring/compile';
import type { BuiltInInfo } from '../host/authoring/definition-store';
import { builtInCatalog, builtInChildTypes, builtInWorkflows } from '../workflows';
import { StartupError } from './store';

export type LoadedDefinitions = {
  workflows: AnyWorkflowDefinition[];
  /** What the studio shows of each (its source, title). */
  info: Map<string, BuiltInInfo>;
  /** Where they came from, for the logs. */
  sources: string[];
};

const moduleExtensions = new Set(['.ts', '.js', '.mjs', '.mts']);

function filesOf(path: string): string[] {
  const absolute = resolve(path);
  let stats;
  try {
    stats = statSync(absolute);
  } catch {
    throw new StartupError(`--workflows ${path}: no such file or folder.`);
  }
  if (!stats.isDirectory()) return [absolute];
  return readdirSync(absolute)
    .filter((name) => moduleExtensions.has(extname(name)) && !/\.(test|spec)\.[a-z]+$/.test(name))
    .sort()
    .map((name) => join(absolute, name));
}

/** Compiles every file of `paths`; throws a StartupError naming each problem. */
export async function loadDefinitionFiles(paths: readonly string[]): Promise<LoadedDefinitions> {
  const workflows: AnyWorkflowDefinition[] = [];
  const info = new Map<string, BuiltInInfo>();
  const files = paths.flatMap(filesOf);
  if (files.length === 0) throw new StartupError(`--workflows ${paths.join(', ')}: no module files found.`);
  const problems: string[] = [];
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    // A built file (a bundle, or tsc's output) names its sources in a source map: Node loads it, and maps its
    // stacks to the author's files and lines. Any other file is compiled as the studio compiles definitions,
    // unless it imports other modules than 'shuttle'.
    let compiled = builtWithSourceMap(source)
      ? await importModule(file)
      : await compileModule(source, basename(file));
    if (!compiled.ok && compiled.diagnostics.some((diagnostic) => importsOtherModules(diagnostic.message)))
      compiled = await importModule(file);
    if (!compiled.ok) {
      for (const diagnostic of compiled.diagnostics)
        problems.push(`${file}:${diagnostic.line}:${diagnostic.column} ${diagnostic.message}`);
      continue;
    }
    for (const definition of compiled.definitions) {
      const clash = workflows.find(
        (other) => other.name === definition.name && other.version === definition.version,
      );
      if (clash) {
        problems.push(
          `${file}: workflow '${definition.name}' version ${definition.version} is defined twice.`,
        );
        continue;
      }
      workflows.push(definition);
      info.set(definition.name, { source, title: null, childOnly: false });
    }
  }
  if (problems.length > 0)
    throw new StartupError(`Could not load the workflow definitions:\n  ${problems.join('\n  ')}`);
  return { workflows, info, sources: files };
}

/** The studio's compiler refused an import other than 'shuttle': the file is a Node module. */
function importsOtherModules(message: string): boolean {
  return message.includes("can import only 'shuttle'");
}

/** Whether a file ends with a source map reference (`//# sourceMappingURL=…`): it was built from other sources. */
function builtWithSourceMap(source: string): boolean {
  return /\n\/\/# sourceMappingURL=\S+\s*$/.test(source);
}

/** Loads a definition file as a Node module and collects the workflow definitions it exports. */
async function importModule(file: string): Promise<CompileModuleResult> {
  // A bundled definition file (esbuild, tsc, …) names its sources in a source map: with Node's source maps on,
  // the stacks its failures record name the author's file and line, not the bundle's (docs/authoring.md).
  process.setSourceMapsEnabled(true);
  let exported: Record<string, unknown>;
  try {
    exported = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    return {
      ok: false,
      diagnostics: [
        {
          kind: 'evaluation',
          message: `The module threw while loading: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          line: 1,
          column: 1,
        },
      ],
    };
  }
  const definitions = [...new Set(Object.values(exported))].filter(
    (value): value is AnyWorkflowDefinition =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { name?: unknown }).name === 'string' &&
      typeof (value as { run?: unknown }).run === 'function',
  );
  if (definitions.length > 0) return { ok: true, definitions };
  return {
    ok: false,
    diagnostics: [
      { kind: 'export', message: 'The module exports no workflow definition.', line: 1, column: 1 },
    ],
  };
}

/** The built-in demos, with their sources read from the project's src/workflows folder. */
export function builtInDefinitions(): LoadedDefinitions {
  const folder = fileURLToPath(new URL('../workflows/', import.meta.url));
  const info = new Map<string, BuiltInInfo>();
  for (const definition of builtInWorkflows) {
    let source: string | null = null;
    try {
      source = readFileSync(join(folder, `${definition.name}.ts`), 'utf8');
    } catch {
      source = null;
    }
    info.set(definition.name, {
      source,
      title: builtInCatalog.find((demo) => demo.name === definition.name)?.title ?? null,
      childOnly: builtInChildTypes.includes(definition.name),
    });
  }
  return { workflows: [...builtInWorkflows], info, sources: ['the built-in demos'] };
}

/** The definitions of `--workflows` files, plus the demos when asked (or when no file is named). */
export async function loadDefinitions(paths: readonly string[], demos: boolean): Promise<LoadedDefinitions> {
  if (paths.length === 0) return builtInDefinitions();
  const files = await loadDefinitionFiles(paths);
  if (!demos) return files;
  const builtIns = builtInDefinitions();
  return {
    workflows: [...builtIns.workflows, ...files.workflows],
    info: new Map([...builtIns.info, ...files.info]),
    sources: [...builtIns.sources, ...files.sources],
  };
}
