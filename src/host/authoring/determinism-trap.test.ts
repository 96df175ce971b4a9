import { describe, expect, it } from 'vitest';
import { TestWorld } from '../../engine/engine.test-support';
import { compileDefinition } from './compile';
import { NonDeterministicCallError, runAsBodyStep } from './determinism-trap';

/**
 * What the static check cannot see: the body calls a module-level helper. `helper` is the module's top
 * (line 2 on), `body` the body of `run`.
 */
function moduleWith(helper: string, body: string): string {
  return `import { defineWorkflow } from 'shuttle';\n${helper}\nexport default defineWorkflow({\n  name: 'trapped',\n  version: 1,\n  *run(ctx, input: { n: number }) {\n${body}\n  },\n});\n`;
}

/** The 1-based line and column of the first occurrence of `needle` in `source`. */
function where(source: string, needle: string): string {
  const before = source.slice(0, source.indexOf(needle)).split('\n');
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

async function run(source: string, fileName: string): Promise<unknown> {
  const compiled = await compileDefinition(source, fileName);
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  const world = new TestWorld();
  const engine = await world.engine([compiled.definition]);
  await engine.start('trapped', { n: 1 }, { id: 't' });
  await world.idle();
  return engine.handle('t').result();
}

describe('the runtime trap of authored workflow bodies', () => {
  it('fails the workflow when the body calls a module-level helper that reads the clock, naming the call and the line', async () => {
    const source = moduleWith(
      `function stamp(): number {\n  const at: number = Date.now();\n  return at;\n}`,
      `    const at = stamp();\n    return at;`,
    );
    expect(where(source, 'now()')).toBe('line 3, column 27'); // past the removed ': number'
    await expect(run(source, 'stamp.ts')).rejects.toThrow(
      'Workflow code must be deterministic: Date.now() was called while the workflow body ran (line 3, column 27 of stamp.ts) — use yield* ctx.now() instead, or move this into an activity.',
    );
  });

  it('lets the same helper read the clock, draw randomness and use timers inside an activity', async () => {
    const source = moduleWith(
      `const sample = async () => {\n  await new Promise((resolve) => setTimeout(resolve, 1));\n  return { at: Date.now(), pick: Math.random(), id: crypto.randomUUID(), now: new Date().getTime() };\n};`,
      `    const got = yield* ctx.activity('sample', () => sample());\n    return Object.values(got).map((value) => typeof value);`,
    );
    await expect(run(source, 'sample.ts')).resolves.toEqual(['number', 'number', 'string', 'number']);
  });

  it('fails the workflow even when the body catches the error', async () => {
    const source = moduleWith(
      `const roll = () => Math.random();`,
      `    let value = 0;\n    try {\n      value = roll();\n    } catch {\n      value = 4;\n    }\n    return value;`,
    );
    const failure = await run(source, 'roll.ts').then(
      () => null,
      (error: unknown) => error,
    );
    expect(String(failure)).toContain(
      `Math.random() was called while the workflow body ran (${where(source, 'random()')} of roll.ts)`,
    );
    const masked = moduleWith(
      `const roll = () => Math.random();`,
      `    try {\n      return roll();\n    } catch {\n      throw new Error('something else');\n    }`,
    );
    await expect(run(masked, 'masked.ts')).rejects.toThrow(/NonDeterministicCallError: .*Math\.random\(\)/);
  });

  it('traps waitUntil predicates, timers and I/O reached through helpers', async () => {
    const cases: [helper: string, body: string, call: string][] = [
      [
        `const late = () => Date.now() > 0;`,
        `    yield* ctx.waitUntil(() => late());\n    return 1;`,
        'Date.now()',
      ],
      [`const wait = () => setTimeout(() => undefined, 1);`, `    wait();\n    return 1;`, 'setTimeout()'],
      [`const get = () => fetch('http://localhost:9/');`, `    void get();\n    return 1;`, 'fetch()'],
      [`const id = () => crypto.randomUUID();`, `    return id();`, 'crypto.randomUUID'],
      [`const today = () => new Date();`, `    return today();`, 'new Date()'],
    ];
    for (const [helper, body, call] of cases)
      await expect(run(moduleWith(helper, body), 'helpers.ts'), call).rejects.toThrow(
        `${call} was called while the workflow body ran (line 2,`,
      );
  });

  it('keeps new Date(ms), Date.UTC and Math outside random working in the body', async () => {
    const source = moduleWith(
      `const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);`,
      `    return [day(Date.UTC(2024, 1, 29)), Math.max(1, input.n), new Date(0) instanceof Date];`,
    );
    await expect(run(source, 'pure.ts')).resolves.toEqual(['2024-02-29', 1, true]);
  });

  it('still loads a module that declares a barred name of its own at its top level', async () => {
    const source = moduleWith(
      `const process = (n: number) => n * 2;\nclass Date2 {}\nconst performance = { now: () => 5 };`,
      `    return process(input.n) + performance.now();`,
    );
    await expect(run(source, 'own.ts')).resolves.toBe(7);
  });

  it('throws NonDeterministicCallError from a step only for what the step itself tripped', () => {
    expect(runAsBodyStep(() => 'plain')).toBe('plain');
    const error = new NonDeterministicCallError('Date.now()', 'Date.now()', null);
    expect(error).toMatchObject({ name: 'NonDeterministicCallError', call: 'Date.now()' });
    expect(error.message).toBe(
      'Workflow code must be deterministic: Date.now() was called while the workflow body ran — use yield* ctx.now() instead, or move this into an activity.',
    );
    expect(() =>
      runAsBodyStep(() => {
        throw new TypeError('unrelated');
      }),
    ).toThrow(TypeError);
  });
});
