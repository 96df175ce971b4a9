/** The Workflows list's filters in words, for the bulk confirmation ("status running · type countdown"). */
import type { WorkflowFilters } from '../../routing/route';
import { timeRangeLabels } from '../../data/list-filters';

export function describeFilters(
  filters: Pick<WorkflowFilters, 'status' | 'type' | 'owner' | 'idPrefix'> &
    Partial<Pick<WorkflowFilters, 'text' | 'since'>>,
): string {
  const parts: string[] = [];
  if (filters.status.length > 0) parts.push(`status ${filters.status.join(' or ')}`);
  if (filters.type) parts.push(`type ${filters.type}`);
  if (filters.owner === 'none') parts.push('owned by nobody');
  else if (filters.owner) parts.push(`owner ${filters.owner.slice(0, 8)}`);
  if (filters.idPrefix) parts.push(`id starting “${filters.idPrefix}”`);
  if (filters.text?.trim()) parts.push(`containing “${filters.text.trim()}”`);
  if (filters.since) parts.push(`started in the ${timeRangeLabels[filters.since]}`);
  return parts.length > 0 ? `the filter (${parts.join(' · ')})` : 'the list (no filter: every workflow)';
}
