/**
 * The app's workflows: one, `upload`, a job of six steps. Each step is an activity — the code with side
 * effects — and Shuttle records each one's result durably as soon as it completes. If the tab running the
 * job closes, another tab's engine takes the job over, replays the recorded results (without running those
 * steps again) and carries on from the first step that had not completed.
 *
 * This module is imported by the worker (which runs it) and by the page (for the types and step names).
 */
import { defineWorkflow, delay, type WorkflowContext } from 'shuttle/workflow';
import { announceExecution } from './executions';

/** The steps, in order, with how long each one takes (a stand-in for real work). */
export const uploadSteps = [
  { name: 'read', ms: 300 },
  { name: 'hash', ms: 400 },
  { name: 'compress', ms: 500 },
  { name: 'upload', ms: 500 },
  { name: 'verify', ms: 400 },
  { name: 'publish', ms: 300 },
] as const;

export type UploadInput = { fileName: string };

/** What a step returns (recorded in the workflow's history): which run of the function produced it. */
export type StepReceipt = { step: string; executionId: string; engineId: string };

export type UploadResult = { fileName: string; steps: StepReceipt[] };

/** `ctx.state`: saved with every step, shown by `describe` (and so by `useWorkflow`). */
export type UploadState = { completed: number; total: number; current: string | null };

export const upload = defineWorkflow({
  name: 'upload',
  version: 1,
  description: 'Uploads a file in six steps; survives the tab that started it closing.',
  *run(ctx: WorkflowContext<UploadState>, input: UploadInput) {
    ctx.state.total = uploadSteps.length;
    ctx.state.completed = 0;
    const receipts: StepReceipt[] = [];
    for (const step of uploadSteps) {
      ctx.state.current = step.name;
      const receipt = yield* ctx.activity(step.name, async ({ signal, attempt }) => {
        const execution = announceExecution({ workflowId: ctx.workflowId, step: step.name, attempt });
        await delay(step.ms, signal); // the real work: read, hash, send… — aborted if this tab loses the job
        return { step: step.name, executionId: execution.executionId, engineId: execution.engineId };
      });
      receipts.push(receipt);
      ctx.state.completed = receipts.length;
    }
    ctx.state.current = null;
    const result: UploadResult = { fileName: input.fileName, steps: receipts };
    return result;
  },
});
