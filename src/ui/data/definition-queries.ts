/**
 * Queries and mutations of the definitions screen: compile-as-you-type (the worker checks the source a
 * moment after typing stops, each distinct source once — `compileQuery`), and the mutations that save and
 * delete definitions. Mutations refetch the definitions before they resolve, so the screen can open what was
 * just saved; the change feed refreshes every other tab. (The definitions themselves: `definitionsQuery`.)
 */
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { ShuttleClient } from '../../public/browser';
import type { CompileReport, DeleteOutcome, SaveOutcome } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';

/** How long typing must pause before the source is compiled, in ms. */
export const compileDelayMs = 350;

/** `value`, once it has stayed the same for `delayMs`. */
function useSettledValue<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

export type CompileAsYouType = {
  /** The report of the last source compiled (possibly an older one while `checking`). */
  report: CompileReport | undefined;
  /** The source `report` is about. */
  reportedSource: string | null;
  /** The current source has not been compiled yet. */
  checking: boolean;
  error: Error | null;
};

/** The worker's report on `source`, with the source it is about. Each distinct source is compiled once. */
export function compileQuery(client: Pick<ShuttleClient, 'compileDefinition'>, source: string) {
  return queryOptions({
    queryKey: queryKeys.compile(source),
    queryFn: async () => ({ source, report: await client.compileDefinition(source) }),
    staleTime: Infinity,
    gcTime: 30_000,
    retry: false,
    placeholderData: (previous) => previous,
  });
}

/** Compiles `source` in the worker a moment after it stops changing; null compiles nothing. */
export function useCompileAsYouType(source: string | null): CompileAsYouType {
  const client = useShuttleClient();
  const settled = useSettledValue(source, compileDelayMs);
  const query = useQuery({ ...compileQuery(client, settled ?? ''), enabled: settled !== null });
  const data = source === null ? undefined : query.data;
  return {
    report: data?.report,
    reportedSource: data?.source ?? null,
    checking: source !== null && (settled !== source || query.isFetching || data?.source !== source),
    error: query.error,
  };
}

/** Saves a definition's source; resolves with the worker's outcome (refusals included). */
export function useSaveDefinition() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation<SaveOutcome, Error, { source: string; force?: boolean }>({
    mutationFn: ({ source, force }) => client.saveDefinition(source, force ? { force } : {}),
    onSuccess: async (outcome) => {
      if (outcome.ok) await queryClient.invalidateQueries({ queryKey: queryKeys.definitions });
    },
  });
}

/** Deletes a saved version; resolves with the worker's outcome (an in-use refusal included). */
export function useDeleteDefinition() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation<DeleteOutcome, Error, { name: string; version: number }>({
    mutationFn: ({ name, version }) => client.deleteDefinition(name, version),
    onSuccess: async (outcome) => {
      if (outcome.ok) await queryClient.invalidateQueries({ queryKey: queryKeys.definitions });
    },
  });
}
