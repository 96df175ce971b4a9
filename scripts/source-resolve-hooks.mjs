// Node module resolution hooks for running Shuttle from this repository's source (bin/shuttle.mjs registers
// them when src/ is there): a definition file loaded as a Node module that imports `shuttle` or
// `shuttle/<entry>` gets the source entry point (src/public/<entry>.ts, through tsx) — the same modules the
// command itself runs — instead of the package's build in lib/, which may be stale or missing.
const entries = new Set(['workflow', 'browser', 'browser-worker', 'react', 'server', 'testing']);

export async function resolve(specifier, context, nextResolve) {
  const match = /^shuttle(?:\/([a-z-]+))?$/.exec(specifier);
  if (match && (match[1] === undefined || entries.has(match[1])))
    return nextResolve(new URL(`../src/public/${match[1] ?? 'index'}.ts`, import.meta.url).href, context);
  return nextResolve(specifier, context);
}
