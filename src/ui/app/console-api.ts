/**
 * The console API: `window.shuttle` is the same client the UI uses (src/client/client.ts), for power users
 * scripting the studio from devtools and for end-to-end tests setting up state. Every method is documented
 * there with JSDoc, and `shuttle.help()` prints a summary: workflows (start, signal, query, update, cancel,
 * terminate, suspend, resume, result, describe, list, timeline, waitFor), definitions (definitions,
 * compileDefinition, saveDefinition, deleteDefinition), ownership (claims, claimHolder, reclaim,
 * fenceRejections, resultWaiters, engines, ownedWorkflows, metrics), this tab's engine (hello, shutdown, restartThisTab, engineId,
 * connection) and chaos on any tab's engine (`chaos.freeze`, `chaos.crash`, `chaos.shutdown`,
 * `chaos.restart`). The README (Console API) is the reference for people.
 *
 * Warnings are logged by the worker itself, in the same devtools console.
 */
import type { ShuttleClient } from '../../public/browser';

declare global {
  interface Window {
    /**
     * This tab's Shuttle engine. Run `shuttle.help()` for a summary.
     *
     * @example
     * const id = await shuttle.start('countdown', { from: 10, tickMs: 300 });
     * await shuttle.saveDefinition(source); // a definition of your own, registered in every tab
     * const [other] = (await shuttle.engines()).filter((engine) => !engine.thisTab && engine.alive);
     * await shuttle.chaos.crash(other.engineId);
     */
    shuttle?: ShuttleClient;
  }
}

/** Exposes `client` as `window.shuttle` and says so once in the console. */
export function installConsoleApi(client: ShuttleClient): void {
  window.shuttle = client;
  console.info(
    '%cShuttle Studio',
    'font-weight:bold',
    '— this tab’s engine is window.shuttle; try shuttle.help()',
  );
}
