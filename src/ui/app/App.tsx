/**
 * The studio's root: the worker client and the query cache for everything below, live updates from the
 * worker, background sampling of the engines, and the shell around the current route's screen. Each screen
 * sits in its own error boundary, keyed by route, so a broken screen never blanks the shell and navigating
 * away recovers.
 */
import { QueryClientProvider, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ShuttleClient } from '../../public/browser';
import { PanelErrorBoundary } from '../components/PanelErrorBoundary';
import { ShuttleClientProvider } from '../../public/react';
import { useEngineSampling } from '../data/engine-samples';
import type { StoreReader } from '../data/store-reader';
import { useLiveUpdates } from '../data/live-updates';
import { formatRoute, routes, type Route } from '../routing/route';
import { useRoute } from '../routing/router';
import { ChaosScreen } from '../screens/chaos/ChaosScreen';
import { ClaimsScreen } from '../screens/claims/ClaimsScreen';
import { DefinitionsScreen } from '../screens/definitions/DefinitionsScreen';
import { WorkflowDetailScreen } from '../screens/detail/WorkflowDetailScreen';
import { EnginesScreen } from '../screens/engines/EnginesScreen';
import { PendingScreen } from '../screens/pending/PendingScreen';
import { QueuesScreen } from '../screens/queues/QueuesScreen';
import { SchedulesScreen } from '../screens/schedules/SchedulesScreen';
import { WaitersScreen } from '../screens/waiters/WaitersScreen';
import { StartDialog } from '../components/forms/StartDialog';
import { WorkflowsScreen } from '../screens/workflows/WorkflowsScreen';
import { Shell } from '../shell/Shell';

export type AppProps = {
  client: ShuttleClient;
  queryClient: QueryClient;
  /** What `client` reads the store through (data/store-reader.ts): the app refetches when it switches. */
  reader?: Pick<StoreReader, 'onSourceChange'>;
};

export function App({ client, queryClient, reader }: AppProps) {
  return (
    <ShuttleClientProvider client={client}>
      <QueryClientProvider client={queryClient}>
        <Background reader={reader} />
        <Shell>
          <CurrentScreen />
        </Shell>
        <PanelErrorBoundary name="start dialog">
          <StartDialog />
        </PanelErrorBoundary>
      </QueryClientProvider>
    </ShuttleClientProvider>
  );
}

const titles: Record<Route['screen'], string> = {
  workflows: 'Workflows',
  workflow: 'Workflow',
  schedules: 'Schedules',
  queues: 'Queues',
  definitions: 'Definitions',
  engines: 'Engines',
  pending: 'Pending work',
  claims: 'Claims',
  waiters: 'Result waiters',
  chaos: 'Chaos drills',
};

function CurrentScreen() {
  const route = useRoute();
  useEffect(() => {
    document.title = `${route.screen === 'workflow' ? route.workflowId : titles[route.screen]} · Shuttle Studio`;
  }, [route]);
  // A workflow's page stays mounted while its runs are switched (the run shown so far stays until the next
  // one has loaded); another workflow is another page.
  const key = route.screen === 'workflow' ? formatRoute(routes.workflow(route.workflowId)) : route.screen;
  return (
    <PanelErrorBoundary key={key} name={titles[route.screen].toLowerCase()}>
      <Screen route={route} />
    </PanelErrorBoundary>
  );
}

function Screen({ route }: { route: Route }) {
  switch (route.screen) {
    case 'workflows':
      return <WorkflowsScreen filters={route.filters} />;
    case 'workflow':
      return <WorkflowDetailScreen workflowId={route.workflowId} run={route.run} />;
    case 'schedules':
      return <SchedulesScreen selected={route.name} />;
    case 'queues':
      return <QueuesScreen selected={route.name} />;
    case 'definitions':
      return <DefinitionsScreen selection={route} />;
    case 'engines':
      return <EnginesScreen />;
    case 'pending':
      return <PendingScreen />;
    case 'claims':
      return <ClaimsScreen />;
    case 'waiters':
      return <WaitersScreen />;
    case 'chaos':
      return <ChaosScreen />;
  }
}

/**
 * What runs for the whole page: live updates, engine sampling for the charts, and a full refetch whenever
 * the store is read through another engine (this tab's stopped, or is back).
 */
function Background({ reader }: { reader: AppProps['reader'] }) {
  useLiveUpdates();
  useEngineSampling();
  const queryClient = useQueryClient();
  useEffect(() => reader?.onSourceChange(() => void queryClient.invalidateQueries()), [reader, queryClient]);
  return null;
}
