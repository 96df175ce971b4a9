/**
 * Provides a `ShuttleClient` to the hooks: the studio's data layer (src/ui/data) and the React bindings
 * (`shuttle/react`: hooks.ts, provider.tsx). Components use the hooks and never talk to the worker directly.
 */
import { createContext, useContext, type ReactNode } from 'react';
import type { ShuttleClient } from '../client/client';

const ClientContext = createContext<ShuttleClient | null>(null);

export function ShuttleClientProvider({ client, children }: { client: ShuttleClient; children: ReactNode }) {
  return <ClientContext.Provider value={client}>{children}</ClientContext.Provider>;
}

/** The tab's client. Throws outside `ShuttleClientProvider` (a wiring mistake, not a runtime condition). */
export function useShuttleClient(): ShuttleClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useShuttleClient must be used inside <ShuttleClientProvider>.');
  return client;
}
