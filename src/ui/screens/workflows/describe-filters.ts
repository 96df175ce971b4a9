/** The Workflows list's filters in words, for the bulk confirmation ("status running · type countdown"). */
import type { WorkflowFilters } from '../../routing/route';
import { timeRangeLabels } from '../../data/list-filters';

export function describeFilters(
  filters: Pick<WorkflowFilters, 'status' | 'type' | 'owner' | 'idPrefix'> &
    Partial<Pick<WorkflowFilters, 'text' | 'since' | 'where'>>,
): string {
  const parts: string[] = [];
  if (filters.status.length > 0) parts.push(`status ${filters.status.join(' or ')}`);
  if (filters.type) parts.push(`type ${filters.type}`);
  if (filters.owner === 'none') parts.push('owned by nobody');
  else if (filters.owner) parts.push(`owner ${filters.owner.slice(0, 8)}`);
  if (filters.idPrefix) parts.push(`id starting “${filters.idPrefix}”`);
  if (filters.text?.trim()) parts.push(`containing “${filters.text.trim()}”`);
  for (const condition of filters.where ?? []) parts.push(condition);
  if (filters.since) parts.push(`started in the ${timeRangeLabels[filters.since]}`);
  return parts.length > 0 ? `the filter (${parts.join(' · ')})` : 'the list (no filter: every workflow)';
}

/**
 * What the bulk confirmation says it will act on: `matched` ids were collected (at most `max` + 1; beyond
 * `max`, more match than one confirmation acts on, and it acts on the first `max` in the list's order).
 */
export function bulkCountWords(
  matched: number,
  max: number,
  applies: string,
  describeFilter: string,
): string {
  if (matched === 0) return `No ${applies} workflow matches ${describeFilter}: nothing to do.`;
  if (matched > max)
    return `More than ${max.toLocaleString('en-US')} ${applies} workflows match ${describeFilter}. One confirmation acts on at most ${max.toLocaleString('en-US')}: these are the first ${max.toLocaleString('en-US')} in the list’s order. Confirm again for the rest once these have ended.`;
  return `${matched.toLocaleString('en-US')} ${applies} workflow${matched === 1 ? '' : 's'} match${matched === 1 ? 'es' : ''} ${describeFilter}.`;
}
