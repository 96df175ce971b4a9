/**
 * The live table of workflows: id (and its run number when the id ran more than once), type, status, owner
 * (engine chip) and epoch, what it waits on, when it started and last changed. Rows update as the workflows run in any tab. The rows are virtualised inside the
 * table's own scroll area (only those on screen are in the DOM), so 1,000 workflows scroll as smoothly as ten;
 * column headers sort, and a row opens the workflow.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useMemo, useRef, type CSSProperties } from 'react';
import type { WorkflowSummary } from '../../../public';
import { formatAttribute } from '../../../public/browser';
import type { EngineRecord } from '../../../public/browser';
import { Button } from '../../components/Button';
import { EmptyState } from '../../components/EmptyState';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Icon } from '../../components/icons';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { useEngineDirectory } from '../../data/engine-queries';
import { useStudioMode } from '../../data/studio-mode';
import { autoPages, type useWorkflowList } from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import {
  defaultSortDirection,
  routes,
  type WorkflowFilters,
  type WorkflowSortKey,
} from '../../routing/route';
import { navigate } from '../../routing/router';
import { useViewStore } from '../../state/view-store';
import { clockStore } from '../../state/now';
import { useStore } from 'zustand';
import { hasClientFilters, nestRows, rowMatcher } from '../../data/list-filters';
import styles from './WorkflowTable.module.css';
import { sortWorkflows } from './workflow-sort';
import { rowKey } from '../../data/list-rows';
import { isTerminal } from '../../../public/browser';
import { MiddleTruncate } from '../../components/MiddleTruncate';
import { waitingOnText } from '../../components/waiting-on';

export type WorkflowTableProps = { list: ReturnType<typeof useWorkflowList>; filters: WorkflowFilters };

/**
 * The time a time range is counted back from: the clock, in steps of 10 s, so the rows are filtered again
 * that often (not on every tick); fixed while no time range applies.
 */
export function useFilterClock(filters: Pick<WorkflowFilters, 'since'>): number {
  const active = filters.since !== null;
  useEffect(() => (active ? clockStore.getState().watch() : undefined), [active]);
  return useStore(clockStore, (clock) => (active ? Math.floor(clock.now / 10_000) * 10_000 : 0));
}

const rowHeight = 45;
/** At most this many search attribute columns (the first names in name order). */
const maxAttributeColumns = 4;

type Column = { key: WorkflowSortKey | null; label: string; numeric?: boolean };
const columns: Column[] = [
  { key: 'id', label: 'Workflow' },
  { key: 'type', label: 'Type' },
  { key: 'status', label: 'Status' },
  { key: 'owner', label: 'Owner' },
  { key: 'epoch', label: 'Epoch', numeric: true },
  { key: null, label: 'Waiting on' },
  { key: 'created', label: 'Started' },
  { key: 'updated', label: 'Updated' },
];

