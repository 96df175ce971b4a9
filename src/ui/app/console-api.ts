/**
 * The console API: `window.shuttle` is the same client the UI uses, for power users scripting the studio
 * from devtools and for end-to-end tests setting up state. (Warnings are logged by the worker itself, in the
 * same devtools console.)
 */
import type { ShuttleClient } from '../../worker/client';

declare global {
  interface Window {
    /** This tab's Shuttle engine. Run `shuttle.help()` for a summary. */
    shuttle?: ShuttleClient;
  }
}

export function installConsoleApi(client: ShuttleClient): void {
  window.shuttle = client;
  console.info(
    '%cShuttle Studio',
    'font-weight:bold',
    '— this tab’s engine is window.shuttle; try shuttle.help()',
  );
}
