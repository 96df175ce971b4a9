import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/studio';

/**
 * The studio by keyboard only: after the workflows are set up through the console API, every step below is
 * a key press (`page.keyboard`) — no click. The command palette (Ctrl K) opens a workflow; the custody chart's
 * marks are tab stops that Enter selects, + / − zoom and 0 fits; an event's details open from the event
 * list; the signal and cancel dialogs are filled in and confirmed.
 */

/**
 * Presses Tab until the focused element matches (`testId`, or a CSS selector), at most `max` times; fails when
 * it is never reached. Playwright's focus moves only by the key presses.
 */
async function tabTo(page: Page, target: { testId?: string; selector?: string }, max = 120): Promise<void> {
  for (let presses = 0; presses < max; presses++) {
    const reached = await page.evaluate(
      ({ testId, selector }) => {
        const active = document.activeElement as HTMLElement | null;
        if (!active) return false;
        if (testId !== undefined) return active.dataset.testid === testId;
        return selector !== undefined && active.matches(selector);
      },
      { testId: target.testId, selector: target.selector },
    );
    if (reached) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${JSON.stringify(target)} in ${max} presses`);
}

/** Opens a workflow's page through the command palette, by its id. */
async function openByPalette(page: Page, workflowId: string): Promise<void> {
  await page.keyboard.press('Control+k');
  await expect(page.getByTestId('palette.dialog')).toBeVisible();
  await expect(page.getByTestId('palette.input')).toBeFocused();
  await page.keyboard.type(workflowId);
  await expect(page.getByTestId('palette.item').first()).toContainText(workflowId);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('palette.dialog')).toBeHidden();
  await expect(page.getByTestId('detail.workflow-id')).toHaveAttribute('data-full-id', workflowId);
}

test('by keyboard only: palette, a workflow, its chart, an event’s details, signal and cancel dialogs', async ({
  studio,
}) => {
  test.setTimeout(120_000);
  const page = studio.page;
  const order = await studio.startViaConsole(
    'order',
    {
      orderId: 'K-1',
      customer: 'ada@example.com',
      items: [{ sku: 'TEA-GREEN-250G', quantity: 1, unitPriceCents: 850 }],
      shippingAddress: '12 Analytical Row, London',
      packingMs: 100,
      transitMs: 100,
      // the test signals approval after a minute of keyboard work on a loaded machine: the default 60 s
      // approval timeout would reject the order first
      approvalTimeoutMs: 600_000,
    },
    { id: 'keyboard-order' },
  );
  const long = await studio.startViaConsole(
    'countdown',
    { from: 600, tickMs: 60_000 },
    { id: 'keyboard-long' },
  );
  await expect.poll(async () => (await studio.describe(order)).pending?.name).toBe('approve');

  // The palette opens the order's page.
  await openByPalette(page, order);

  // The chart: a mark is a tab stop; Enter selects its operation (the event list highlights it).
  await tabTo(page, { selector: '[data-testid="detail.span"], [data-testid="detail.point"]' });
  const mark = page.locator(':focus');
  await expect(mark).toHaveAttribute('aria-pressed', 'false');
  await page.keyboard.press('Enter');
  await expect(mark).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('[data-testid="detail.event"][data-selected="true"]').first()).toBeVisible();
  // + zooms in (the Fit button appears), − zooms back out, 0 fits.
  const range = page.getByTestId('detail.zoom-range');
  const whole = await range.textContent();
  await page.keyboard.press('+');
  await expect(page.getByTestId('detail.zoom-fit')).toBeVisible();
  await expect(range).not.toHaveText(whole!);
  await page.keyboard.press('+');
  await page.keyboard.press('-');
  await expect(page.getByTestId('detail.zoom-fit')).toBeVisible();
  await page.keyboard.press('0');
  await expect(page.getByTestId('detail.zoom-fit')).toBeHidden();
  // The whole run again (a live run's end moves on; its start does not).
  await expect(range).toHaveText(new RegExp(`^${whole!.split(' – ')[0]} – `));
  // Space activates a mark as Enter does (it stays selected).
  await page.keyboard.press(' ');
  await expect(mark).toHaveAttribute('aria-pressed', 'true');

  // An event's details, from the event list.
  await tabTo(page, { testId: 'detail.event-open' });
  await page.keyboard.press('Enter');
  const eventDialog = page.getByRole('dialog');
  await expect(eventDialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(eventDialog).toBeHidden();

  // Signal `approve` through its dialog.
  await tabTo(page, { testId: 'detail.signal-button' });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('detail.signal-dialog')).toBeVisible();
  // The name field: it proposes the signal the workflow waits for; typed over all the same.
  await tabTo(page, { testId: 'detail.signal-name' });
  await page.keyboard.press('Control+a');
  await page.keyboard.type('approve');
  await tabTo(page, { testId: 'detail.signal-value' });
  await page.keyboard.type('{ "ok": true, "by": "keyboard" }');
  await tabTo(page, { testId: 'detail.signal-submit' });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('detail.signal-result')).toContainText('Signal approve sent');
  // Once the workflow has consumed it (and waits for nothing more), the dialog still says what happened
  await expect
    .poll(async () => (await studio.describe(order)).state)
    .toMatchObject({ approvedBy: 'keyboard' });
  await expect(page.getByTestId('detail.signal-result')).toContainText('The workflow was waiting for it');
  await expect(page.getByTestId('detail.signal-note')).toBeHidden();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('detail.signal-dialog')).toBeHidden();
  await studio.detail.expectStatus('completed', 30_000);
  expect((await studio.describe(order)).state).toMatchObject({ approvedBy: 'keyboard' });

  // Another workflow, cancelled through its dialog.
  await openByPalette(page, long);
  await tabTo(page, { testId: 'detail.cancel-button' });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('detail.cancel-dialog')).toBeVisible();
  await tabTo(page, { testId: 'detail.cancel-reason' });
  await page.keyboard.type('by keyboard');
  await tabTo(page, { testId: 'detail.cancel-confirm' });
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('detail.cancel-dialog')).toBeHidden();
  await studio.detail.expectStatus('cancelled', 30_000);
  expect((await studio.describe(long)).reason).toBe('by keyboard');
});
