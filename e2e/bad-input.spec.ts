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

  // Over the payload limit: the size preview says the engine refuses it, so Start waits until it fits.
  await dialog.setInput(JSON.stringify({ from: 3, padding: 'x'.repeat(300 * 1024) }));
  await expect(studio.page.getByTestId('start.input-size')).toContainText('over the engine’s');
  await expect(dialog.submitButton).toBeDisabled();
  await studio.page.keyboard.press('Control+Enter');
  await expect(dialog.root).toBeVisible();
  await expect(dialog.error).toBeHidden();

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

test('an oversized signal payload is refused in words: its size and the limit, the advice once, no workflow id', async ({
  studio,
}) => {
  const id = await studio.startViaConsole('countdown', { from: 600, tickMs: 500 }, { id: 'big-signal' });
  await studio.openWorkflow(id);
  const page = studio.page;
  await page.getByTestId('detail.signal-button').click();
  await page.getByTestId('detail.signal-name').fill('ping');
  await page.getByTestId('detail.signal-value').fill(JSON.stringify('x'.repeat(300 * 1024)));
  await page.getByTestId('detail.signal-submit').click();
  const error = page.getByTestId('detail.signal-error');
  await expect(error).toHaveAttribute('data-error-name', 'PayloadTooLargeError');
  await expect(error).toContainText(
    "Payload of signal 'ping' is 300.0 KB (307,202 bytes), over the engine’s limit of 256.0 KB.",
  );
  await expect(error).not.toContainText(id);
  expect(((await error.textContent()) ?? '').split('pass a reference').length - 1).toBe(1);
});
