/**
 * The workflows screen: every workflow of the database, live, whichever tab runs it — filtered by status,
 * type and owner, searched by id prefix, sorted by any column (all of it in the URL), and a way to start
 * one.
 */
import type { ListFilter } from '../../../public';
import { Button } from '../../components/Button';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { useEffect, useMemo } from 'react';
import { autoPages, useWorkflowList } from '../../data/workflow-queries';
import type { WorkflowFilters } from '../../routing/route';
import { useViewStore } from '../../state/view-store';
import { WorkflowFilterBar } from './WorkflowFilterBar';
import { useFilterClock, WorkflowTable } from './WorkflowTable';
import { hasClientFilters, rowMatcher } from '../../data/list-filters';
import styles from './WorkflowsScreen.module.css';
import { LastStarted } from './LastStarted';
import { ScreenHeader } from '../../components/ScreenHeader';
import { BulkActions } from './BulkActions';
import { describeFilters } from './describe-filters';

/** The part of the filters the engine applies. */
function engineFilter(filters: WorkflowFilters): Omit<ListFilter, 'limit' | 'cursor'> {
  return {
    ...(filters.status.length === 1
      ? { status: filters.status[0] }
      : filters.status.length > 1
        ? { status: filters.status }
        : {}),
    ...(filters.type ? { workflowType: filters.type } : {}),
    ...(filters.owner && filters.owner !== 'none' ? { ownerEngineId: filters.owner } : {}),
    ...(filters.idPrefix ? { idPrefix: filters.idPrefix } : {}),
    ...(filters.where.length > 0 ? { where: filters.where } : {}),
  };
}

export function WorkflowsScreen({ filters }: { filters: WorkflowFilters }) {
  // Every run (run history) is a way of listing, not a filter bulk actions apply: they act on latest runs.
  const list = useWorkflowList({ ...engineFilter(filters), ...(filters.allRuns ? { allRuns: true } : {}) });
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  const pages = list.data?.pages ?? 0;
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && pages < autoPages) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, pages, fetchNextPage]);
  const openStartDialog = useViewStore((state) => state.openStartDialog);
  const now = useFilterClock(filters);
  const { owner, text, since } = filters;
  const fetched = list.data?.items;
  const items = useMemo(
    () =>
      fetched && hasClientFilters({ owner, text, since })
        ? fetched.filter(rowMatcher({ owner, text, since }, now))
        : fetched,
    [fetched, owner, text, since, now],
  );
  const running = items?.filter((item) => item.status === 'running').length ?? 0;
  const filtered =
    filters.status.length > 0 ||
    filters.type ||
    filters.owner ||
    filters.idPrefix ||
    filters.where.length > 0 ||
    hasClientFilters(filters);
  return (
    <section className={styles.screen} aria-labelledby="workflows-title">
      <ScreenHeader
        titleId="workflows-title"
        title="Workflows"
        summary={
          items
            ? `${items.length.toLocaleString()}${list.data?.hasMore ? '+' : ''} ${filtered ? 'matching' : 'in this database'} · ${running} running`
            : 'Every workflow of this database, whichever engine runs it.'
        }
        summaryTestId="workflows.summary"
      >
        <LastStarted />
        <Button
          variant="primary"
          icon="play"
          onClick={() => openStartDialog()}
          testId="workflows.start-button"
        >
          Start workflow
        </Button>
      </ScreenHeader>
      <PanelErrorBoundary name="filters">
        <WorkflowFilterBar filters={filters} />
      </PanelErrorBoundary>
      <PanelErrorBoundary name="bulk actions">
        <BulkActions
          filter={engineFilter(filters)}
          describeFilter={describeFilters(filters)}
          rows={{ owner, text, since }}
        />
      </PanelErrorBoundary>
      <PanelErrorBoundary name="workflows">
        <WorkflowTable list={list} filters={filters} />
      </PanelErrorBoundary>
    </section>
  );
}
