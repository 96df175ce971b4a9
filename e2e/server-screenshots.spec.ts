import type { Page } from '@playwright/test';
import { entriesOf } from './fixtures/console';
import { expect, test, type FleetStudio } from './fixtures/fleet';

/**
 * Takes the server-mode screenshots in docs/screenshots (`server-*.png`): every screen of the studio on a
 * `shuttle dev` fleet of three workers at 1280×800, light and dark — a handoff between two processes after a
 * kill, a freeze with a refused write, schedules, pending work, a drill report. Not part of `npm test`; run
 * it with
 *
 *     SHUTTLE_SCREENSHOTS=1 npx playwright test e2e/server-screenshots.spec.ts
 */

test.skip(
  !process.env.SHUTTLE_SCREENSHOTS,
  'set SHUTTLE_SCREENSHOTS=1 to take the documentation screenshots',
);

const dir = 'docs/screenshots';

async function shoot(
  page: Page,
  name: string,
  overlay: { show: () => Promise<void>; hide: () => Promise<void> } | null = null,
): Promise<void> {
  await page.mouse.move(0, 799);
  for (const theme of ['light', 'dark']) {
    await page.getByTestId(`shell.theme-${theme}`).click();
    if (overlay) await overlay.show();
    await page.evaluate(() => document.fonts.ready);
    await page.waitForTimeout(400);
    await page.screenshot({ path: `${dir}/${name}-${theme}.png` });
    if (overlay) await overlay.hide();
  }
  await page.getByTestId('shell.theme-light').click();
}

async function go(studio: FleetStudio, hash: string): Promise<void> {
  await studio.page.evaluate((value) => {
    location.hash = value;
  }, hash);
  await studio.page.waitForTimeout(800);
}

async function ownerOf(studio: FleetStudio, workflowId: string): Promise<string> {
  await expect.poll(async () => (await studio.describe(workflowId)).owner?.engineId ?? null).not.toBeNull();
  return (await studio.describe(workflowId)).owner!.engineId;
}

