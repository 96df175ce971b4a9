// What workflow code imports: `shuttle/workflow` only.
import {
  ActivityFailedError,
  CancelledError,
  defineWorkflow,
  delay,
  type WorkflowContext,
  type WorkflowInput,
  type WorkflowOutput,
} from 'shuttle/workflow';

export const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  *run(ctx: WorkflowContext<{ tries: number }>, input: { name: string }) {
    ctx.state.tries = 0;
    try {
      const text = yield* ctx.activity('compose', async ({ signal }) => {
        await delay(5, signal);
        return `hello ${input.name}`;
      });
      yield* ctx.sleep(10);
      return { text, length: text.length };
    } catch (error) {
      if (error instanceof ActivityFailedError || error instanceof CancelledError)
        return { text: '', length: 0 };
      throw error;
    }
  },
});

// The definition's types flow to callers.
export const input: WorkflowInput<typeof greet> = { name: 'ada' };
export type GreetOutput = WorkflowOutput<typeof greet>;
const length: GreetOutput['length'] = 3;
void length;
