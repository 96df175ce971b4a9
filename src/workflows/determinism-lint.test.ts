import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { compileDefinition } from '../host/authoring/compile';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: fileURLToPath(new URL('../../eslint.config.js', import.meta.url)),
});

/** The determinism problems the lint finds in `source`, as if it were a demo in src/workflows. */
async function lintDeterminism(source: string): Promise<{ line: number; column: number; message: string }[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}src/workflows/determinism-example.ts` });
  return result!.messages
    .filter((message) => message.ruleId === 'no-restricted-syntax' || message.fatal)
    .map(({ line, column, message }) => ({ line, column, message }));
}

/** A demo-shaped module whose `run` body is `body`, after `preamble` at the module's top. */
function demoWith(body: string, preamble = ''): string {
  return `import { defineWorkflow } from '../engine';\n${preamble}\nexport const example = defineWorkflow({\n  name: 'example',\n  version: 1,\n  *run(ctx, input: { n: number }) {\n${body}\n  },\n});\n\nexport default example;\n`;
}

/** The 1-based line and column of the `nth` occurrence of `needle` in `source`. */
function where(source: string, needle: string, nth = 1): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i < nth; i++) index = source.indexOf(needle, index + 1);
  const before = source.slice(0, index).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

const bad = demoWith(
  [
    '    const started = Date.now();',
    '    const pick = (items: string[]) => items[Math.floor(Math.random() * items.length)];',
    '    yield* ctx.waitUntil(() => new Date().getHours() > input.n);',
    '    setTimeout(() => undefined, 10);',
    '    const id = crypto.randomUUID();',
    "    void fetch('https://example.com');",
    "    const p = import('./other');",
    '    return [started, pick([]), id, p];',
  ].join('\n'),
);

const good = demoWith(
  [
    '    const day = new Date(Date.UTC(2024, 0, 1)).toISOString();',
    "    const stamped = yield* ctx.activity('stamp', async () => {",
    '      await new Promise((resolve) => setTimeout(resolve, 1));',
    "      const response = await fetch('https://example.com');",
    '      return { at: Date.now(), pick: Math.random(), id: crypto.randomUUID(), ok: response.ok };',
    '    });',
    "    const later = yield* ctx.activity('later', function () {",
    '      return stampNow() + new Date().getTime();',
    '    }, { timeoutMs: 1_000 });',
    '    const now = yield* ctx.now();',
    '    const timer: ReturnType<typeof setTimeout> | null = null;',
    '    const options = { fetch: true, process: input.n };',
    '    return { day, stamped, later, now, timer, options };',
  ].join('\n'),
  'const stampNow = () => Date.now(); // a module-level activity helper',
);

describe('the determinism lint of src/workflows', () => {
  it('flags Date.now() written directly in a run body, at its line and column, with the fix', async () => {
    const source = demoWith('    const started = Date.now();\n    return started;');
    expect(await lintDeterminism(source)).toEqual([
      {
        ...where(source, 'Date.now()'),
        message:
          'Workflow code must be deterministic: use yield* ctx.now() instead of Date.now() — or move this into an activity.',
      },
    ]);
  });

  it('flags time, randomness, timers, crypto, I/O and import() anywhere in the body outside activities', async () => {
    expect((await lintDeterminism(bad)).map(({ line, column }) => ({ line, column }))).toEqual([
      where(bad, 'Date.now()'),
      where(bad, 'Math.random()'),
      where(bad, 'new Date()'),
      where(bad, 'setTimeout'),
      where(bad, 'crypto'),
      where(bad, 'fetch'),
      where(bad, 'import('),
    ]);
  });

  it('accepts activity code, module-level helpers, new Date(value), ctx.now() and barred names used as keys or in types', async () => {
    expect(await lintDeterminism(good)).toEqual([]);
  });

  it('passes every built-in demo', async () => {
    const results = await eslint.lintFiles([`${root}src/workflows`]);
    const problems = results.flatMap((result) =>
      result.messages
        .filter((message) => message.ruleId === 'no-restricted-syntax')
        .map((message) => `${result.filePath}:${message.line}: ${message.message}`),
    );
    expect(results.length).toBeGreaterThan(5);
    expect(problems).toEqual([]);
  });

  it("agrees with the studio's check of authored definitions: same code, same positions, same messages", async () => {
    for (const source of [bad, good]) {
      const authored = source.replace("from '../engine'", "from 'shuttle'").replace("'./other'", "'shuttle'");
      const compiled = await compileDefinition(authored, 'example.ts');
      const studio = compiled.ok
        ? []
        : compiled.diagnostics.map(({ kind, line, column, message }) => ({ kind, line, column, message }));
      const lint = (await lintDeterminism(authored)).map((problem) => ({ kind: 'determinism', ...problem }));
      expect(studio).toEqual(lint);
    }
  });
});
