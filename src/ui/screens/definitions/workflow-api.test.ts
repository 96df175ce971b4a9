import { describe, expect, it } from 'vitest';
import type { WorkflowContext } from '../../../public';
import { contextMembers, contextName, contextProblems, interfaceMembers } from './workflow-api';

/** Every member of the engine's WorkflowContext: the type checker keeps this list complete. */
const declared: Record<keyof WorkflowContext, true> = {
  workflowId: true,
  workflowType: true,
  version: true,
  state: true,
  isReplaying: true,
  activity: true,
  sleep: true,
  waitForSignal: true,
  waitUntil: true,
  startChild: true,
  all: true,
  race: true,
  now: true,
  random: true,
  uuid: true,
  patched: true,
  deprecatePatch: true,
  continueAsNew: true,
  signalWorkflow: true,
  cancelWorkflow: true,
  setAttributes: true,
};

describe('the workflow API the editor knows', () => {
  it('is read from the engine’s declaration: every member of WorkflowContext, with its signature and docs', () => {
    expect(contextMembers.map((member) => member.name).sort()).toEqual(Object.keys(declared).sort());
    const sleep = contextMembers.find((member) => member.name === 'sleep')!;
    expect(sleep).toMatchObject({ kind: 'method', signature: 'sleep(ms: number): Operation<void>' });
    const state = contextMembers.find((member) => member.name === 'state')!;
    expect(state.kind).toBe('property');
    expect(state.doc).toContain('checkpoint');
    const all = contextMembers.find((member) => member.name === 'all')!;
    expect(all.signature).toMatch(
      /^all<const Ops extends readonly Operation<unknown>\[\]>\(operations: Ops\)/,
    );
  });

  it('parses members across lines, with nested braces and comments', () => {
    const source = `
      export interface Thing<S = {}> {
        /** The name. */
        readonly name: string;
        // a line comment
        run(options: { a: number; b: string }): { done: boolean };
        wait<T>(
          name: string,
          options?: { timeoutMs?: number },
        ): T;
      }
      export interface Other { x: number }`;
    expect(interfaceMembers(source, 'Thing')).toEqual([
      { name: 'name', signature: 'name: string', doc: 'The name.', kind: 'property' },
      {
        name: 'run',
        signature: 'run(options: { a: number; b: string }): { done: boolean }',
        doc: null,
        kind: 'method',
      },
      {
        name: 'wait',
        signature: 'wait<T>(name: string, options?: { timeoutMs?: number }): T',
        doc: null,
        kind: 'method',
      },
    ]);
  });

  it('reports a member the context does not have, where it is, with the nearest one', () => {
    const source = [
      "import { defineWorkflow } from 'shuttle';",
      '',
      'export default defineWorkflow({',
      "  name: 'typo',",
      '  version: 1,',
      '  *run(ctx, input: { n: number }) {',
      '    yield* ctx.sleeep(100);',
      "    // ctx.nothing in a comment, 'ctx.nor' in a string",
      '    /* ctx.nor in a block */',
      "    const value = yield* ctx.activity('a', () => 1);",
      '    return value + input.n + ctx.frobnicate;',
      '  },',
      '});',
    ].join('\n');
    expect(contextProblems(source)).toEqual([
      {
        kind: 'type',
        message: "Property 'sleeep' does not exist on the workflow context (ctx). Did you mean 'sleep'?",
        line: 7,
        column: 16,
      },
      expect.objectContaining({ line: 11, column: 34, message: expect.stringContaining("'frobnicate'") }),
    ]);
    expect(contextProblems(source.replace('sleeep', 'sleep').replace(' + ctx.frobnicate', ''))).toEqual([]);
  });

  it('follows the name the source gives the context', () => {
    const source = '  *run(context, input) {\n    yield* context.sleap(1);\n    yield* ctx.whatever();\n  }';
    expect(contextName(source)).toBe('context');
    expect(contextProblems(source)).toEqual([expect.objectContaining({ line: 2, column: 20 })]);
  });
});
