/**
 * Actions on workflows that the detail page and the list offer beside the per-workflow ones of
 * workflow-queries.ts: rerun a finished workflow with the same input (a new workflow, `<id>-rerun-<n>`); fork
 * one from an operation (the engine's `fork`: the next run of the id, or `<id>-fork-<n>` while the id still
 * runs); and cancel, terminate or retry every workflow a filter matches (each one through the engine,
 * reporting how many succeeded and which failed, with their errors).
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListFilter, ReplayReport, WorkflowDescription, WorkflowStatus } from '../../public';
import { isTerminal, maxIdLength } from '../../public/browser';
import { useShuttleClient } from '../../public/react';
import { queryKeys } from '../../public/react';
import { hasClientFilters, rowMatcher, type ClientFilters } from './list-filters';

/**
 * The id of the `n`th rerun of `workflowId`: `<id>-rerun-<n>`, so the new workflow names the one it reruns
 * (the original's id is cut to fit the id limit).
 */
export function rerunId(workflowId: string, n: number): string {
  return suffixedId(workflowId, `-rerun-${n}`);
}

/** The id of the `n`th fork of `workflowId` into another id (while it still runs): `<id>-fork-<n>`. */
export function forkId(workflowId: string, n: number): string {
  return suffixedId(workflowId, `-fork-${n}`);
}

function suffixedId(workflowId: string, suffix: string): string {
  return `${workflowId.slice(0, maxIdLength - suffix.length)}${suffix}`;
}

/** The most reruns tried in a row for a free id before giving up. */
const maxRerunAttempts = 100;

/**
 * Reruns a finished workflow: a new workflow of the same type with the same input, under the first free id
 * of `<id>-rerun-1`, `-2`, … (never a new run of an existing id). Resolves with the new id.
 */
export function useRerun() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (workflow: Pick<WorkflowDescription, 'workflowId' | 'workflowType' | 'input'>) => {
      for (let n = 1; n <= maxRerunAttempts; n++) {
        try {
          return await client.start(workflow.workflowType, workflow.input, {
            id: rerunId(workflow.workflowId, n),
            idReuse: 'never',
          });
        } catch (error) {
          const name = (error as Error).name;
          if (name !== 'WorkflowAlreadyExistsError' && name !== 'WorkflowIdReuseError') throw error;
        }
      }
      throw new Error(
        `Could not rerun '${workflow.workflowId}': the ids ${rerunId(workflow.workflowId, 1)} to -${maxRerunAttempts} are all taken. Purge old reruns, or start it from the Start dialog with an id of your own.`,
      );
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  });
}

/**
 * Forks a run from an operation (`fromPosition`; without it, from where a run that ended badly stopped): as
 * the next run of the same id when that id has ended, else — the id runs again — into the first free id of
 * `<id>-fork-1`, `-2`, …. Resolves with the fork's id and run.
 */
export function useFork() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (request: { workflowId: string; run?: number; fromPosition?: number }) => {
      const { workflowId, ...options } = request;
      try {
        return await client.fork(workflowId, options);
      } catch (error) {
        if ((error as Error).name !== 'InvalidWorkflowStateError') throw error;
      }
      for (let n = 1; n <= maxRerunAttempts; n++) {
        try {
          return await client.fork(workflowId, { ...options, newId: forkId(workflowId, n) });
        } catch (error) {
          const name = (error as Error).name;
          if (name !== 'WorkflowAlreadyExistsError' && name !== 'WorkflowIdReuseError') throw error;
        }
      }
      throw new Error(
        `Could not fork '${workflowId}': it still runs, and the ids ${forkId(workflowId, 1)} to -${maxRerunAttempts} are all taken. Purge old forks, or fork it from the console with an id of your own (fork(id, { newId })).`,
      );
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  });
}

/** Replays a run against the definitions the engine has now (`checkReplay`): ok, or the first divergence. */
export function useCheckReplay() {
  const client = useShuttleClient();
  return useMutation({
    mutationFn: (request: { workflowId: string; run: number }) =>
      client.checkReplay(request.workflowId, { run: request.run }),
  });
}

