/**
 * "Started order · 7f3a…": the workflow this person last started from this tab, with a link to it. It shows
 * for `startedNoticeMs` after the start (last-started.ts) and can be dismissed before that.
 */
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useNow } from '../../state/now';
import { useViewStore } from '../../state/view-store';
import { showsStartedNotice } from './last-started';
import styles from './LastStarted.module.css';

export function LastStarted() {
  const last = useViewStore((state) => state.lastStarted);
  if (!last) return null;
  return <StartedNotice />;
}

/** Mounted only while there is a notice, so the shared clock ticks for it only then. */
function StartedNotice() {
  const last = useViewStore((state) => state.lastStarted);
  const now = useNow();
  if (!showsStartedNotice(last, now)) return null;
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
      <button
        type="button"
        className={styles.dismiss}
        aria-label="Dismiss"
        title="Dismiss"
        onClick={() => useViewStore.setState({ lastStarted: null })}
        data-testid="workflows.start-result-dismiss"
      >
        ×
      </button>
    </span>
  );
}
