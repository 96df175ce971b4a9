/**
 * This tab's engine: a dedicated module worker (Vite builds it from the `new Worker(new URL(…))` in
 * main.tsx). Every tab runs one; they share the workflows through IndexedDB.
 */
import { runBrowserEngine } from 'shuttle/browser-worker';
import { setExecutingEngine } from './executions';
import { upload } from './workflows';

const engine = runBrowserEngine({ workflows: [upload] });

// Demo instrumentation only: lets each step's announcement say which tab's engine ran it.
setExecutingEngine(engine.engineId);
