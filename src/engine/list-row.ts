/**
 * A workflow's row in a list, built one way (`list` builds it from a stored record), and the filters a row
 * passes, decided one way: `list` applies them, and the studio when it patches the rows a change names into
 * its open lists (src/ui/data/list-rows.ts). A pure module (its one runtime import is attributes.ts, pure
 * too), so the UI uses it at runtime too.
 */
import { attributeConditions, matchesAttributeConditions } from './attributes';
import type { ListFilter, WorkflowFacts, WorkflowSummary } from './inspect';

/** What a row shows beside the workflow's own facts, read by the caller (owner, epoch, what it waits on). */
export type RowContext = Pick<WorkflowSummary, 'updatedAt' | 'owner' | 'epoch' | 'waitingOn' | 'corrupt'>;

/** The facts a row shows of the workflow itself (its error as the record keeps it). */
export type RowFacts = Omit<WorkflowSummary, keyof RowContext | 'error'> & Pick<WorkflowFacts, 'error'>;

/** The list row of a workflow: its identity and timing facts, what the caller read beside it, its error in one line. */
export function listRow(facts: RowFacts, beside: RowContext): WorkflowSummary {
  const {
    workflowId,
    workflowType,
    version,
    run,
    status,
    createdAt,
    startedAt,
    endedAt,
    parentId,
    error,
    attributes,
  } = facts;
  const { corrupt, ...context } = beside;
  return {
    workflowId,
    workflowType,
    version,
    run,
    status,
    createdAt,
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(endedAt !== undefined ? { endedAt } : {}),
    ...(parentId !== undefined ? { parentId } : {}),
    ...(attributes !== undefined ? { attributes } : {}),
    ...context,
    ...(error ? { error: `${error.name}: ${error.message}` } : {}),
    ...(corrupt ? { corrupt } : {}),
  };
}

/**
 * Whether `row` passes `filter`'s status (one or several), type, owner, id-prefix and time-range filters —
 * those `list` applies to each row. An empty or absent filter passes every row.
 */
export function matchesListFilter(
  row: WorkflowSummary,
  filter: Pick<
    ListFilter,
    | 'status'
    | 'workflowType'
    | 'ownerEngineId'
    | 'idPrefix'
    | 'createdFrom'
    | 'createdTo'
    | 'endedFrom'
    | 'endedTo'
    | 'attributes'
    | 'where'
  >,
): boolean {
  const statuses =
    filter.status === undefined ? null : Array.isArray(filter.status) ? filter.status : [filter.status];
  const within = (time: number | null | undefined, from?: number, to?: number) =>
    (from === undefined || (time != null && time >= from)) &&
    (to === undefined || (time != null && time < to));
  return (
    (!statuses || statuses.includes(row.status)) &&
    (!filter.workflowType || row.workflowType === filter.workflowType) &&
    (!filter.ownerEngineId || row.owner?.engineId === filter.ownerEngineId) &&
    (!filter.idPrefix || row.workflowId.startsWith(filter.idPrefix)) &&
    within(row.createdAt, filter.createdFrom, filter.createdTo) &&
    within(row.endedAt, filter.endedFrom, filter.endedTo) &&
    matchesAttributes(row, filter)
  );
}

/**
 * Whether `row` passes `filter`'s search attribute conditions, each typed by the row's own attribute (a
 * list typed them by the declared type already; the studio patching a changed row in has only the row). A
 * filter that is not valid matches nothing.
 */
function matchesAttributes(row: WorkflowSummary, filter: Pick<ListFilter, 'attributes' | 'where'>): boolean {
  if (filter.attributes === undefined && filter.where === undefined) return true;
  try {
    return matchesAttributeConditions(row.attributes, attributeConditions(filter.attributes, filter.where));
  } catch {
    return false;
  }
}
