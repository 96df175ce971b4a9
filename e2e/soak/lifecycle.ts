/**
 * The Page Lifecycle freeze, as e2e/lifecycle-freeze.spec.ts does it: ask the browser through CDP
 * (`Page.setWebLifecycleState`); the Chromium these tests run answers with success but neither hides nor
 * freezes the page, so no `freeze` fires — then fire the lifecycle events on the document ourselves, exactly
 * as the browser would. Either way the code under test is the studio's own `freeze` and `resume` handlers
 * (src/client/launch.ts: the tab announces its exit and terminates its engine; on resume it starts a fresh
 * one).
 */
import type { CDPSession, Page } from '@playwright/test';

/**
 * How long a read of the page may take before the page counts as frozen by the browser: the client's own
 * request timeout (30 s). A loaded machine exceeds a wait of 1 s: with one, the soak took a slow page for a
 * frozen one and never fired `freeze`.
 */
const frozenAfterMs = 30_000;

export type FrozenBy = 'browser' | 'dispatched';

/** Asks the browser to freeze `page`; fires `freeze` on its document if the browser did not. */
export async function lifecycleFreeze(session: CDPSession, page: Page): Promise<FrozenBy> {
  await page.evaluate(() => {
    (window as { frozeAt?: number }).frozeAt = undefined;
    document.addEventListener('freeze', () => ((window as { frozeAt?: number }).frozeAt = Date.now()), {
      once: true,
    });
  });
  await session.send('Page.setWebLifecycleState', { state: 'frozen' });
  // A frozen page runs no script: this read then settles only after the resume.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fired = await Promise.race([
    page.evaluate(() => (window as { frozeAt?: number }).frozeAt !== undefined),
    new Promise<'frozen'>((resolve) => (timer = setTimeout(() => resolve('frozen'), frozenAfterMs))),
  ]).finally(() => clearTimeout(timer));
  if (fired === 'frozen' || fired) return 'browser';
  await page.evaluate(() => document.dispatchEvent(new Event('freeze')));
  return 'dispatched';
}

/** Resumes a page `lifecycleFreeze` froze (firing `resume` if it fired `freeze`). */
export async function lifecycleResume(session: CDPSession, page: Page, how: FrozenBy): Promise<void> {
  await session.send('Page.setWebLifecycleState', { state: 'active' });
  if (how === 'dispatched') await page.evaluate(() => document.dispatchEvent(new Event('resume')));
}
