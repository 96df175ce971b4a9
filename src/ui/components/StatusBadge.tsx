/**
 * A workflow status as a pill: a word first (colour is never the only signal), tinted by how the status
 * reads — in progress, done, broken, waiting or stopped.
 */
import type { WorkflowStatus } from '../../public';
import styles from './StatusBadge.module.css';

const tone: Record<WorkflowStatus, 'info' | 'success' | 'danger' | 'warning' | 'neutral'> = {
  pending: 'warning',
  running: 'info',
  suspended: 'warning',
  completed: 'success',
  failed: 'danger',
  cancelled: 'neutral',
  terminated: 'neutral',
  'timed-out': 'danger',
  'continued-as-new': 'neutral',
};

export function StatusBadge({ status, testId }: { status: WorkflowStatus; testId?: string }) {
  return (
    <span className={`${styles.badge} ${styles[tone[status]]}`} data-testid={testId} data-status={status}>
      <span className={`${styles.dot} ${status === 'running' ? styles.pulse : ''}`} aria-hidden />
      {status}
    </span>
  );
}
