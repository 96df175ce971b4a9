/**
 * The live table of workflows: id, type, status, owner (engine chip) and epoch, what it waits on, and when
 * it last changed. Rows update as the workflows run in any tab; the selected workflow (the one just started
 * from this tab) is highlighted.
 */
import type { WorkflowSummary } from '../../../engine';
import type { EngineRecord } from '../../../worker/protocol';
import { EngineTag } from '../../components/EngineTag';
import { Notice } from '../../components/Notice';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { useEngineDirectory } from '../../data/engine-queries';
import type { useWorkflowList } from '../../data/workflow-queries';
import { useViewStore } from '../../state/view-store';
import styles from './WorkflowTable.module.css';

export type WorkflowTableProps = { list: ReturnType<typeof useWorkflowList> };

export function WorkflowTable({ list }: WorkflowTableProps) {
  const engines = useEngineDirectory();
  const selectedId = useViewStore((state) => state.selectedWorkflowId);
  if (list.isError && !list.data)
    return (
      <Notice
        tone="danger"
        title="Could not load the workflows"
        testId="workflows.error"
        action={{ label: 'Retry', onClick: () => void list.refetch() }}
      >
        {list.error.name}: {list.error.message}
      </Notice>
    );
  const items = list.data?.items;
  return (
    <div className={styles.card}>
      <table className={styles.table} data-testid="workflows.table">
        <colgroup>
          <col className={styles.colId} />
          <col className={styles.colType} />
          <col className={styles.colStatus} />
          <col className={styles.colOwner} />
          <col className={styles.colEpoch} />
          <col />
          <col className={styles.colUpdated} />
        </colgroup>
        <thead>
          <tr>
            <th scope="col">Workflow</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Owner</th>
            <th scope="col" className={styles.numeric}>
              Epoch
            </th>
            <th scope="col">Waiting on</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {items?.map((workflow) => (
            <WorkflowRow
              key={workflow.workflowId}
              workflow={workflow}
              engines={engines}
              selected={workflow.workflowId === selectedId}
            />
          ))}
        </tbody>
      </table>
      {!items ? (
        <div className={styles.empty} data-testid="workflows.loading">
          Loading workflows…
        </div>
      ) : items.length === 0 ? (
        <div className={styles.empty} data-testid="workflows.empty">
          <strong>No workflows yet</strong>
          <span>
            Start the countdown demo and watch this tab’s engine run it. Open a second tab, close this one,
            and the countdown carries on over there.
          </span>
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

type RowProps = {
  workflow: WorkflowSummary;
  engines: ReadonlyMap<string, EngineRecord>;
  selected: boolean;
};

function WorkflowRow({ workflow, engines, selected }: RowProps) {
  return (
    <tr
      className={selected ? styles.selected : undefined}
      data-selected={selected || undefined}
      data-testid="workflows.row"
      data-workflow-id={workflow.workflowId}
      data-status={workflow.status}
    >
      <td>
        <code className={styles.id} title={workflow.workflowId} data-testid="workflows.row-id">
          {workflow.workflowId}
        </code>
      </td>
      <td data-testid="workflows.row-type">
        {workflow.workflowType}
        <span className={styles.version}> v{workflow.version}</span>
      </td>
      <td>
        <StatusBadge status={workflow.status} testId="workflows.row-status" />
      </td>
      <td data-testid="workflows.row-owner">
        <Owner workflow={workflow} engines={engines} />
      </td>
      <td className={styles.numeric} data-testid="workflows.row-epoch">
        {workflow.epoch ?? '—'}
      </td>
      <td className={styles.waiting} data-testid="workflows.row-waiting">
        <WaitingOn workflow={workflow} />
      </td>
      <td className={styles.updated} data-testid="workflows.row-updated">
        <RelativeTime at={workflow.updatedAt} />
      </td>
    </tr>
  );
}

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
  if (workflow.error)
    return (
      <span className={styles.problem} title={workflow.error}>
        {workflow.error}
      </span>
    );
  if (workflow.waitingOn) return <span title={workflow.waitingOn}>{workflow.waitingOn}</span>;
  return <span className={styles.none}>—</span>;
}
