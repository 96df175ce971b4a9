/**
 * Starts the built-in countdown demo with its sample input, and confirms which workflow it started (or says
 * why it could not). The full start dialog — any definition, edited input, custom id — replaces this later.
 */
import { useDefinitions, useStartWorkflow } from '../../data/workflow-queries';
import { useThisEngine } from '../../data/engine-queries';
import { CopyableId } from '../../components/CopyableId';
import { useViewStore } from '../../state/view-store';
import styles from './StartDemo.module.css';

const demoType = 'countdown';

export function StartDemo() {
  const { data: engine } = useThisEngine();
  const definitions = useDefinitions();
  const start = useStartWorkflow();
  const lastStarted = useViewStore((state) => state.lastStarted);
  const noteStarted = useViewStore((state) => state.noteStarted);
  const demo = definitions.data?.find((definition) => definition.name === demoType);
  const engineState = engine?.status.state;
  const canStart =
    Boolean(demo) && (engineState === 'running' || engineState === 'starting') && !start.isPending;
  const onStart = () => {
    if (!demo) return;
    start.mutate(
      { workflowType: demo.name, ...(demo.sampleInput === null ? {} : { input: demo.sampleInput }) },
      { onSuccess: (workflowId) => noteStarted({ workflowId, workflowType: demo.name, at: Date.now() }) },
    );
  };
  return (
    <div className={styles.wrap}>
      <div className={styles.feedback} aria-live="polite">
        {start.isError ? (
          <span className={styles.error} data-testid="workflows.start-error">
            {start.error.name}: {start.error.message}
          </span>
        ) : lastStarted ? (
          <span
            className={styles.started}
            data-testid="workflows.start-result"
            data-workflow-id={lastStarted.workflowId}
          >
            Started {lastStarted.workflowType}{' '}
            <CopyableId id={lastStarted.workflowId} visibleChars={8} label="workflow id" />
          </span>
        ) : demo?.description ? (
          <span className={styles.hint}>{demo.description}</span>
        ) : null}
      </div>
      <button
        type="button"
        className={styles.button}
        onClick={onStart}
        disabled={!canStart}
        data-testid="workflows.start-button"
        title={
          demo ? `Start '${demo.name}' with ${JSON.stringify(demo.sampleInput)}` : 'Loading definitions…'
        }
      >
        <svg className={styles.icon} viewBox="0 0 10 10" width="10" height="10" aria-hidden="true">
          <path d="M2 1l7 4-7 4z" fill="currentColor" />
        </svg>
        {start.isPending ? 'Starting…' : 'Start countdown'}
      </button>
    </div>
  );
}
