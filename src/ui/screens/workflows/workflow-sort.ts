/**
 * Sorting and the client-side filters of the workflows list. The engine filters by status, type, owner and
 * id prefix; sorting by any column happens here, over the fetched rows, and so does "owned by nobody"
 * (the engine filters by an owner, not by the lack of one).
 */
import type { WorkflowStatus, WorkflowSummary } from '../../../public';
import type { SortDirection, WorkflowSortKey } from '../../routing/route';

/** Where each status sorts (live work first): typed by the one vocabulary, so a new status must be placed. */
const statusOrder: Record<WorkflowStatus, number> = {
  running: 0,
  pending: 1,
  suspended: 2,
  failed: 3,
  'timed-out': 4,
  terminated: 5,
  cancelled: 6,
  completed: 7,
  'continued-as-new': 8,
};

function compareBy(key: WorkflowSortKey, ownerLabel: (engineId: string) => string) {
  switch (key) {
    case 'created':
      return (a: WorkflowSummary, b: WorkflowSummary) => a.createdAt - b.createdAt;
    case 'updated':
      return (a: WorkflowSummary, b: WorkflowSummary) => a.updatedAt - b.updatedAt;
    case 'id':
      return (a: WorkflowSummary, b: WorkflowSummary) =>
        a.workflowId < b.workflowId ? -1 : a.workflowId > b.workflowId ? 1 : 0;
    case 'type':
      return (a: WorkflowSummary, b: WorkflowSummary) => a.workflowType.localeCompare(b.workflowType);
    case 'status':
      return (a: WorkflowSummary, b: WorkflowSummary) => statusOrder[a.status] - statusOrder[b.status];
    case 'epoch':
      return (a: WorkflowSummary, b: WorkflowSummary) => (a.epoch ?? -1) - (b.epoch ?? -1);
    case 'owner':
      return (a: WorkflowSummary, b: WorkflowSummary) =>
        (a.owner ? ownerLabel(a.owner.engineId) : '\uffff').localeCompare(
          b.owner ? ownerLabel(b.owner.engineId) : '\uffff',
          undefined,
          { numeric: true },
        );
  }
}

/** `items` sorted by `key` in `direction`; ties broken by newest first, then id, so the order is stable. */
export function sortWorkflows(
  items: readonly WorkflowSummary[],
  key: WorkflowSortKey,
  direction: SortDirection,
  ownerLabel: (engineId: string) => string = (engineId) => engineId,
): WorkflowSummary[] {
  const compare = compareBy(key, ownerLabel);
  const sign = direction === 'asc' ? 1 : -1;
  return [...items].sort(
    (a, b) => sign * compare(a, b) || b.createdAt - a.createdAt || (a.workflowId < b.workflowId ? -1 : 1),
  );
}
