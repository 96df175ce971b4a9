/**
 * The entry of a studio tab's engine worker (a dedicated module worker): the browser runtime every web app
 * gets (`runBrowserEngine`, browser-engine.ts, here through `serveBrowserEngine`: IndexedDB, Web Locks liveness and death watch, cross-tab
 * handoff) with what only the studio adds — the built-in demos (the queue they start onto, their activity limits) with their sources for the editor, the
 * definitions its users write (checked first in the compile sandbox, a nested worker), and the chaos tools'
 * freeze. Everything else lives in src/host/engine-host.ts, which Node tests drive directly.
 */
import { builtInActivityLimits, builtInQueues, builtInWorkflows } from '../workflows';
import { builtInInfo } from './built-ins';
import { CompileSandbox, type SandboxWorker } from '../host/authoring/compile-sandbox';
import { serveBrowserEngine } from './browser-engine';

serveBrowserEngine(
  { workflows: builtInWorkflows, queues: builtInQueues, activityLimits: builtInActivityLimits },
  {
    builtInInfo,
    loadAuthoredDefinitions: true,
    allowFreeze: true,
    ...(typeof Worker === 'undefined'
      ? {}
      : {
          compileSandbox: new CompileSandbox({
            spawn: () =>
              new Worker(new URL('./compile.worker.ts', import.meta.url), {
                type: 'module',
                name: 'shuttle compile sandbox',
              }) as unknown as SandboxWorker,
          }),
        }),
  },
);
