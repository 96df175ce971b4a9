import { expect, test } from './fixtures/studio';

/**
 * External completion in the studio: the manual-approval demo, started from tab A's start dialog, waits on
 * an activity completed from outside. Tab B's page of it shows the wait and its token, and completes it
 * through the Complete… dialog; the workflow completes with B's decision, in both tabs. A second completion
 * with the same token (the console API, in tab A) is refused with ActivityCompletionRefusedError, and so is
 * one from the UI. Fail… fails another one with a message.
 *
 * Budgets: the demo's activity hands the request on in 20 ms; every wait is the default 15 s expectation.
 */

test('an external activity is completed from another tab’s page, exactly once', async ({
  studio: tabA,
  openTab,
}) => {
  const workflowId = await tabA.startFromDialog({ workflowType: 'manual-approval', workflowId: 'po-1042' });
  await tabA.detail.expectStatus('running');

  const tabB = await openTab();
  const page = tabB.page;
  const detail = await tabB.openWorkflow(workflowId);
  const waiting = page.getByTestId('detail.external-activity');
  await expect(waiting).toContainText('Waiting for an external completion');
  await expect(waiting).toHaveAttribute('data-activity', 'await-decision');
  await expect(detail.waitingOn).toContainText("activity 'await-decision' · external");
  const token = await page.getByTestId('detail.completion-token').getAttribute('data-full-id');
  expect(token).toBeTruthy();
  // Tab A shows the same wait and token.
  await expect(tabA.page.getByTestId('detail.completion-token')).toHaveAttribute('data-full-id', token!);

  await page.getByTestId('detail.complete-activity').click();
  await page.getByTestId('detail.complete-value').fill('{ "approved": true, "by": "tab B" }');
  await page.getByTestId('detail.complete-submit').click();
  await expect(page.getByTestId('detail.complete-dialog')).toBeHidden();
  await detail.expectStatus('completed');
  await expect(waiting).toHaveCount(0);
  await tabA.detail.expectStatus('completed');
  expect((await tabA.describe(workflowId)).result).toEqual({
    requestId: 'PO-1042',
    approved: true,
    decision: { approved: true, by: 'tab B' },
  });

  // A second completion of the same activity is refused, and nothing changes.
  const second = await tabA.page.evaluate(
    (value) =>
      window.shuttle!.completeActivity(value, { approved: false }).then(
        () => null,
        (error: Error) => ({ name: error.name, message: error.message }),
      ),
    token!,
  );
  expect(second?.name).toBe('ActivityCompletionRefusedError');
  expect(second?.message).toContain('was not completed');
  expect(((await tabA.describe(workflowId)).result as { approved: boolean }).approved).toBe(true);

  // Fail… from the UI: the demo asks once, so the workflow fails with the message given.
  await tabA.startViaConsole('manual-approval', { requestId: 'PO-7', summary: 'A desk' }, { id: 'po-7' });
  const failing = await tabB.openWorkflow('po-7');
  await page.getByTestId('detail.fail-activity').click();
  await expect(page.getByTestId('detail.fail-submit')).toBeDisabled();
  await page.getByTestId('detail.fail-message').fill('Over budget');
  await page.getByTestId('detail.fail-name').fill('Rejected');
  await page.getByTestId('detail.fail-submit').click();
  await failing.expectStatus('failed');
  await expect(failing.waitingOn).toContainText('Rejected: Over budget');
});

test('a completion that lost the race is refused in the dialog, in the engine’s words', async ({
  studio,
}) => {
  const { page } = studio;
  await studio.startViaConsole('manual-approval', { requestId: 'PO-9', summary: 'Chairs' }, { id: 'po-9' });
  await studio.openWorkflow('po-9');
  await page.getByTestId('detail.complete-activity').click();
  await page.getByTestId('detail.complete-value').fill('true');
  // Someone else completes it first (the console, as a webhook would).
  const token = await page.getByTestId('detail.completion-token').getAttribute('data-full-id');
  await page.evaluate((value) => window.shuttle!.completeActivity(value, 'by someone else'), token!);
  await page.getByTestId('detail.complete-submit').click();
  const refusal = page.getByTestId('detail.complete-error');
  await expect(refusal).toHaveAttribute('data-error-name', 'ActivityCompletionRefusedError');
  await expect(refusal).toContainText('Completion refused');
  await studio.detail.expectStatus('completed');
});
