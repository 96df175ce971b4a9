import { expect, test } from './fixtures/fleet';

/**
 * The queue drill on a real fleet (`shuttle dev`: three worker processes over a throwaway PostgreSQL), run
 * from the Chaos screen in server mode: six payments start on the fleet onto the demos' `payments` queue (2 at
 * once, 1 per key), the worker running the most admitted ones is killed (SIGKILL), and the drill checks from
 * the timelines that never more than two ran at once (one per key), that all six completed, that the killed
 * worker's payments finished on another worker without being admitted again, and that the queue holds none of
 * their slots at the end. (In tab mode the same drill runs in e2e/start-race.spec.ts.)
 */
test('the queue drill kills a worker running admitted payments and the queue limit holds', async ({
  studio,
}) => {
  test.setTimeout(300_000);
  const page = studio.page;
  const { ttlMs, graceMs } = (await studio.hello()).claimTimings;
  await studio.openScreen('chaos');
  const card = page.locator('[data-testid="chaos.drill"][data-drill="queue-crash"]');
  await expect(card.getByTestId('chaos.needs-tab-mode')).toHaveCount(0);
  await expect(card.getByTestId('chaos.run')).toBeEnabled({ timeout: ttlMs + graceMs });
  await card.getByTestId('chaos.run').click();
  const report = card.getByTestId('chaos.report');
  // The drill's waits: up to 90 s for a worker to run an admitted payment (a spent rate window included),
  // the takeover, up to 150 s for the six to finish, and a fresh worker process after the kill.
  await expect(report).toBeVisible({ timeout: 240_000 });
  await expect(report, await report.innerText()).toHaveAttribute('data-status', 'passed');
  const limit = card.getByTestId('chaos.check').filter({ hasText: 'Never more than the queue admits' });
  await expect(limit).toHaveAttribute('data-ok', 'true');
  await expect(limit).toContainText(
    /at most 2 of 2 at once \(at most 1 of 1 per key\); 6 of 6 completed; .+ held [12] of them when it was killed/,
  );
});
