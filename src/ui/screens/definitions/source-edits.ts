/**
 * Plain-text edits of a definition's source, for the editor's actions: read the declared name and version,
 * bump the version, rename, and turn a built-in demo into a template of one's own. Pure string functions
 * with no imports, used by the studio's editor.
 *
 * They look for the first `name: '…'` (a quoted literal) and the first `version: <digits>` after
 * `defineWorkflow(`, or anywhere when there is none — where a definition declares them. An edit that cannot
 * find its field returns null rather than guessing; the caller then asks the person to edit by hand.
 */

const namePattern = /(\bname\s*:\s*)(['"`])([^'"`\n]*)\2/;
const versionPattern = /(\bversion\s*:\s*)(\d+)/;

/** Where the definition's own fields start: just after `defineWorkflow(`, else the start of the source. */
function declarationStart(source: string): number {
  const index = source.search(/\bdefineWorkflow\s*(<[^>]*>)?\s*\(/);
  return index < 0 ? 0 : index;
}

function replaceAfterStart(source: string, pattern: RegExp, replace: (match: RegExpExecArray) => string) {
  const start = declarationStart(source);
  const match = pattern.exec(source.slice(start));
  if (!match) return null;
  const at = start + match.index;
  return `${source.slice(0, at)}${replace(match)}${source.slice(at + match[0].length)}`;
}

/** The name and version the source declares, as far as a plain reading can tell (null when not found). */
export function readDeclaration(source: string): { name: string | null; version: number | null } {
  const rest = source.slice(declarationStart(source));
  const name = namePattern.exec(rest)?.[3] ?? null;
  const version = versionPattern.exec(rest)?.[2];
  return { name, version: version === undefined ? null : Number(version) };
}

/** The source with its declared `version` set to `version`; null when it declares none. */
export function withVersion(source: string, version: number): string | null {
  return replaceAfterStart(source, versionPattern, (match) => `${match[1]}${version}`);
}

/** The source with its declared `name` set to `name`; null when it declares none. */
export function withName(source: string, name: string): string | null {
  return replaceAfterStart(source, namePattern, (match) => `${match[1]}${match[2]}${name}${match[2]}`);
}

/**
 * A built-in demo's source as the start of a definition of one's own: imports from `'shuttle'` instead of
 * the studio's `'../engine'`, named `name`, at version 1.
 */
export function templateFrom(source: string, name: string): string {
  const imports = source.replace(/(\bfrom\s*)(['"])\.\.\/engine(?:\/index)?\2/g, `$1$2shuttle$2`);
  const renamed = withName(imports, name) ?? imports;
  return withVersion(renamed, 1) ?? renamed;
}

/** The first of `base`, `base-2`, `base-3`, … that is not in `taken`. */
export function unusedName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** What a new definition starts from when no demo is copied. */
export function blankDefinition(name: string): string {
  return `import { defineWorkflow, delay } from 'shuttle';

type Input = { name: string };

export default defineWorkflow({
  name: '${name}',
  version: 1,
  description: 'Greets someone after a short, durable pause.',
  sampleInput: { name: 'Ada' },
  *run(ctx, input: Input) {
    ctx.state.stage = 'composing';
    // Side effects go in activities: retried on failure, recorded once done.
    const greeting: string = yield* ctx.activity('compose', async ({ signal }) => {
      await delay(300, signal);
      return \`Hello, \${input.name}!\`;
    });
    ctx.state.stage = 'waiting';
    yield* ctx.sleep(2_000); // a durable timer: survives reloads and handoffs
    ctx.state.stage = 'done';
    return { greeting };
  },
  queries: {
    stage: (state) => state.stage,
  },
});
`;
}
