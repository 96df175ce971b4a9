/**
 * The studio's entry: applies the theme before the first paint, connects to the studio server that served
 * the page or starts this tab's engine worker (database and mode from the URL: `?db=<name>`, `?engine=off`),
 * installs the console API, and renders the app.
 */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { installConsoleApi } from './app/console-api';
import { launchEngineWorker, launchStudioClient, readStudioConfig } from './app/launch';
import { createStudioQueryClient } from './app/query-client';
import { createStoreReader } from './data/store-reader';
import { installTheme } from './state/theme';
import './styles/global.css';

installTheme();
const client = launchStudioClient(location.search);
installConsoleApi(client);
// While this tab's engine is stopped (crashed), the page reads the store through a viewer engine.
const reader = createStoreReader(client, () =>
  launchEngineWorker({ ...readStudioConfig(location.search), viewer: true }, { followPageLifecycle: false }),
);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element.');
createRoot(root).render(
  <StrictMode>
    <App client={reader.client} reader={reader} queryClient={createStudioQueryClient()} />
  </StrictMode>,
);