export function WorkflowTable({ list, filters }: WorkflowTableProps) {
  const engines = useEngineDirectory();
  const selectedId = useViewStore((state) => state.selectedWorkflowId);
  const openStartDialog = useViewStore((state) => state.openStartDialog);
  const { server } = useStudioMode();
  const fetched = list.data?.items;
  // The latest run of each id (a list of every run holds earlier ones too, which open as earlier runs).
  const latestRuns = useMemo(() => {
    const latest = new Map<string, number>();
    for (const item of fetched ?? [])
      latest.set(item.workflowId, Math.max(item.run, latest.get(item.workflowId) ?? 0));
    return latest;
  }, [fetched]);
  const now = useFilterClock(filters);
  const { owner, text, since, nest } = filters;
  const rows = useMemo(() => {
    if (!fetched) return undefined;
    const kept = fetched.filter(rowMatcher({ owner, text, since }, now));
    const sorted = sortWorkflows(
      kept,
      filters.sort,
      filters.direction,
      (engineId) => engines.get(engineId)?.label ?? engineId,
    );
    return nest ? nestRows(sorted) : sorted.map((row) => ({ row, depth: 0 }));
  }, [fetched, owner, text, since, nest, now, filters.sort, filters.direction, engines]);
  const items = rows?.map((entry) => entry.row);
  // A column per search attribute the loaded rows hold (the first few names, in name order).
  const attributeKey = useMemo(() => {
    const names = new Set<string>();
    for (const row of fetched ?? []) for (const name of Object.keys(row.attributes ?? {})) names.add(name);
    return [...names].sort().slice(0, maxAttributeColumns).join('\n');
  }, [fetched]);
  const attributeNames = useMemo(() => (attributeKey ? attributeKey.split('\n') : []), [attributeKey]);
  const gridStyle =
    attributeNames.length > 0
      ? ({
          '--attribute-columns': attributeNames.map(() => 'minmax(80px, 0.8fr)').join(' '),
        } as CSSProperties)
      : undefined;

  if (list.isError && !list.data)
    return (
      <ErrorNotice
        error={list.error}
        title="Could not load the workflows"
        onRetry={() => void list.refetch()}
        testId="workflows.error"
      />
    );

  const filtered =
    filters.status.length > 0 ||
    filters.type ||
    filters.owner ||
    filters.idPrefix ||
    filters.where.length > 0 ||
    hasClientFilters(filters);
  return (
    <div className={styles.card}>
      <div
        className={styles.table}
        role="table"
        aria-label="Workflows"
        aria-rowcount={items ? items.length + 1 : undefined}
        data-testid="workflows.table"
        style={gridStyle}
      >
        <div className={`${styles.row} ${styles.head}`} role="row">
          {columns.map((column) => (
            <HeaderCell key={column.label} column={column} filters={filters} />
          ))}
          {attributeNames.map((name) => (
            <div
              key={`attribute:${name}`}
              className={styles.cell}
              role="columnheader"
              title={`Search attribute ${name}`}
              data-testid="workflows.attribute-column"
            >
              {name}
            </div>
          ))}
        </div>
        {rows && rows.length > 0 ? (
          <Rows
            rows={rows}
            engines={engines}
            selectedId={selectedId}
            latestRuns={latestRuns}
            attributeNames={attributeNames}
          />
        ) : null}
        {!items ? (
          <EmptyState title="Loading workflows…" testId="workflows.loading" compact />
        ) : items.length === 0 ? (
          filtered ? (
            <EmptyState
              icon="search"
              title="No workflow matches these filters"
              testId="workflows.empty-filtered"
            >
              Workflows of every engine show here as soon as they start. Clear a filter to see more.
            </EmptyState>
          ) : (
            <EmptyState
              icon="workflows"
              title="No workflows yet"
              testId="workflows.empty"
              action={
                <Button variant="primary" icon="play" onClick={() => openStartDialog()}>
                  Start a workflow
                </Button>
              }
            >
              {server
                ? 'Start one of the demos and watch a worker process run it. Kill that worker from Engines, and another carries it on.'
                : 'Start one of the demos and watch this tab’s engine run it. Open a second engine tab, close this one, and the workflow carries on over there.'}
            </EmptyState>
          )
        ) : null}
      </div>
      {list.hasNextPage && (list.data?.pages ?? 0) >= autoPages ? (
        <div className={styles.more}>
          <Button
            size="sm"
            onClick={() => void list.fetchNextPage()}
            busy={list.isFetchingNextPage}
            testId="workflows.load-more"
          >
            Load the next {(1000).toLocaleString()}
          </Button>
          <span>Sorting applies to the rows loaded so far.</span>
        </div>
      ) : null}
      {list.isError && list.data ? (
        <div className={styles.stale} role="status" data-testid="workflows.stale">
          Showing the last list: refreshing failed ({list.error.message}).
        </div>
      ) : null}
    </div>
  );
}

