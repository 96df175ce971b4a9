/**
 * The studio's TanStack Query client. Data is kept fresh by pushes from the worker (live-updates.ts), so
 * queries do not poll; a short stale time still refetches on focus in case a notice was missed. Errors from
 * the worker are answers (a missing workflow, a refused call), so a failed query is retried once only.
 */
import { QueryClient } from '@tanstack/react-query';

export function createStudioQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 2_000, retry: 1, refetchOnWindowFocus: true },
      mutations: { retry: false },
    },
  });
}