test('server-mode documentation screenshots', async ({ studio }) => {
  test.setTimeout(300_000);
  const page = studio.page;
  const hello = await studio.hello();
  const { ttlMs, graceMs } = hello.claimTimings;
  const start = (type: string, input: unknown, id: string) =>
    page.evaluate(({ type, input, id }) => window.shuttle!.start(type, input, { id }), { type, input, id });

  // A realistic mix.
  for (let index = 1; index <= 6; index++)
    await start('countdown', { from: 600, tickMs: 500 + index * 50 }, `countdown-eu-${index}`);
  await start('approval', undefined, 'expense-EXP-311').catch(() => null);
  await start('flaky', { failures: 2, maxAttempts: 5, initialIntervalMs: 400 }, 'flaky-webhook');
  await start('flaky', { failures: 6, maxAttempts: 3, initialIntervalMs: 200 }, 'flaky-ledger-sync');
  await start('fan-out', undefined, 'quotes-tea-q3').catch(() => null);
  await start('saga', undefined, 'trip-lisbon').catch(() => null);
  await page.evaluate(() => void window.shuttle!.result('countdown-eu-1').catch(() => null));

  // A handoff between two processes: kill the owner of a slow pipeline mid-step.
  const steps = [
    'extract',
    'clean',
    'dedupe',
    'enrich',
    'validate',
    'aggregate',
    'index',
    'load',
    'verify',
    'publish',
  ];
  const etl = await start(
    'slow-steps',
    { steps: steps.map((name) => ({ name, ms: 700 })) },
    'etl-nightly-2026-12-03',
  );
  await expect
    .poll(async () => entriesOf(await studio.timeline(etl), 'activity-completed').length, { timeout: 20_000 })
    .toBeGreaterThanOrEqual(3);
  const victim = await ownerOf(studio, etl);
  await studio.openScreen('engines');
  await studio.card(victim).getByTestId('engines.kill').click();
  await page.getByTestId('engines.kill-confirm').click();
  await expect.poll(async () => (await studio.describe(etl)).epoch, { timeout: ttlMs }).toBe(2);
  await page.getByTestId('engines.start-worker').click();
  await expect(studio.workerCards).toHaveCount(3, { timeout: 20_000 });

  // A freeze past the TTL with a refused write.
  const freezeSteps = Array.from({ length: 40 }, (_, index) => ({ name: `page-${index + 1}`, ms: 250 }));
  const exportId = await start('slow-steps', { steps: freezeSteps }, 'export-orders-2026-12');
  await expect
    .poll(async () => entriesOf(await studio.timeline(exportId), 'activity-completed').length, {
      timeout: 20_000,
    })
    .toBeGreaterThanOrEqual(2);
  const frozen = await ownerOf(studio, exportId);
  const card = studio.card(frozen);
  await card.getByTestId('engines.freeze-seconds').fill(String(Math.ceil((ttlMs + graceMs) / 1000) + 4));
  await card.getByTestId('engines.freeze').click();
  await expect(card.getByTestId('engines.card-status')).toHaveAttribute('data-state', 'frozen');
  await page.waitForTimeout(1_500);
  await shoot(page, 'server-engines');

  await expect
    .poll(async () => (await studio.fenceRejections(exportId)).length, { timeout: 40_000 })
    .toBeGreaterThan(0);
  await go(studio, `#/workflows/${encodeURIComponent(exportId)}`);
  await expect(page.locator('[data-testid="detail.rejected-write"]').first()).toBeAttached();
  await shoot(page, 'server-detail-freeze');

  await go(studio, `#/workflows/${encodeURIComponent(etl)}`);
  await expect(page.getByTestId('detail.status')).toHaveText('completed', { timeout: 30_000 });
  await page.locator('[data-testid="detail.span"][data-status="interrupted"]').first().click();
  await shoot(page, 'server-detail-handoff');

  await go(studio, '#/workflows');
  await shoot(page, 'server-workflows');
  await go(studio, '#/claims');
  await shoot(page, 'server-claims');
  await go(studio, '#/waiters');
  await shoot(page, 'server-waiters');
  await go(studio, '#/definitions/countdown');
  await shoot(page, 'server-definitions');

  // Schedules the workers fire, and the pending work of the running workflows.
  await page.evaluate(async () => {
    await window.shuttle!.schedule('nightly-etl', {
      cron: '0 2 * * *',
      timezone: 'Europe/London',
      workflow: 'slow-steps',
      input: {
        steps: [
          { name: 'extract', ms: 700 },
          { name: 'load', ms: 700 },
        ],
      },
    });
    await window.shuttle!.schedule('countdown-every-minute', {
      cron: '* * * * *',
      workflow: 'countdown',
      input: { from: 5, tickMs: 500 },
      overlap: 'skip',
    });
  });
  await go(studio, '#/schedules');
  await expect(page.getByText('nightly-etl').first()).toBeVisible();
  await shoot(page, 'server-schedules');
  await go(studio, '#/pending');
  await expect(page.getByText('countdown-eu-2').first()).toBeVisible();
  await shoot(page, 'server-pending');

  await go(studio, '#/chaos');
  await page.locator('[data-drill="crash"]').getByTestId('chaos.run').click();
  await expect(page.locator('[data-drill="crash"]').getByTestId('chaos.report')).toBeVisible({
    timeout: 60_000,
  });
  await shoot(page, 'server-chaos');

  await go(studio, '#/workflows');
  await shoot(page, 'server-start-dialog', {
    show: async () => {
      await page.getByTestId('workflows.start-button').click();
      await page.locator('[data-testid="start.definition"][data-definition="countdown"]').click();
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('start.dialog')).toBeHidden();
    },
  });
  await shoot(page, 'server-palette', {
    show: async () => {
      await page.keyboard.press('Control+k');
      await page.getByTestId('palette.input').fill('worker');
      await page.waitForTimeout(500);
    },
    hide: async () => {
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('palette.dialog')).toBeHidden();
    },
  });
});
