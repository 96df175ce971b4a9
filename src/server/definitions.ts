/**
 * The workflow definitions a server process runs: the files its operator names (`--workflows`), compiled
 * exactly as the studio compiles definitions (the same `'shuttle'` import, the same determinism checks), or
 * the built-in demos. Code comes only from the operator's files, never from the browser.
 *
 * A file is a TypeScript or JavaScript module that imports the workflow API from `'shuttle'` and exports one
 * or more `defineWorkflow({ … })`, and the queues their starts go onto (`defineQueue(name, options)`: the
 * server's engine declares them); a folder means every `.ts`/`.js`/`.mjs` file in it. A queue declared in
 * two files must be declared the same in both. Two kinds of files:
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
import type { AnyWorkflowDefinition, EngineOptions, QueueDefinition } from '../engine';
import { defineQueue, isQueueDefinition } from '../engine/queues/queue-options';
import { compileModule, type CompileModuleResult } from '../host/authoring/compile';
import type { BuiltInInfo } from '../host/authoring/definition-store';
import { builtInCatalog, builtInChildTypes, builtInQueues, builtInWorkflows } from '../workflows';
import { StartupError } from './store';

export type LoadedDefinitions = {
  workflows: AnyWorkflowDefinition[];
  /** The queues the files export (`defineQueue`), each once: the engine declares them. */
  queues: QueueDefinition[];
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
  const queues = new Map<string, { queue: QueueDefinition; file: string }>();
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
    for (const queue of compiled.queues) {
      const earlier = queues.get(queue.name);
      if (!earlier) queues.set(queue.name, { queue, file });
      else if (!sameQueueOptions(earlier.queue, queue))
        problems.push(
          `${file}: queue '${queue.name}' is declared as ${JSON.stringify(queue.options)} here and as ${JSON.stringify(earlier.queue.options)} in ${earlier.file}; declare it once, or the same in both.`,
        );
    }
  }
  if (problems.length > 0)
    throw new StartupError(`Could not load the workflow definitions:\n  ${problems.join('\n  ')}`);
  return { workflows, queues: [...queues.values()].map(({ queue }) => queue), info, sources: files };
}

/**
 * The queues a server's engine declares: those its modules export, and those given in code
 * (`startWorker({ queues })`), each once. A queue declared differently in both, or a workflow whose `queue` no
 * one declares, is a StartupError: the engine would refuse every start onto it.
 */
export function serverQueues(
  definitions: Pick<LoadedDefinitions, 'workflows' | 'queues'>,
  given?: EngineOptions['queues'],
): QueueDefinition[] {
  const queues = new Map(definitions.queues.map((queue) => [queue.name, queue]));
  const inCode = Array.isArray(given)
    ? (given as readonly QueueDefinition[])
    : Object.entries(given ?? {}).map(([name, options]) => defineQueue(name, options));
  for (const queue of inCode) {
    const module = queues.get(queue.name);
    if (module && !sameQueueOptions(module, queue))
      throw new StartupError(
        `Queue '${queue.name}' is declared as ${JSON.stringify(queue.options)} in the worker's options and as ${JSON.stringify(module.options)} in a workflow module; declare it once, or the same in both.`,
      );
    queues.set(queue.name, queue);
  }
  for (const definition of definitions.workflows)
    if (definition.queue !== undefined && !queues.has(definition.queue))
      throw new StartupError(
        `Workflow '${definition.name}' goes onto queue '${definition.queue}', which no module declares: export const ${safeIdentifier(definition.queue)} = defineQueue('${definition.queue}', { concurrency: … }) from one of the --workflows modules.`,
      );
  return [...queues.values()];
}

function safeIdentifier(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const camel = words
    .map((word, index) => (index === 0 ? word : word[0]!.toUpperCase() + word.slice(1)))
    .join('');
  return /^[A-Za-z_]/.test(camel) ? camel : `queue${camel}`;
}

/** Whether two declarations of a queue say the same (the order of their options aside). */
function sameQueueOptions(a: QueueDefinition, b: QueueDefinition): boolean {
  const canonical = (value: unknown): unknown =>
    typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, field]) => field !== undefined)
            .sort(([x], [y]) => x.localeCompare(y))
            .map(([key, field]) => [key, canonical(field)]),
        )
      : value;
  return JSON.stringify(canonical(a.options)) === JSON.stringify(canonical(b.options));
}

/** The studio's compiler refused an import other than 'shuttle': the file is a Node module. */
function importsOtherModules(message: string): boolean {
  return message.includes("can import only 'shuttle'");
}

/** Whether a file ends with a source map reference (`//# sourceMappingURL=…`): it was built from other sources. */
function builtWithSourceMap(source: string): boolean {
  return /\n\/\/# sourceMappingURL=\S+\s*$/.test(source);
}

/** Loads a definition file as a Node module and collects the workflow definitions and queues it exports. */
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
  const queues = [...new Set(Object.values(exported))].filter(isQueueDefinition);
  if (definitions.length > 0 || queues.length > 0) return { ok: true, definitions, queues };
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
  return {
    workflows: [...builtInWorkflows],
    queues: [...builtInQueues],
    info,
    sources: ['the built-in demos'],
  };
}

/** The definitions of `--workflows` files, plus the demos when asked (or when no file is named). */
export async function loadDefinitions(paths: readonly string[], demos: boolean): Promise<LoadedDefinitions> {
  if (paths.length === 0) return builtInDefinitions();
  const files = await loadDefinitionFiles(paths);
  if (!demos) return files;
  const builtIns = builtInDefinitions();
  return {
    workflows: [...builtIns.workflows, ...files.workflows],
    // The demos' queues, unless a file declares one of the same name (serverQueues compares nothing here).
    queues: [
      ...builtIns.queues.filter((queue) => !files.queues.some((other) => other.name === queue.name)),
      ...files.queues,
    ],
    info: new Map([...builtIns.info, ...files.info]),
    sources: [...builtIns.sources, ...files.sources],
  };
}
