import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { TestWorld } from '../../engine/engine.test-support';
import { compileDefinition } from './compile';

const good = `import { defineWorkflow, delay } from 'shuttle';

type Input = { name: string };

export default defineWorkflow({
  name: 'greeter',
  version: 3,
  *run(ctx, input: Input) {
    const text: string = yield* ctx.activity('compose', async ({ signal }) => {
      await delay(1, signal);
      return \`Hello, \${input.name}\`;
    });
    yield* ctx.sleep(10);
    return text;
  },
});
`;

describe('compileDefinition', () => {
  it('compiles TypeScript into a definition that runs on the engine', async () => {
    const result = await compileDefinition(good, 'greeter.ts');
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.definition).toMatchObject({ name: 'greeter', version: 3 });
    const world = new TestWorld();
    const engine = await world.engine([result.definition]);
    await engine.start('greeter', { name: 'Ada' }, { id: 'g' });
    await world.idle();
    await world.advance(10);
    expect(await engine.handle('g').result()).toBe('Hello, Ada');
  });

  it('reports a syntax error with its line and column', async () => {
    const result = await compileDefinition(
      good.replace('const text: string =', 'const text: string = ='),
      'bad.ts',
    );
    expect(result).toEqual({
      ok: false,
      diagnostics: [expect.objectContaining({ kind: 'syntax', line: 9 })],
    });
    if (!result.ok) expect(result.diagnostics[0]!.message).toMatch(/^Syntax error: Unexpected token/);
  });

  it('reports an exception thrown while the module loads, at its line', async () => {
    const source = `import { defineWorkflow } from 'shuttle';\nconst config = {};\n\n(config as any).missing.value;\nexport default defineWorkflow({ name: 'x', version: 1, *run() {} });\n`;
    const result = await compileDefinition(source, 'throws.ts');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.diagnostics[0]).toMatchObject({ kind: 'evaluation', line: 4 });
      expect(result.diagnostics[0]!.message).toMatch(/TypeError: Cannot read properties of undefined/);
    }
  });

  it('reports an exception thrown while the module loads at its column, past removed type annotations', async () => {
    const source = `import { defineWorkflow } from 'shuttle';\nconst config: Record<string, { value: number }> = {};\nconst value: number = config.missing!.value;\nexport default defineWorkflow({ name: 'x', version: 1, *run() {} });\n`;
    const result = await compileDefinition(source, 'columns.ts');
    expect(result).toMatchObject({
      ok: false,
      diagnostics: [{ kind: 'evaluation', line: 3, column: source.split('\n')[2]!.indexOf('.value') + 2 }],
    });
  });

  it('names the author’s line in the stack of an error the workflow throws while it runs', async () => {
    const source = [
      "import { defineWorkflow } from 'shuttle';",
      '',
      'export default defineWorkflow({',
      "  name: 'typo',",
      '  version: 1,',
      '  *run(ctx) {',
      '    yield* (ctx as any).sleeep(100);',
      '    return 1;',
      '  },',
      '});',
      '',
    ].join('\n');
    const result = await compileDefinition(source, 'typo-v1.ts');
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const world = new TestWorld();
    const engine = await world.engine([result.definition]);
    await engine.start('typo', {}, { id: 't' });
    await world.idle();
    const failed = await engine.describe('t');
    expect(failed.status).toBe('failed');
    // Line 7 of the source: `yield* (ctx as any).sleeep(100)` (the module's function header adds no lines).
    expect(failed.error?.stack).toMatch(/typo-v1\.ts:7:\d+/);
  });

  it('reports a missing or wrong default export, and imports other than shuttle', async () => {
    const missing = await compileDefinition(
      `import { defineWorkflow } from 'shuttle';\nexport const w = 1;\n`,
      'm.ts',
    );
    expect(missing).toMatchObject({
      ok: false,
      diagnostics: [{ kind: 'export', message: expect.stringMatching(/no default export/) }],
    });
    const wrong = await compileDefinition(
      `const a = 1;\n\nexport default { name: 'x', version: 0 };\n`,
      'w.ts',
    );
    expect(wrong).toMatchObject({
      ok: false,
      diagnostics: [
        { kind: 'export', line: 3, message: expect.stringMatching(/version must be a positive integer/) },
      ],
    });
    const imports = await compileDefinition(`import fs from 'node:fs';\nexport default fs;\n`, 'i.ts');
    expect(imports).toMatchObject({
      ok: false,
      diagnostics: [
        { kind: 'evaluation', message: expect.stringMatching(/can import only 'shuttle'.*not 'node:fs'/) },
      ],
    });
  });

  it('compiles every built-in demo from its source, as the editor offers them as templates', async () => {
    for (const file of [
      'order',
      'shipment',
      'countdown',
      'fan-out',
      'fan-out-task',
      'saga',
      'flaky',
      'approval',
      'slow-steps',
    ]) {
      const source = readFileSync(new URL(`../../workflows/${file}.ts`, import.meta.url), 'utf8');
      const result = await compileDefinition(source, `${file}.ts`);
      expect(result.ok, `${file}: ${JSON.stringify(!result.ok && result.diagnostics)}`).toBe(true);
    }
  });
});

