/**
 * The editor's type checker (type-checker.ts), run in Node over the same environment the studio's worker
 * gets: the standard libs and the declarations of `shuttle/workflow` emitted from the engine's sources.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import libs from 'virtual:typescript-libs';
import declarations from '../../../public/workflow.ts?declarations';
import { builtInInfo } from '../../../worker/built-ins';
import { blankDefinition, templateFrom } from './source-edits';
import { TypeChecker } from './type-checker';
import type { TypeCheckResponse } from './typecheck-protocol';
import { serveTypeChecks } from './typecheck-service';

/** The blank template with `lines` put after its first line inside `run` (the `ctx.state.stage = …` line). */
function withLines(...lines: string[]): string {
  const source = blankDefinition('probe');
  const anchor = "    ctx.state.stage = 'composing';\n";
  expect(source).toContain(anchor);
  return source.replace(anchor, anchor + lines.map((line) => `    ${line}\n`).join(''));
}

function lineOf(source: string, text: string): number {
  return source.split('\n').findIndex((line) => line.includes(text)) + 1;
}

describe('the type checker', () => {
  let checker: TypeChecker;
  beforeAll(() => {
    checker = new TypeChecker({ libs, declarations });
  });

  it('finds nothing wrong with the blank definition', () => {
    checker.setFile(blankDefinition('welcome'));
    expect(checker.problems()).toEqual([]);
  });

  it('reports a value of the wrong type at its line and column', () => {
    const source = withLines("const x: number = 'a';");
    checker.setFile(source);
    expect(checker.problems()).toEqual([
      expect.objectContaining({
        kind: 'type',
        code: 2322,
        message: "Type 'string' is not assignable to type 'number'.",
        line: lineOf(source, 'const x'),
        column: 11,
      }),
    ]);
  });

  it("reports a wrong argument to a ctx operation, from the engine's declaration of it", () => {
    const source = withLines("yield* ctx.sleep('abc');");
    checker.setFile(source);
    expect(checker.problems()).toEqual([
      expect.objectContaining({
        kind: 'type',
        code: 2345,
        message: "Argument of type 'string' is not assignable to parameter of type 'number'.",
        line: lineOf(source, 'ctx.sleep'),
        column: source.split('\n')[lineOf(source, 'ctx.sleep') - 1]!.indexOf("'abc'") + 1,
        endColumn: source.split('\n')[lineOf(source, 'ctx.sleep') - 1]!.indexOf("'abc'") + 6,
      }),
    ]);
  });

  it('reports a ctx member the context does not have, with the nearest one', () => {
    const source = withLines('yield* ctx.sleeep(100);');
    checker.setFile(source);
    const [problem, ...rest] = checker.problems();
    expect(rest).toEqual([]);
    expect(problem).toMatchObject({ kind: 'type', line: lineOf(source, 'sleeep') });
    expect(problem!.message).toMatch(
      /Property 'sleeep' does not exist on type 'WorkflowContext.*Did you mean 'sleep'\?/s,
    );
  });

  it("reports the parser's problems alone as syntax", () => {
    const source = withLines('const broken = (1 + ;');
    checker.setFile(source);
    const problems = checker.problems();
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((problem) => problem.kind === 'syntax')).toBe(true);
    expect(problems[0]!.line).toBe(lineOf(source, 'const broken'));
  });

  it('shows types on hover and completes ctx members with their documentation', () => {
    const source = withLines('const when = yield* ctx.now();', 'ctx.');
    checker.setFile(source.replace('ctx.\n', 'ctx.s\n'));
    const text = source.replace('ctx.\n', 'ctx.s\n');
    const info = checker.quickInfo(text.indexOf('when ='));
    expect(info?.type).toBe('const when: number');
    const offset = text.indexOf('ctx.s\n') + 'ctx.s'.length;
    const completions = checker.completions(offset);
    const names = completions?.items.map((item) => item.name) ?? [];
    expect(names).toEqual(expect.arrayContaining(['sleep', 'activity', 'waitForSignal', 'state']));
    expect(completions?.from).toBe(offset - 1);
    const detail = checker.completionDetail(offset, { name: 'sleep' });
    expect(detail?.signature).toMatch(/sleep\(ms: number\)/);
    // The documentation comes from the engine's declaration, as written there.
    expect(checker.completionDetail(offset, { name: 'state' })?.doc).toContain('saved with every checkpoint');
  });

  it('reports an import the studio does not offer', () => {
    const source = `import { defineWorkflow } from 'shuttle/server';\n${blankDefinition('x').split('\n').slice(1).join('\n')}`;
    checker.setFile(source);
    expect(checker.problems()).toEqual([
      expect.objectContaining({ kind: 'type', line: 1, code: 2307 }),
      // defineWorkflow is then unknown, and delay (no longer imported) too
      ...checker.problems().slice(1),
    ]);
    expect(checker.problems()[0]!.message).toContain("Cannot find module 'shuttle/server'");
  });

  describe('the built-in demos', () => {
    const demos = [...builtInInfo].filter(([, info]) => info.source !== null);

    it('are all there', () => {
      expect(demos.map(([name]) => name)).toEqual(
        expect.arrayContaining(['order', 'countdown', 'saga', 'shipment']),
      );
    });

    it.each(demos.map(([name]) => [name] as const))('%s has no type errors', (name) => {
      // Beside each other, as in src/workflows: a demo imports types from another (order ← shipment).
      for (const [other, info] of demos) checker.setFile(info.source!, `/src/workflows/${other}.ts`);
      expect(checker.problems(`/src/workflows/${name}.ts`)).toEqual([]);
    });

    it.each(demos.map(([name, info]) => [name, info.source!] as const))(
      'a copy of %s made with Copy as template has no type errors, the demos beside it as in the studio',
      (name, source) => {
        const responses: TypeCheckResponse[] = [];
        const serve = serveTypeChecks(checker, (response) => responses.push(response));
        serve({
          id: 1,
          kind: 'siblings',
          files: Object.fromEntries(demos.map(([other, info]) => [other, info.source!])),
        });
        expect(responses).toEqual([{ id: 1, kind: 'siblings' }]);
        checker.setFile(templateFrom(source, `${name}-copy`));
        expect(checker.problems()).toEqual([]);
      },
    );
  });

  describe("the worker's answers", () => {
    it('checks only the latest of the texts sent in a burst, and answers hover and completion in order', async () => {
      const responses: TypeCheckResponse[] = [];
      const serve = serveTypeChecks(checker, (response) => responses.push(response));
      const clean = blankDefinition('burst');
      const broken = withLines("const x: number = 'a';");
      serve({ id: 1, kind: 'problems', text: clean });
      serve({ id: 2, kind: 'problems', text: broken });
      serve({ id: 3, kind: 'quick-info', text: clean, offset: clean.indexOf('ctx,') });
      await expect.poll(() => responses.length).toBe(3);
      expect(responses[0]).toMatchObject({
        id: 3,
        kind: 'quick-info',
        info: { type: expect.stringContaining('WorkflowContext') },
      });
      expect(responses[1]).toEqual({ id: 1, kind: 'stale' });
      expect(responses[2]).toMatchObject({
        id: 2,
        kind: 'problems',
        problems: [{ code: 2322, line: lineOf(broken, 'const x') }],
      });
    });

    it('answers an error, naming the request, when the checker throws', () => {
      const responses: TypeCheckResponse[] = [];
      const failing = Object.assign(Object.create(checker) as TypeChecker, {
        quickInfo: () => {
          throw new Error('no program');
        },
      });
      serveTypeChecks(failing, (response) => responses.push(response))({
        id: 7,
        kind: 'quick-info',
        text: 'x',
        offset: 0,
      });
      expect(responses).toEqual([
        { id: 7, kind: 'error', message: 'The type checker failed on this source (quick-info): no program' },
      ]);
    });
  });
});
