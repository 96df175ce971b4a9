/**
 * `shuttle/browser-worker`: the worker side of the browser runtime. Call `runBrowserEngine` once in a
 * dedicated module worker the app's bundler builds; the page starts it with `connectBrowserEngine`
 * (`shuttle/browser`). It runs this tab's engine over IndexedDB with Web Locks liveness and cross-tab
 * handoff. Its workflows come from the app's own modules, which import `shuttle/workflow`.
 */
export { runBrowserEngine, type BrowserEngineOptions } from '../worker/browser-engine';
export type { IndexedDbDurability } from '../storage/indexeddb';
