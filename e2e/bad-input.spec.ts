import { expect, test } from './fixtures/studio';

/**
 * End-to-end scenario 10 (docs/quality.md), the input half: invalid JSON and an oversized payload in the
 * start dialog each get a clear message in the dialog, nothing is started, and the dialog and the studio go
 * on working — the corrected input starts the workflow.
 */

test('invalid JSON, an oversized payload, a taken id and an over-long id get clear messages, and nothing else breaks', async ({
  studio,
}) => {
  const dialog = await studio.startDialog.open();
  await dialog.choose('countdown');
  await expect(dialog.input).toHaveValue(/"from": 20/);

  await dialog.setInput('{ "from": 3, "tickMs": }');
  await expect(dialog.jsonError).toContainText('Invalid JSON');
  await expect(dialog.jsonError).toContainText('line 1');
  await expect(dialog.submitButton).toBeDisabled();

  await dialog.setInput(JSON.stringify({ from: 3, padding: 'x'.repeat(300 * 1024) }));
  await expect(studio.page.getByTestId('start.input-size')).toContainText('over the engine’s');
  await dialog.submit();
  await expect(dialog.error).toHaveAttribute('data-error-name', 'PayloadTooLargeError');
  await expect(dialog.error).toContainText('Payload too large');
  await expect(dialog.error).toContainText('over the limit of 262144 bytes');
  await expect(dialog.root).toBeVisible();

  await dialog.setInput('{ "from": 2, "tickMs": 50 }');
  await dialog.setWorkflowId('x'.repeat(257));
  await expect(dialog.fieldError).toContainText('the limit is 256');
  await expect(dialog.submitButton).toBeDisabled();

  await studio.startViaConsole('countdown', { from: 100, tickMs: 1_000 }, { id: 'taken' });
  await dialog.setWorkflowId('taken');
  await dialog.submit();
  await expect(dialog.error).toHaveAttribute('data-error-name', 'WorkflowAlreadyExistsError');
  await expect(dialog.error).toContainText("Workflow 'taken' already exists");

  await dialog.setWorkflowId('fixed');
  await dialog.submit();
  await expect(dialog.root).toBeHidden();
  await expect(studio.detail.workflowId).toHaveAttribute('data-full-id', 'fixed');
  await studio.detail.expectStatus('completed');

  await studio.openScreen('workflows');
  await expect(studio.page.getByTestId('workflows.row')).toHaveCount(2);
  await expect(studio.engineStatus).toHaveText('running');
});