/** What a replay check found, in one sentence for the workflow's page. */
export function replayCheckWords(report: ReplayReport): { ok: boolean; title: string; detail: string } {
  if (report.ok)
    return {
      ok: true,
      title: 'Replays clean',
      detail: `Run ${report.run} replays against ${report.workflowType} version ${report.version} as registered now: ${report.operations} operation${report.operations === 1 ? '' : 's'}, the same as recorded.`,
    };
  if (report.problem === 'no-definition')
    return { ok: false, title: 'Cannot replay here', detail: report.error.message };
  return {
    ok: false,
    title: report.position === undefined ? 'Replay fails' : `Diverges at #${report.position}`,
    detail:
      report.recorded !== undefined
        ? `The history recorded ${report.recorded}; the code registered now yields ${report.replayed}. A handoff of this run would fail it: put the change behind ctx.patched(id), or under a new version.`
        : report.error.message,
  };
}

/** Cancel and terminate stop unfinished workflows; retry forks the ones that ended badly where they stopped. */
export type BulkKind = 'cancel' | 'terminate' | 'retry';

/**
 * The statuses a bulk action applies to: cancel asks running work; terminate ends anything unfinished; retry
 * takes what failed, was cancelled, terminated or timed out (a completed workflow has nothing to retry).
 */
export function bulkTargets(kind: BulkKind, status: WorkflowStatus): boolean {
  if (kind === 'retry') return isTerminal(status) && status !== 'completed';
  if (isTerminal(status)) return false;
  return kind === 'terminate' ? true : status === 'running' || status === 'pending';
}

/**
 * The most workflows one bulk confirmation acts on. The targets are read into the page (and acted on a few at
 * a time), so a filter matching more is acted on in several rounds: the confirmation says so.
 */
export const maxBulkTargets = 10_000;

export type BulkOutcome = { done: string[]; failed: { workflowId: string; error: Error }[] };

/**
 * Every workflow id `filter` matches that `kind` applies to (all pages), and that `keep` keeps of the rows
 * (the filters the list applies itself: owned by nobody, text, time range).
 */
export async function collectBulkTargets<Row extends { workflowId: string; status: WorkflowStatus }>(
  client: {
    list(filter: ListFilter): Promise<{ items: Row[]; nextCursor: string | null }>;
  },
  filter: ListFilter,
  kind: BulkKind,
  limit = 10_000,
  keep: (row: Row) => boolean = () => true,
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.list({ ...filter, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const item of page.items)
      if (bulkTargets(kind, item.status) && keep(item)) ids.push(item.workflowId);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ids.length < limit);
  return ids.slice(0, limit);
}

/** Cancels or terminates each of `workflowIds`, a few at a time; never throws. */
export function useBulkAction() {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({
      kind,
      workflowIds,
      reason,
    }: {
      kind: BulkKind;
      workflowIds: readonly string[];
      reason?: string;
    }): Promise<BulkOutcome> => {
      const outcome: BulkOutcome = { done: [], failed: [] };
      const queue = [...workflowIds];
      const act = (id: string): Promise<unknown> =>
        kind === 'cancel'
          ? client.cancel(id, reason)
          : kind === 'terminate'
            ? client.terminate(id, reason)
            : client.fork(id);
      await Promise.all(
        Array.from({ length: Math.min(8, queue.length) }, async () => {
          for (let id = queue.shift(); id !== undefined; id = queue.shift())
            await act(id).then(
              () => outcome.done.push(id!),
              (error: unknown) =>
                outcome.failed.push({
                  workflowId: id!,
                  error: error instanceof Error ? error : new Error(String(error)),
                }),
            );
        }),
      );
      return outcome;
    },
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryKeys.workflows }),
  });
}

/**
 * The ids a bulk action would act on now (counted when the confirmation opens, so it can say how many): at
 * most `maxBulkTargets` + 1 of them, the one beyond saying that more match than one confirmation acts on.
 * `rows` are the filters the list applies itself (owned by nobody, text, time range: client-filters.ts),
 * applied to the same rows at the time of counting.
 */
export function useBulkTargets(
  filter: Omit<ListFilter, 'limit' | 'cursor'>,
  kind: BulkKind | null,
  rows: ClientFilters = { owner: null, text: '', since: null },
) {
  const client = useShuttleClient();
  return useQuery({
    queryKey: ['workflows', 'bulk-targets', kind, filter, rows],
    enabled: kind !== null,
    staleTime: 0,
    gcTime: 0,
    queryFn: () =>
      collectBulkTargets(
        client,
        filter,
        kind!,
        maxBulkTargets + 1,
        hasClientFilters(rows) ? rowMatcher(rows, Date.now()) : undefined,
      ),
  });
}
