import { expect, test } from './fixtures/studio';

/**
 * The console API (`window.shuttle`) in the built studio: calls settle with the engine's values, and errors
 * reach the page with the engine's error names and detail fields.
 */

test('engine errors reach the page with their class name, message and detail fields', async ({ studio }) => {
  const workflowId = await studio.startViaConsole('countdown', { from: 50, tickMs: 1_000 }, { id: 'twice' });
  const error = await studio.page.evaluate(async (id) => {
    try {
      await window.shuttle!.start('countdown', { from: 1 }, { id });
      return null;
    } catch (caught) {
      const { name, message, workflowId, status } = caught as Error & Record<string, unknown>;
      return { name, message, workflowId, status, isError: caught instanceof Error };
    }
  }, workflowId);
  expect(error).toMatchObject({ workflowId: 'twice', status: 'running', isError: true });
  expect(error?.message).toContain("Workflow 'twice' already exists");
  expect(error?.name).toBe('WorkflowAlreadyExistsError');
});

test('waitFor resolves once the workflow reaches the status, and the timeline records each tick once', async ({
  studio,
}) => {
  const workflowId = await studio.startViaConsole('countdown', { from: 4, tickMs: 100 });
  const finished = await studio.page.evaluate((id) => window.shuttle!.waitFor(id, 'completed'), workflowId);
  expect(finished).toMatchObject({ status: 'completed', result: { counted: 4 }, epoch: 1 });
  const timeline = await studio.timeline(workflowId);
  expect(timeline.filter((entry) => entry.kind === 'timer-fired')).toHaveLength(4);
  await expect(studio.rowStatus(workflowId)).toHaveText('completed');
});
