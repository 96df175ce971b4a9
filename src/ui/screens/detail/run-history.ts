/**
 * Run history on the detail screen, without React: which run is shown and whether it is an earlier one (read
 * only), the run switcher's label, the line that says how an earlier run ended, and which refused writes
 * belong to the run shown (refused writes carry no run number: they are placed by time, between the run's
 * creation and the next run's).
 */
import type { FenceRejection, RunSummary, WorkflowDescription } from '../../../public';

/** The latest run of `runs` (they come latest first), or null when none is known. */
export function latestRunOf(runs: readonly RunSummary[] | undefined): RunSummary | null {
  if (!runs || runs.length === 0) return null;
  return runs.reduce((latest, run) => (run.run > latest.run ? run : latest), runs[0]!);
}

/**
 * Whether `workflow` is an earlier run: one that a later run of the same id replaced. Only the latest run
 * takes signals, updates, cancels; an earlier one is finished for good.
 */
export function isEarlierRun(
  workflow: Pick<WorkflowDescription, 'run'>,
  runs: readonly RunSummary[] | undefined,
): boolean {
  const latest = latestRunOf(runs);
  return latest !== null && workflow.run < latest.run;
}

/** "Run 2 of 3": the run shown, out of the latest run's number. */
export function runSwitcherLabel(run: number, runs: readonly RunSummary[]): string {
  const latest = latestRunOf(runs);
  return `Run ${run} of ${Math.max(run, latest?.run ?? run)}`;
}

/** "earlier run — finished completed", the line an earlier run's page shows instead of its actions. */
export function earlierRunNote(workflow: Pick<WorkflowDescription, 'status'>): string {
  return `earlier run — finished ${workflow.status}`;
}

/**
 * The refused writes that belong to `run`: those refused from its creation until the next run was created
 * (every one, when the runs are not known).
 */
export function rejectionsOfRun(
  rejections: readonly FenceRejection[],
  runs: readonly RunSummary[] | undefined,
  run: number,
): FenceRejection[] {
  if (!runs || runs.length <= 1) return [...rejections];
  const ordered = [...runs].sort((a, b) => a.run - b.run);
  const index = ordered.findIndex((candidate) => candidate.run === run);
  if (index < 0) return [...rejections];
  const from = index === 0 ? -Infinity : ordered[index]!.createdAt;
  const until = ordered[index + 1]?.createdAt ?? Infinity;
  return rejections.filter((rejection) => rejection.at >= from && rejection.at < until);
}