function HeaderCell({ column, filters }: { column: Column; filters: WorkflowFilters }) {
  const className = `${styles.cell} ${column.numeric ? styles.numeric : ''}`;
  if (!column.key)
    return (
      <div className={className} role="columnheader">
        {column.label}
      </div>
    );
  const active = filters.sort === column.key;
  const nextDirection = active
    ? filters.direction === 'asc'
      ? 'desc'
      : 'asc'
    : defaultSortDirection(column.key);
  return (
    <div
      className={className}
      role="columnheader"
      aria-sort={active ? (filters.direction === 'asc' ? 'ascending' : 'descending') : 'none'}
    >
      <button
        type="button"
        className={`${styles.sort} ${active ? styles.sorted : ''}`}
        onClick={() =>
          navigate(routes.workflows({ ...filters, sort: column.key!, direction: nextDirection }), {
            replace: true,
          })
        }
        data-testid={`workflows.sort-${column.key}`}
        title={`Sort by ${column.label.toLowerCase()}`}
      >
        {column.label}
        <span className={styles.sortIcon} aria-hidden>
          {active ? <Icon name={filters.direction === 'asc' ? 'arrow-up' : 'arrow-down'} size={12} /> : null}
        </span>
      </button>
    </div>
  );
}

function Rows({
  rows,
  engines,
  selectedId,
  latestRuns,
  attributeNames,
}: {
  rows: { row: WorkflowSummary; depth: number }[];
  engines: ReadonlyMap<string, EngineRecord>;
  selectedId: string | null;
  latestRuns: ReadonlyMap<string, number>;
  attributeNames: readonly string[];
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  // TanStack Virtual re-renders the rows on scroll by design; the compiler's memoisation is not needed here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  return (
    <div ref={scrollRef} className={styles.body} role="rowgroup" data-testid="workflows.scroll">
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {virtualizer.getVirtualItems().map((virtual) => {
          const { row: workflow, depth } = rows[virtual.index]!;
          const earlier = workflow.run < (latestRuns.get(workflow.workflowId) ?? 0);
          return (
            <WorkflowRow
              key={rowKey(workflow)}
              workflow={workflow}
              depth={depth}
              earlier={earlier}
              engines={engines}
              selected={workflow.workflowId === selectedId && !earlier}
              top={virtual.start}
              index={virtual.index}
              attributeNames={attributeNames}
            />
          );
        })}
      </div>
    </div>
  );
}

type RowProps = {
  workflow: WorkflowSummary;
  /** Its level in the tree view (0: not under a listed parent). */
  depth: number;
  /** An earlier run of its id (a list of every run): it opens as that run. */
  earlier: boolean;
  engines: ReadonlyMap<string, EngineRecord>;
  selected: boolean;
  top: number;
  index: number;
  /** The search attribute columns shown. */
  attributeNames: readonly string[];
};

