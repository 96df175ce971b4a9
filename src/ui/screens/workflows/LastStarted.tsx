/** "Started order · 7f3a…": the workflow this person last started from this tab, with a link to it. */
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useViewStore } from '../../state/view-store';
import styles from './LastStarted.module.css';

export function LastStarted() {
  const last = useViewStore((state) => state.lastStarted);
  if (!last) return null;
  return (
    <span
      className={styles.started}
      role="status"
      data-testid="workflows.start-result"
      data-workflow-id={last.workflowId}
    >
      Started {last.workflowType}
      <Link to={routes.workflow(last.workflowId)} className={styles.link} title={last.workflowId}>
        {last.workflowId.length > 14 ? `${last.workflowId.slice(0, 14)}…` : last.workflowId}
      </Link>
    </span>
  );
}
