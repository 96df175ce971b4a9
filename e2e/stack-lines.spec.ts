import { expect, test } from './fixtures/studio';

/**
 * Stacks that point at the author's code (issue #37): a definition saved in the studio fails at known lines
 * — its activity's first attempt at line 9, its body at line 12, each past a type assertion sucrase removes
 * (so only the mapping gets the column right) — and the event detail and the Error tab show
 * `stack-shop.ts:<line>:<column>` of the source, with the engine's frames hidden until "Show engine frames"
 * is ticked. A failed attempt's event says whose the operation's result is (the attempt that recorded it,
 * linked) instead of showing it as its own.
 */
const source = [
  "import { defineWorkflow } from 'shuttle';",
  '',
  'export default defineWorkflow({',
  "  name: 'stack-shop',",
  '  version: 1,',
  '  *run(ctx, input: { failBody?: boolean }) {',
  "    const charged = yield* ctx.activity('charge', ({ attempt }) => {",
  '      const cents: number = 1250;',
  "      if ((attempt as number) === 1) throw new Error('card declined');",
  '      return { cents };',
  '    }, { retry: { maxAttempts: 2, initialIntervalMs: 100 } });',
  "    if (input.failBody as boolean) throw new TypeError('no shipping address');",
  '    return charged;',
  '  },',
  '});',
  '',
].join('\n');

test('a failure names the authored file and line; engine frames show when asked', async ({ studio }) => {
  const page = studio.page;
  const saved = await page.evaluate((text) => window.shuttle!.saveDefinition(text), source);
  expect(saved).toMatchObject({ ok: true, name: 'stack-shop' });

  const workflowId = await studio.startViaConsole('stack-shop', { failBody: true }, { id: 'stack-shop-1' });
  const detail = await studio.openWorkflow(workflowId);
  await detail.expectStatus('failed');

  // The Error tab: the body's TypeError at line 12, column 42 (`new TypeError`).
  const errorStack = page.getByTestId('detail.error-stack-lines');
  await expect(errorStack).toContainText('no shipping address');
  await expect(errorStack).toContainText('stack-shop.ts:12:42');
  await expect(errorStack).not.toContainText('engine.worker');
  await expect(errorStack).not.toContainText('definition.ts');
  await page.getByTestId('detail.error-stack').getByLabel('Show engine frames').check();
  await expect(errorStack).toContainText('engine.worker');

  // The failed attempt's event: the activity's Error at line 9, column 44 (`new Error`), engine frames hidden.
  const timeline = await studio.timeline(workflowId);
  const failed = timeline.find((entry) => entry.kind === 'activity-failed')!;
  const completed = timeline.find((entry) => entry.kind === 'activity-completed')!;
  await detail.event('activity-failed').first().getByTestId('detail.event-open').click();
  const dialog = page.getByTestId('detail.event-dialog');
  await expect(dialog).toContainText(`Event #${failed.seq}`);
  const eventStack = dialog.getByTestId('detail.event-stack-lines');
  await expect(eventStack).toContainText('card declined');
  await expect(eventStack).toContainText('stack-shop.ts:9:44');
  const firstFrame = (await eventStack.textContent())!.split('\n')[1];
  expect(firstFrame).toMatch(/^\s+at .*stack-shop\.ts:9:44\)?$/);
  await expect(eventStack.locator('[data-engine-frame]')).toHaveCount(0);
  await dialog.getByTestId('detail.event-stack').getByLabel('Show engine frames').check();
  await expect(eventStack.locator('[data-engine-frame]').first()).toBeVisible();
  await expect(eventStack).toContainText('engine.worker');

  // Whose result: attempt 2's (linked), not shown as attempt 1's own.
  const heading = dialog.getByTestId('detail.event-outcome-heading');
  await expect(heading).toHaveText('Result of attempt 2');
  await expect(dialog.getByTestId('detail.event-outcome')).toContainText(
    'Attempt 1, this event’s, recorded no result',
  );
  await expect(dialog.getByTestId('detail.event-outcome-value')).toHaveCount(0);
  await dialog.getByTestId('detail.event-outcome-attempt').click();
  await expect(dialog).toContainText(`Event #${completed.seq}`);
  await expect(heading).toContainText('Result');
  await expect(dialog.getByTestId('detail.event-outcome-value')).toContainText('1250');
});
