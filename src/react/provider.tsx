/**
 * `ShuttleProvider`: what an app wraps around the components that use Shuttle's hooks. It provides the
 * client (from `connectBrowserEngine`), a TanStack Query client (the app's own if it has one), and keeps
 * the hooks' data live from the engine's pushes.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import type { ShuttleClient } from '../client/client';
import { ShuttleClientProvider } from './client-context';
import { connectWorkflowLiveUpdates } from './live';

export type ShuttleProviderProps = {
  /** The tab's client: `connectBrowserEngine(…)`, made once (outside the component or in a `useState`). */
  client: ShuttleClient;
  /** The app's TanStack Query client, if it has one. Default: one of the provider's own. */
  queryClient?: QueryClient;
  children: ReactNode;
};

/**
 * @example
 * const shuttle = connectBrowserEngine({ worker: () => new Worker(new URL('./shuttle.worker.ts', import.meta.url), { type: 'module' }) });
 * createRoot(root).render(<ShuttleProvider client={shuttle}><App /></ShuttleProvider>);
 */
export function ShuttleProvider({ client, queryClient, children }: ShuttleProviderProps) {
  const [ownQueryClient] = useState(() => queryClient ?? new QueryClient());
  const cache = queryClient ?? ownQueryClient;
  useEffect(() => connectWorkflowLiveUpdates(client, cache), [client, cache]);
  return (
    <QueryClientProvider client={cache}>
      <ShuttleClientProvider client={client}>{children}</ShuttleClientProvider>
    </QueryClientProvider>
  );
}
