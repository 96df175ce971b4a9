/**
 * The studio's root: the worker client and the query cache for everything below, live updates from the
 * worker, and the shell around the current screen.
 */
import { QueryClientProvider, type QueryClient } from '@tanstack/react-query';
import type { ShuttleClient } from '../../worker/client';
import { ShuttleClientProvider } from '../data/client-context';
import { useLiveUpdates } from '../data/live-updates';
import { WorkflowsScreen } from '../screens/workflows/WorkflowsScreen';
import { Shell } from '../shell/Shell';

export type AppProps = { client: ShuttleClient; queryClient: QueryClient };

export function App({ client, queryClient }: AppProps) {
  return (
    <ShuttleClientProvider client={client}>
      <QueryClientProvider client={queryClient}>
        <LiveUpdates />
        <Shell>
          <WorkflowsScreen />
        </Shell>
      </QueryClientProvider>
    </ShuttleClientProvider>
  );
}

function LiveUpdates() {
  useLiveUpdates();
  return null;
}
