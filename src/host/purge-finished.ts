/**
 * Purge by filter, for the studio: every finished workflow a list filter matches, all of its runs. The
 * filter's status, when given, may name finished statuses only (a running workflow is never purged); without
 * one every finished status is meant. `dryRun` counts what would be purged, so the confirmation can say how
 * many. Workflows that cannot be purged (started again meanwhile, say) are reported, not thrown.
 */
import { InvalidArgumentError, isTerminal, terminalStatuses, type Engine, type ListFilter } from '../engine';

export type PurgeFinishedOutcome = {
  matched: number;
  purged: number;
  failed: { workflowId: string; message: string }[];
};

export async function purgeFinished(
  engine: Engine,
  filter: ListFilter,
  dryRun: boolean,
): Promise<PurgeFinishedOutcome> {
  const asked =
    filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
  const running = asked.filter((status) => !isTerminal(status));
  if (running.length > 0)
    throw new InvalidArgumentError(
      `Only finished workflows are purged; the filter names ${running.map((s) => `'${s}'`).join(', ')}. Use ${terminalStatuses.map((s) => `'${s}'`).join(', ')}.`,
    );
  const status = asked.length > 0 ? asked : [...terminalStatuses];
  const outcome: PurgeFinishedOutcome = { matched: 0, purged: 0, failed: [] };
  let cursor: string | undefined;
  do {
    const page = await engine.list({
      ...filter,
      status,
      allRuns: false,
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    cursor = page.nextCursor ?? undefined;
    outcome.matched += page.items.length;
    if (dryRun) continue;
    for (const { workflowId } of page.items) {
      try {
        await engine.purge(workflowId);
        outcome.purged++;
      } catch (error) {
        outcome.failed.push({ workflowId, message: error instanceof Error ? error.message : String(error) });
      }
    }
  } while (cursor);
  return outcome;
}
