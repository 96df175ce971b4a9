/**
 * Stacks of failures mapped to the files authors wrote, for the engine's `mapStack` option (the host passes
 * `mapDefinitionStack`): the engine calls it when it records a failure of workflow code, so the record names
 * `<name>.ts:<line>:<column>` of the source as it was when the failure happened, whatever the source
 * becomes later.
 *
 * Every definition module `compile.ts` evaluates gets a source URL of its own, `definitions/<n>/<file>`
 * (two versions of one name are both `<name>.ts`, and their columns may differ), and is registered here with
 * its `SourcePositions` and the length of the module header on its first line. A frame of a registered
 * module is rewritten to `<file>:<line>:<column>` of the source; a frame of a module no longer registered
 * (the registry keeps the latest 500) keeps its compiled line, which sucrase keeps on the author's line.
 *
 * The engine's own frames — the studio's worker bundle (`engine.worker-*.js`, `/assets/`), Shuttle's
 * sources and package (`src/engine/…`, `src/host/…`, `lib/…`, `node_modules/…`), Node's internals
 * (`node:…`) and the runtime's (`<anonymous>`, `native`) — end with ` [engine]` (`engineFrameMark`), so a
 * reader can hide them. Other frames (an operator's own modules on a server) are kept as they are.
 */
import type { SourcePositions } from './source-positions';

/** What ends a frame of the engine's own code in a mapped stack. */
export const engineFrameMark = ' [engine]';

type Registered = { fileName: string; positions: SourcePositions; headerLength: number };

const registryLimit = 500;
const registry = new Map<string, Registered>();
let evaluations = 0;

/**
 * A fresh source URL for one evaluation of `fileName`, registered with the positions of its compiled code
 * (`headerLength`: the module header's length, which shifts columns of line 1 only).
 */
export function registerDefinitionSource(
  fileName: string,
  positions: SourcePositions,
  headerLength: number,
): string {
  evaluations++;
  const sourceUrl = `definitions/${evaluations}/${fileName}`;
  registry.set(sourceUrl, { fileName, positions, headerLength });
  if (registry.size > registryLimit) registry.delete(registry.keys().next().value!);
  return sourceUrl;
}

const framePattern = /^\s*at\s/;
const evaluatedPattern = /^definitions\/\d+\/(.+)$/;
const enginePatterns = [
  /engine\.worker[-.]/,
  /compile\.worker[-.]/,
  /\/assets\//,
  /\/src\/(engine|host|worker|server|storage|client|protocol)\//,
  /\/lib\/(engine|host|worker|server|storage|client|protocol|public)\//,
  /\/node_modules\//,
  /^node:/,
  /^<anonymous>$/,
  /^native$/,
  /^index \d+$/,
];

/** Where a frame line points: `(location:line:column)` at its end, or what follows `at `. */
function locationOf(line: string): { start: number; location: string } | null {
  const trimmed = line.trimEnd();
  if (trimmed.endsWith(')')) {
    const open = trimmed.lastIndexOf('(');
    if (open < 0) return null;
    return { start: open + 1, location: trimmed.slice(open + 1, -1) };
  }
  const at = /^\s*at\s+(?:async\s+)?/.exec(trimmed);
  return at ? { start: at[0].length, location: trimmed.slice(at[0].length) } : null;
}

/** A frame's location mapped to its source file, or null when it is not a definition module's. */
function mapLocation(location: string): string | null {
  const position = /^(.*):(\d+):(\d+)$/.exec(location);
  const url = position?.[1] ?? location;
  const evaluated = evaluatedPattern.exec(url);
  if (!evaluated) return null;
  const registered = registry.get(url);
  if (!position) return evaluated[1]!;
  const line = Number(position[2]);
  const column = Number(position[3]);
  if (!registered) return `${evaluated[1]}:${line}:${column}`;
  const original = registered.positions.original(
    line,
    Math.max(0, column - 1 - (line === 1 ? registered.headerLength : 0)),
  );
  return `${registered.fileName}:${original.line}:${original.column + 1}`;
}

function isEngineLocation(location: string): boolean {
  const url = /^(.*?)(?::\d+:\d+)?$/.exec(location)?.[1] ?? location;
  return enginePatterns.some((pattern) => pattern.test(url));
}

/**
 * `stack` with the frames of definition modules mapped to their source (`<file>:<line>:<column>`) and the
 * engine's own frames marked with `engineFrameMark`. Lines that are not frames (the message) are kept.
 */
export function mapDefinitionStack(stack: string): string {
  return stack
    .split('\n')
    .map((line) => {
      if (!framePattern.test(line) || line.endsWith(engineFrameMark)) return line;
      const found = locationOf(line);
      if (!found) return line;
      const mapped = mapLocation(found.location);
      if (mapped !== null)
        return `${line.slice(0, found.start)}${mapped}${line.trimEnd().endsWith(')') ? ')' : ''}`;
      return isEngineLocation(found.location) ? `${line.trimEnd()}${engineFrameMark}` : line;
    })
    .join('\n');
}
