/**
 * What a purge by the Workflows list's filter may do: only finished workflows are purged, so a filter whose
 * status names an unfinished status is refused (the engine says so too); without a status it means every
 * finished status.
 */
import type { ListFilter, WorkflowStatus } from '../../../public';
import { isTerminal } from '../../../public/browser';
import type { ClientFilters } from '../../data/list-filters';

/** The unfinished statuses `filter` names (empty when a purge by it is possible). */
export function unfinishedStatusesOf(filter: Pick<ListFilter, 'status'>): WorkflowStatus[] {
  const statuses =
    filter.status === undefined ? [] : Array.isArray(filter.status) ? filter.status : [filter.status];
  return statuses.filter((status) => !isTerminal(status));
}

/**
 * Why a purge by `filter` is not offered, in words, or null when it is. The engine purges by status, type
 * and id prefix; the text search and the time range are the list's own, so a purge would reach more than
 * the list shows.
 */
export function purgeBlockedReason(
  filter: Pick<ListFilter, 'status'>,
  rows?: Pick<ClientFilters, 'text' | 'since'>,
): string | null {
  const unfinished = unfinishedStatusesOf(filter);
  if (unfinished.length > 0)
    return `Only finished workflows can be purged; the filter names ${unfinished.join(' and ')}.`;
  if (rows && (rows.text.trim() !== '' || rows.since !== null))
    return 'Purge goes by status, type and id prefix: clear the text search and time range first.';
  return null;
}

/** "1 workflow", "12 workflows". */
export function workflowCount(count: number): string {
  return `${count.toLocaleString()} workflow${count === 1 ? '' : 's'}`;
}
