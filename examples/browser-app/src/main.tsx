import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connectBrowserEngine } from 'shuttle/browser';
import { ShuttleProvider } from 'shuttle/react';
import { App } from './App';
import { startExecutionLog } from './execution-log';

// One engine per tab, started once, outside React. Every tab of this app that uses the same database
// shares the workflows: each runs on exactly one tab, and moves to another when its tab closes.
const shuttle = connectBrowserEngine({
  worker: () => new Worker(new URL('./shuttle.worker.ts', import.meta.url), { type: 'module' }),
  databaseName: 'shuttle-example-browser-app',
});

// Demo instrumentation: hear every step run announced by any tab, from the start.
startExecutionLog();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ShuttleProvider client={shuttle}>
      <App />
    </ShuttleProvider>
  </StrictMode>,
);
