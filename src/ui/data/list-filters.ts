/**
 * The filters of the workflows list that the page applies to the rows it fetched, beside those the engine
 * applies (status, type, owner, id prefix): owned by nobody (the engine filters by an owner, not by the
 * lack of one), text anywhere in a row, and how recently it started. Pure, so the table, its count and the
 * bulk actions match the same rows; and the tree view, which lists children under their parents.
 */
import type { WorkflowSummary } from '../../public';
import type { TimeRange, WorkflowFilters } from '../routing/route';

export const timeRangeMs: Record<TimeRange, number> = {
  '15m': 15 * 60_000,
  '1h': 60 * 60_000,
  '24h': 24 * 60 * 60_000,
  '7d': 7 * 24 * 60 * 60_000,
};

export const timeRangeLabels: Record<TimeRange, string> = {
  '15m': 'last 15 minutes',
  '1h': 'last hour',
  '24h': 'last 24 hours',
  '7d': 'last 7 days',
};

export type ClientFilters = Pick<WorkflowFilters, 'owner' | 'text' | 'since'>;

/** Whether any filter applies that the engine does not (so the page filters the rows it fetched). */
export function hasClientFilters(filters: ClientFilters): boolean {
  return filters.owner === 'none' || filters.text.trim() !== '' || filters.since !== null;
}

/** What the text search looks in: the id, type and version, status, parent, what it waits on, its error. */
function searchable(row: WorkflowSummary): string {
  return [
    row.workflowId,
    `${row.workflowType} v${row.version}`,
    row.status,
    row.parentId ?? '',
    row.waitingOn ?? '',
    row.error ?? '',
  ]
    .join('\n')
    .toLowerCase();
}

/** The rows `filters` keep, at time `now` (the time range is counted back from it). */
export function rowMatcher(filters: ClientFilters, now: number): (row: WorkflowSummary) => boolean {
  const text = filters.text.trim().toLowerCase();
  const after = filters.since ? now - timeRangeMs[filters.since] : null;
  return (row) =>
    (filters.owner !== 'none' || row.owner === null) &&
    (after === null || (row.startedAt ?? row.createdAt) >= after) &&
    (text === '' || searchable(row).includes(text));
}

/**
 * The tree view: every row whose parent is listed comes right after its parent (and that parent's earlier
 * children), one level deeper; the others keep their order. Returns the rows in that order, each with its
 * depth (0 for a row whose parent is not listed).
 */
export function nestRows(rows: readonly WorkflowSummary[]): { row: WorkflowSummary; depth: number }[] {
  const listed = new Set(rows.map((row) => row.workflowId));
  const children = new Map<string, WorkflowSummary[]>();
  const roots: WorkflowSummary[] = [];
  for (const row of rows) {
    if (row.parentId !== undefined && row.parentId !== row.workflowId && listed.has(row.parentId)) {
      const siblings = children.get(row.parentId) ?? [];
      siblings.push(row);
      children.set(row.parentId, siblings);
    } else roots.push(row);
  }
  const out: { row: WorkflowSummary; depth: number }[] = [];
  const seen = new Set<WorkflowSummary>();
  const visit = (row: WorkflowSummary, depth: number) => {
    if (seen.has(row)) return;
    seen.add(row);
    out.push({ row, depth });
    for (const child of children.get(row.workflowId) ?? []) visit(child, depth + 1);
  };
  for (const row of roots) visit(row, 0);
  // Rows in a parent cycle (never written by the engine) are still listed.
  for (const row of rows) visit(row, 0);
  return out;
}
