/**
 * Open operations as a table: (the workflow,) the operation, what it is doing — an activity's attempt, a
 * back-off, an external completion awaited —, when it is due (a timer, the next attempt, a timeout), and
 * since when the workflow waits on it. Used by the Pending work screen and a workflow's Pending tab.
 */
import { MiddleTruncate } from '../MiddleTruncate';
import { RelativeTime } from '../RelativeTime';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { pendingState, type PendingItem } from './pending-work';
import styles from './PendingTable.module.css';

const kindWords: Record<PendingItem['kind'], string> = {
  activity: 'activity',
  timer: 'timer',
  signal: 'signal',
  condition: 'waitUntil',
  child: 'child',
};

/** The operation's own name, when it says more than its kind (a child's id; not `sleep`, not `until`). */
function operationName(item: PendingItem): string {
  if (item.kind === 'child') return item.childId ?? '';
  if (
    (item.kind === 'timer' && item.name === 'sleep') ||
    (item.kind === 'condition' && item.name === 'until')
  )
    return '';
  return item.name;
}

export function PendingTable({
  items,
  showWorkflow,
  label,
}: {
  items: readonly PendingItem[];
  showWorkflow: boolean;
  label: string;
}) {
  return (
    <table className={styles.table} aria-label={label} data-testid="pending.table">
      <thead>
        <tr>
          {showWorkflow ? <th scope="col">Workflow</th> : null}
          <th scope="col">Operation</th>
          <th scope="col">Now</th>
          <th scope="col">Due</th>
          <th scope="col">Waiting since</th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr
            key={item.key}
            data-testid="pending.row"
            data-kind={item.kind}
            data-workflow-id={item.workflowId}
            data-attempt={item.attempt ?? undefined}
            data-due-at={item.dueAt ?? undefined}
          >
            {showWorkflow ? (
              <td className={styles.workflow}>
                <Link to={routes.workflow(item.workflowId)} className={styles.id} title={item.workflowId}>
                  <MiddleTruncate text={item.workflowId} />
                </Link>
                <span className={styles.type}>{item.workflowType}</span>
              </td>
            ) : null}
            <td>
              <span className={`${styles.kind} ${styles[item.kind]}`}>{kindWords[item.kind]}</span>{' '}
              <span className={styles.name}>{operationName(item)}</span>
            </td>
            <td className={styles.state} title={item.lastError ?? undefined}>
              {pendingState(item)}
              {item.lastError ? <span className={styles.error}>{item.lastError}</span> : null}
              {item.heartbeat ? (
                <span
                  className={styles.heartbeat}
                  data-testid="pending.heartbeat"
                  title={`Last heartbeat, recorded by attempt ${item.heartbeat.attempt}: the next attempt starts from it`}
                >
                  {'heartbeat '}
                  <RelativeTime at={item.heartbeat.at} />
                  {item.heartbeat.preview !== null ? (
                    <>
                      {' · '}
                      <code className={styles.details}>{item.heartbeat.preview}</code>
                    </>
                  ) : null}
                </span>
              ) : null}
            </td>
            <td className={styles.time} data-testid="pending.due">
              {item.dueAt !== null ? (
                <RelativeTime at={item.dueAt} />
              ) : (
                <span className={styles.none}>—</span>
              )}
            </td>
            <td className={styles.time}>
              <RelativeTime at={item.since} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