/** One row; skipped on re-render when its workflow, position and selection are unchanged. */
const WorkflowRow = memo(function WorkflowRow({
  workflow,
  depth,
  earlier,
  engines,
  selected,
  top,
  index,
  attributeNames,
}: RowProps) {
  const to = earlier
    ? routes.workflow(workflow.workflowId, workflow.run)
    : routes.workflow(workflow.workflowId);
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      className={`${styles.row} ${styles.bodyRow} ${selected ? styles.selected : ''}`}
      style={{ transform: `translateY(${top}px)` }}
      data-selected={selected || undefined}
      data-testid="workflows.row"
      data-workflow-id={workflow.workflowId}
      data-run={workflow.run}
      data-earlier-run={earlier || undefined}
      data-status={workflow.status}
      data-depth={depth}
      onClick={(event) => {
        if ((event.target as HTMLElement).closest('a, button')) return;
        navigate(to);
      }}
    >
      <div
        role="cell"
        className={styles.cell}
        style={depth > 0 ? { paddingLeft: 16 + depth * 18 } : undefined}
      >
        {depth > 0 ? (
          <span className={styles.branch} aria-hidden>
            └
          </span>
        ) : null}
        <Link
          to={to}
          className={`${styles.id} ${earlier ? styles.earlierId : ''}`}
          title={workflow.workflowId}
          testId="workflows.row-id"
        >
          <MiddleTruncate text={workflow.workflowId} />
        </Link>
        {workflow.run > 1 || earlier ? (
          <span
            className={`${styles.run} ${earlier ? styles.earlierRun : ''}`}
            title={
              earlier
                ? `An earlier run of this id (run ${workflow.run}): finished, kept by run history`
                : `This id ran before: this is its run ${workflow.run}`
            }
            data-testid="workflows.row-run"
          >
            run {workflow.run}
          </span>
        ) : null}
        {workflow.parentId && depth === 0 ? (
          <span className={styles.child} title={`Child of ${workflow.parentId}`}>
            child
          </span>
        ) : null}
      </div>
      <div
        role="cell"
        className={styles.cell}
        data-testid="workflows.row-type"
        title={`${workflow.workflowType} v${workflow.version}`}
      >
        {workflow.workflowType}
        <span className={styles.version}> v{workflow.version}</span>
      </div>
      <div role="cell" className={`${styles.cell} ${styles.statusCell}`} title={workflow.error}>
        <StatusBadge status={workflow.status} testId="workflows.row-status" />
      </div>
      <div role="cell" className={styles.cell} data-testid="workflows.row-owner">
        <Owner workflow={workflow} engines={engines} />
      </div>
      <div role="cell" className={`${styles.cell} ${styles.numeric}`} data-testid="workflows.row-epoch">
        {workflow.epoch ?? '—'}
      </div>
      <div role="cell" className={`${styles.cell} ${styles.waiting}`} data-testid="workflows.row-waiting">
        <WaitingOn workflow={workflow} />
      </div>
      <div role="cell" className={`${styles.cell} ${styles.time}`}>
        <RelativeTime at={workflow.startedAt ?? workflow.createdAt} />
      </div>
      <div role="cell" className={`${styles.cell} ${styles.time}`} data-testid="workflows.row-updated">
        <RelativeTime at={workflow.updatedAt} />
      </div>
      {attributeNames.map((name) => {
        const attribute = workflow.attributes?.[name];
        const text = attribute ? formatAttribute(attribute) : null;
        return (
          <div
            key={name}
            role="cell"
            className={styles.cell}
            title={text ? `${name} = ${text}` : `No ${name}`}
            data-testid="workflows.row-attribute"
            data-attribute={name}
          >
            {text ?? <span className={styles.none}>—</span>}
          </div>
        );
      })}
    </div>
  );
});

function Owner({
  workflow,
  engines,
}: {
  workflow: WorkflowSummary;
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  if (workflow.owner)
    return <EngineTag engineId={workflow.owner.engineId} engine={engines.get(workflow.owner.engineId)} />;
  if (workflow.status === 'running')
    return (
      <span
        className={styles.unowned}
        title="No engine holds a claim on it right now; a live engine takes it over within a second or two."
      >
        unowned
      </span>
    );
  return <span className={styles.none}>—</span>;
}

function WaitingOn({ workflow }: { workflow: WorkflowSummary }) {
  if (workflow.corrupt)
    return (
      <span className={styles.problem} title={workflow.corrupt.message}>
        corrupt record {workflow.corrupt.key}
      </span>
    );
  // A finished run waits on nothing: how it ended is its status (a failure's message is the status's tooltip
  // and the Outcome of its page).
  if (isTerminal(workflow.status))
    return (
      <span className={styles.none} title={workflow.error ? `Ended — ${workflow.error}` : 'Finished'}>
        —
      </span>
    );
  if (workflow.waitingOn) {
    const text = waitingOnText(workflow.waitingOn);
    return <span title={text}>{text}</span>;
  }
  return <span className={styles.none}>—</span>;
}
