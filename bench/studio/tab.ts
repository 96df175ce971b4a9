/**
 * One studio tab, driven from Node for the benchmarks: a page of the shared browser context opened on
 * `/?db=<name>`, talked to only through its console API (`window.shuttle`). Like the end-to-end page objects
 * but without assertions: a benchmark reports what it measured and records what went wrong instead of
 * failing on the first surprise.
 *
 * Every method is one `page.evaluate`, so the time it takes is one round trip to the page plus the worker's
 * answer; none of them is on a measured path unless a caller says so.
 */
import type { BrowserContext, CDPSession, Page } from '@playwright/test';
import type {
  ListPage,
  ResultWaiterInfo,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
} from '../../src/engine';

/** The chaos control channel's freeze, where the studio offers it (`shuttle.chaos.freeze`). */
type ChaosApi = { freeze?: (engineId: string, seconds: number) => Promise<unknown> };

/** Polls `read` every `intervalMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  read: () => Promise<T | undefined>,
  { timeoutMs = 30_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export class StudioTab {
  #cdp: CDPSession | null = null;
  #freezeDispatched: Promise<boolean> | null = null;

  private constructor(
    readonly page: Page,
    readonly engineId: string,
    readonly label: string,
  ) {}

  /** Opens a new page on the studio for `databaseName` and waits until its engine runs. */
  static async open(context: BrowserContext, baseUrl: string, databaseName: string): Promise<StudioTab> {
    const page = await context.newPage();
    page.on('pageerror', (error) => console.error(`[studio page] ${error.name}: ${error.message}`));
    await page.goto(`${baseUrl}/?db=${encodeURIComponent(databaseName)}`);
    await page.waitForFunction(() => window.shuttle !== undefined, undefined, { timeout: 30_000 });
    const hello = await pollUntil(
      'the tab’s engine to run',
      async () => {
        const answer = await page.evaluate(() => window.shuttle!.hello());
        if (answer.status.state === 'failed')
          throw new Error(`The tab’s engine failed: ${answer.status.message}`);
        return answer.status.state === 'running' ? answer : undefined;
      },
      { intervalMs: 100 },
    );
    return new StudioTab(page, hello.engineId, hello.label);
  }

  /** Whether the studio offers `shuttle.chaos.freeze` (the chaos control channel). */
  hasFreeze(): Promise<boolean> {
    return this.page.evaluate(
      () => typeof (window.shuttle as unknown as { chaos?: ChaosApi }).chaos?.freeze === 'function',
    );
  }

  start(workflowType: string, input: unknown, options: StartOptions = {}): Promise<string> {
    return this.page.evaluate(
      ({ workflowType, input, options }) => window.shuttle!.start(workflowType, input, options),
      {
        workflowType,
        input,
        options,
      },
    );
  }

  describe(workflowId: string): Promise<WorkflowDescription> {
    return this.page.evaluate((id) => window.shuttle!.describe(id), workflowId);
  }

  timeline(workflowId: string): Promise<TimelineEntry[]> {
    return this.page.evaluate((id) => window.shuttle!.timeline(id), workflowId);
  }

  list(cursor?: string): Promise<ListPage> {
    return this.page.evaluate(
      (cursor) => window.shuttle!.list(cursor === undefined ? { limit: 1000 } : { limit: 1000, cursor }),
      cursor,
    );
  }

  terminate(workflowId: string, reason: string): Promise<void> {
    return this.page.evaluate(({ id, reason }) => window.shuttle!.terminate(id, reason), {
      id: workflowId,
      reason,
    });
  }

  resultWaiters(): Promise<ResultWaiterInfo[]> {
    return this.page.evaluate(() => window.shuttle!.resultWaiters());
  }

  /** Sends a signal; resolves with `Date.now()` in this page just before the call (the signal's t0). */
  signalAt(workflowId: string, name: string, payload: unknown): Promise<number> {
    return this.page.evaluate(
      async ({ id, name, payload }) => {
        const sentAt = Date.now();
        await window.shuttle!.signal(id, name, payload);
        return sentAt;
      },
      { id: workflowId, name, payload },
    );
  }

  /**
   * Calls `shuttle.result(id)` here and resolves with `Date.now()` in this page when it settled (fulfilled
   * or rejected), and how.
   */
  resultSettledAt(workflowId: string): Promise<{ settledAt: number; ok: boolean }> {
    return this.page.evaluate(async (id) => {
      try {
        await window.shuttle!.result(id);
        return { settledAt: Date.now(), ok: true };
      } catch {
        return { settledAt: Date.now(), ok: false };
      }
    }, workflowId);
  }

  /**
   * Freezes this tab's engine through the chaos control channel for `seconds`. The studio first waits for a
   * quiet moment (just after a claim renewal), then answers and stalls; resolves with the moment the stall
   * began (`frozenUntil − seconds`, the worker's clock), or null when the answer did not say.
   */
  freeze(seconds: number): Promise<number | null> {
    return this.page.evaluate(
      async ({ engineId, seconds }) => {
        const chaos = (window.shuttle as unknown as { chaos?: ChaosApi }).chaos;
        if (typeof chaos?.freeze !== 'function') throw new Error('shuttle.chaos.freeze is not available');
        const outcome = (await chaos.freeze(engineId, seconds)) as { frozenUntil?: unknown } | undefined;
        return typeof outcome?.frozenUntil === 'number' ? outcome.frozenUntil - seconds * 1_000 : null;
      },
      { engineId: this.engineId, seconds },
    );
  }

  /** Prepares a DevTools session so `crash()` sends nothing but the crash itself. */
  async prepareCrash(): Promise<void> {
    this.#cdp ??= await this.page.context().newCDPSession(this.page);
  }

  /** Crashes this tab's renderer process (and with it the engine worker), as `chrome://crash` does. */
  async crash(): Promise<void> {
    await this.prepareCrash();
    // The renderer dies before it can answer, so the command never resolves normally.
    void this.#cdp!.send('Page.crash').catch(() => undefined);
  }

  /**
   * Prepares a Page Lifecycle freeze: a DevTools session, and a listener that notes in the page when its
   * `freeze` event fires (`window.shuttleBenchFrozeAt`, `Date.now()` in the page), so `lifecycleFreeze()`
   * sends nothing but the freeze and the check.
   */
  async prepareLifecycleFreeze(): Promise<void> {
    this.#cdp ??= await this.page.context().newCDPSession(this.page);
    await this.page.evaluate(() => {
      const marked = window as { shuttleBenchFrozeAt?: number };
      marked.shuttleBenchFrozeAt = undefined;
      document.addEventListener('freeze', () => (marked.shuttleBenchFrozeAt = Date.now()), { once: true });
    });
  }

  /**
   * Freezes this tab as the browser freezes a background tab: CDP `Page.setWebLifecycleState` `frozen`.
   * The headless Chromium the benchmarks run answers that with success but neither freezes the page nor
   * fires `freeze` (see e2e/lifecycle-freeze.spec.ts); so a script then fires `freeze` on the document, as
   * the browser would have, unless the event fired already: the code measured is the studio's own handler
   * either way. In a page the browser did freeze, that script runs only after the resume, when `freeze` has
   * fired, and does nothing; no guess of how soon a live page answers is needed. Resolves once the DevTools
   * call returned; `lifecycleResume()` says who fired the event.
   */
  async lifecycleFreeze(): Promise<void> {
    await this.prepareLifecycleFreeze().catch(() => undefined);
    await this.#cdp!.send('Page.setWebLifecycleState', { state: 'frozen' });
    this.#freezeDispatched = this.page.evaluate(() => {
      if ((window as { shuttleBenchFrozeAt?: number }).shuttleBenchFrozeAt !== undefined) return false;
      document.dispatchEvent(new Event('freeze'));
      return true;
    });
    this.#freezeDispatched.catch(() => undefined);
  }

  /** When the page's own `freeze` event fired (`Date.now()` in the page), or null. */
  async lifecycleFrozeAt(): Promise<number | null> {
    return this.page.evaluate(() => (window as { shuttleBenchFrozeAt?: number }).shuttleBenchFrozeAt ?? null);
  }

  /**
   * Ends a lifecycle freeze: `active` again, and `resume` dispatched if `freeze` was. Resolves with who fired
   * `freeze`: the browser, or this tab's script.
   */
  async lifecycleResume(): Promise<'browser' | 'dispatched'> {
    await this.#cdp?.send('Page.setWebLifecycleState', { state: 'active' });
    const dispatched = (await this.#freezeDispatched) ?? false;
    this.#freezeDispatched = null;
    if (!dispatched) return 'browser';
    await this.page.evaluate(() => document.dispatchEvent(new Event('resume')));
    return 'dispatched';
  }

  /** Shuts this tab's engine down through the console API (releases its claims); resolves when it has. */
  async shutdownEngine(): Promise<void> {
    await this.page.evaluate(() => window.shuttle!.shutdown());
  }

  /** Closes the tab as a person would: unload handlers run, so the engine shuts down gracefully (pagehide). */
  async close(): Promise<void> {
    await this.page.close({ runBeforeUnload: true }).catch(() => undefined);
  }

  /** Whether the page still answers (a crash can take other pages of the same renderer process with it). */
  async isResponsive(timeoutMs = 2_000): Promise<boolean> {
    if (this.page.isClosed()) return false;
    const answer = this.page.evaluate(() => window.shuttle !== undefined).catch(() => false);
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs));
    return Promise.race([answer, timeout]);
  }
}
