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
