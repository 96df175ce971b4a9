/**
 * Type-level checks of the public workflow API: inputs and outputs flow from definitions to `start`,
 * `result` and `startChild`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import { defineWorkflow, type WorkflowContext, type WorkflowInput, type WorkflowOutput } from './workflow';

const typedInput = defineWorkflow({
  name: 'typed-input',
  version: 1,
  sampleInput: { n: 1, label: 'x' },
  *run(ctx, input: { n: number; label?: string }) {
    yield* ctx.sleep(1);
    return { doubled: input.n * 2 };
  },
});

const _typedState = defineWorkflow({
  name: 'typed-state',
  version: 1,
  *run(ctx: WorkflowContext<{ seen: number }>, input: { n: number }) {
    ctx.state.seen = input.n;
    const child = yield* ctx.startChild(typedInput, { n: 2 });
    expectTypeOf(child).toEqualTypeOf<{ doubled: number }>();
    return { doubled: input.n * 2 };
  },
});

describe('workflow types', () => {
  it('infer input and output from the definition, with or without typed state', () => {
    expectTypeOf<WorkflowOutput<typeof typedInput>>().toEqualTypeOf<{ doubled: number }>();
    expectTypeOf<WorkflowOutput<typeof _typedState>>().toEqualTypeOf<{ doubled: number }>();
    // the sample input does not narrow the input type (an optional field stays optional)
    expectTypeOf<WorkflowInput<typeof typedInput>>().toEqualTypeOf<{ n: number; label?: string }>();
    expectTypeOf<WorkflowInput<typeof _typedState>>().toEqualTypeOf<{ n: number }>();
  });
});
