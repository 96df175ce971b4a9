import { expect, test } from './fixtures/studio';

/**
 * Event detail: the event list shortens long lines (a failed attempt's message, a takeover's
 * explanation); opening an event shows everything it recorded — the whole failure with its stack, the
 * attempt, the engine and epoch that wrote it — and the other entries of the same operation.
 */
test('an event opens in full: the failure with its stack, attempt, engine and epoch, and its operation', async ({
  studio,
}) => {
  const engineId = await studio.engineId();
  const workflowId = await studio.startViaConsole(
    'flaky',
    { failures: 1, maxAttempts: 3, initialIntervalMs: 100 },
    { id: 'event-detail-flaky' },
  );
  const detail = await studio.openWorkflow(workflowId);
  await detail.expectStatus('completed');
  const failed = detail.event('activity-failed').first();
  await expect(failed).toBeVisible();
  const full = (await studio.timeline(workflowId)).find((entry) => entry.kind === 'activity-failed')!;
  const error = (full.detail as { error: { name: string; message: string; stack?: string } }).error;

  await failed.getByTestId('detail.event-open').click();
  const dialog = studio.page.getByTestId('detail.event-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('detail.event-error')).toContainText(error.name);
  await expect(dialog.getByTestId('detail.event-error')).toContainText(error.message);
  if (error.stack) await expect(dialog.getByTestId('detail.event-error')).toContainText('Stack');
  await expect(dialog).toContainText('Attempt');
  await expect(dialog.getByTestId('detail.event-epoch')).toHaveText('1');
  await expect(dialog.getByTestId('detail.event-engine').locator('[data-engine-id]')).toHaveAttribute(
    'data-engine-id',
    engineId,
  );
  // The operation's other entries: the attempts, the retry, the completion.
  await expect(dialog).toContainText('attempt 2 completed');
  await studio.page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});