/** The 1-based line and column of the `nth` occurrence of `needle` in `source`. */
function where(source: string, needle: string, nth = 1): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i < nth; i++) index = source.indexOf(needle, index + 1);
  if (index < 0) throw new Error(`${needle} is not in the source`);
  const before = source.slice(0, index).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

/** A definition whose body is `body` (indented by the caller), after `preamble` at the module's top. */
function definitionWith(body: string, preamble = ''): string {
  return `import { defineWorkflow, delay } from 'shuttle';\n${preamble}\nexport default defineWorkflow({\n  name: 'checked',\n  version: 1,\n  *run(ctx, input: { n: number }) {\n${body}\n  },\n});\n`;
}

describe('compileDefinition: determinism of workflow bodies', () => {
  it('reports Date.now() in a workflow body as a determinism problem at its line and column, and does not load the module', async () => {
    const source = definitionWith(
      `    const started: number = Date.now();\n    return started;`,
      `(globalThis as any).loaded = true;`,
    );
    const result = await compileDefinition(source, 'clock.ts');
    expect(result).toEqual({
      ok: false,
      diagnostics: [
        {
          kind: 'determinism',
          message:
            'Workflow code must be deterministic: use yield* ctx.now() instead of Date.now() — or move this into an activity.',
          ...where(source, 'Date.now()'),
        },
      ],
    });
    expect((globalThis as { loaded?: boolean }).loaded).toBeUndefined();
  });

  it('maps columns through removed type annotations, for every problem of a line', async () => {
    const source = definitionWith(
      `    const a: Record<string, number> = { at: Date.now() }; const b: Array<Map<string, Date>> = [new Map()]; const c = new Date() as unknown as Date;\n    return [a, b, c];`,
    );
    const result = await compileDefinition(source, 'columns.ts');
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.diagnostics.map(({ line, column }) => ({ line, column }))).toEqual([
        where(source, 'Date.now()'),
        where(source, 'new Date()'),
      ]);
  });

  it('flags Math.random() in an arrow function declared inside the body and called from it', async () => {
    const source = definitionWith(
      `    const pick = (items: string[]) => items[Math.floor(Math.random() * items.length)];\n    return pick(['a', 'b']);`,
    );
    const result = await compileDefinition(source, 'pick.ts');
    expect(result).toEqual({
      ok: false,
      diagnostics: [
        {
          kind: 'determinism',
          message:
            'Workflow code must be deterministic: use yield* ctx.random() instead of Math.random() — or move this into an activity.',
          ...where(source, 'Math.random()'),
        },
      ],
    });
  });

  it('flags timers, crypto, I/O, the environment and loading code in the body, each at its place', async () => {
    const cases: [code: string, needle: string, message: RegExp][] = [
      [
        'setTimeout(() => undefined, 10);',
        'setTimeout',
        /use yield\* ctx\.sleep\(ms\) instead of setTimeout/,
      ],
      [
        'setInterval(() => undefined, 10);',
        'setInterval',
        /ctx\.sleep\(ms\) in a loop instead of setInterval/,
      ],
      ['queueMicrotask(() => undefined);', 'queueMicrotask', /queueMicrotask runs code outside/],
      [
        'const id = crypto.randomUUID();',
        'crypto',
        /use yield\* ctx\.uuid\(\) or yield\* ctx\.random\(\) instead of crypto/,
      ],
      ['const t = performance.now();', 'performance', /use yield\* ctx\.now\(\) instead of performance/],
      ['const d = Date();', 'Date()', /instead of Date\(\)/],
      ["void fetch('https://example.com');", 'fetch', /fetch does I\/O — move this into an activity/],
      ['const x = new XMLHttpRequest();', 'XMLHttpRequest', /XMLHttpRequest does I\/O/],
      ["const s = new WebSocket('ws://x');", 'WebSocket', /WebSocket does I\/O/],
      ["const v = localStorage.getItem('k');", 'localStorage', /localStorage does I\/O/],
      ["const r = indexedDB.open('db');", 'indexedDB', /indexedDB does I\/O/],
      ['const e = process.env.HOME;', 'process', /process reads the environment/],
      ["const m = require('shuttle');", 'require', /require loads code at run time/],
      ["const p = import('shuttle');", 'import(', /import\(\) loads code at run time/],
    ];
    for (const [code, needle, message] of cases) {
      const source = definitionWith(`    ${code}\n    return 1;`);
      const result = await compileDefinition(source, 'barred.ts');
      expect(result, code).toEqual({
        ok: false,
        diagnostics: [
          { kind: 'determinism', message: expect.stringMatching(message), ...where(source, needle) },
        ],
      });
    }
  });

  it('flags code nested in the body outside activities: callbacks, waitUntil predicates, nested functions', async () => {
    const source = definitionWith(
      `    const later = [1].map(() => Date.now());\n    yield* ctx.waitUntil(() => Date.now() > input.n);\n    function stamp() {\n      return Date.now();\n    }\n    return [later, stamp()];`,
    );
    const result = await compileDefinition(source, 'nested.ts');
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.diagnostics.map(({ line, column }) => ({ line, column }))).toEqual([
        where(source, 'Date.now()', 1),
        where(source, 'Date.now()', 2),
        where(source, 'Date.now()', 3),
      ]);
  });

  it('accepts the same calls inside activities, in module-level helpers, and in handlers; new Date(ms), Date.UTC and local names are fine', async () => {
    const source = definitionWith(
      [
        `    const fetch = (url: string) => url.length; // a local name, not the global`,
        `    const day = new Date(Date.UTC(2024, 0, 1)).toISOString().slice(0, 10);`,
        `    const stamped = yield* ctx.activity('stamp', async ({ signal }) => {`,
        `      await delay(1, signal);`,
        `      await new Promise((resolve) => setTimeout(resolve, 1));`,
        `      return { at: Date.now(), pick: Math.random(), id: crypto.randomUUID(), at2: new Date().getTime() };`,
        `    });`,
        `    const synchronous = yield* ctx.activity('sync', function () {`,
        `      return moduleClock() + performance.now() > 0;`,
        `    }, { timeoutMs: 1_000 });`,
        `    return { day, len: fetch('abc'), stampedType: typeof stamped.at, synchronous };`,
      ].join('\n'),
      `const moduleClock = () => Date.now();`,
    ).replace(
      '  },\n});',
      `  },\n  queries: { clock: () => Date.now() },\n  updates: { touch: { handle: (state) => { state.touched = Date.now(); } } },\n});`,
    );
    const result = await compileDefinition(source, 'fine.ts');
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const world = new TestWorld();
    const engine = await world.engine([result.definition]);
    await engine.start('checked', { n: 1 }, { id: 'fine' });
    await world.idle();
    expect(await engine.handle('fine').result()).toEqual({
      day: '2024-01-01',
      len: 3,
      stampedType: 'number',
      synchronous: true,
    });
  });
});
