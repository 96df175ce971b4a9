/**
 * The workflows screen: every workflow of the database, live, and a way to start the countdown demo.
 */
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { useWorkflowList } from '../../data/workflow-queries';
import { StartDemo } from './StartDemo';
import { WorkflowTable } from './WorkflowTable';
import styles from './WorkflowsScreen.module.css';

export function WorkflowsScreen() {
  const list = useWorkflowList();
  const items = list.data?.items;
  const running = items?.filter((item) => item.status === 'running').length ?? 0;
  return (
    <section className={styles.screen} aria-labelledby="workflows-title" id="workflows">
      <div className={styles.header}>
        <div>
          <h1 id="workflows-title" className={styles.title}>
            Workflows
          </h1>
          <p className={styles.subtitle} data-testid="workflows.summary">
            {items
              ? `${items.length}${list.data?.hasMore ? '+' : ''} in this database · ${running} running`
              : 'Every workflow of this database, whichever tab runs it.'}
          </p>
        </div>
        <PanelErrorBoundary name="start">
          <StartDemo />
        </PanelErrorBoundary>
      </div>
      <PanelErrorBoundary name="workflows">
        <WorkflowTable list={list} />
      </PanelErrorBoundary>
    </section>
  );
}
