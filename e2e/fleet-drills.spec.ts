import { expect, test } from './fixtures/fleet';

/**
 * The chaos drills on a real fleet (`shuttle dev`: three worker processes over a throwaway PostgreSQL), run
 * from the Chaos screen of the studio in server mode, as in tabs: the owner process frozen past the TTL
 * (SIGSTOP, then SIGCONT), killed mid-activity (SIGKILL) and stopped gracefully (SIGTERM). Each ends with
 * the same ownership invariants over its workflows' durable timelines as in tab mode, and must pass; each
 * starts one more worker after its break, so the next has a fleet to work on. The race needs browser
 * engines and says so.
 */
test('the freeze, crash and graceful handoff drills run on the fleet’s processes and pass', async ({
  studio,
}) => {
  test.setTimeout(300_000);
  const page = studio.page;
  const { ttlMs, graceMs } = (await studio.hello()).claimTimings;
  await studio.openScreen('chaos');

  const race = page.locator('[data-testid="chaos.drill"][data-drill="race"]');
  await expect(race.getByTestId('chaos.needs-tab-mode')).toBeVisible();
  await expect(race.getByTestId('chaos.run')).toBeDisabled();

  for (const drill of ['freeze', 'crash', 'handoff']) {
    const card = page.locator(`[data-testid="chaos.drill"][data-drill="${drill}"]`);
    await expect(card.getByTestId('chaos.run')).toBeEnabled({ timeout: ttlMs + graceMs });
    await card.getByTestId('chaos.run').click();
    const report = card.getByTestId('chaos.report');
    // A drill's own waits are bounded by the claim timings (the freeze lasts TTL + 4 s); a fresh worker
    // process takes a few seconds to start after the break.
    await expect(report).toBeVisible({ timeout: 4 * (ttlMs + graceMs) + 60_000 });
    await expect(report, `${drill}: ${await report.innerText()}`).toHaveAttribute('data-status', 'passed');
  }
});
