/**
 * Chaos drills: scripted scenarios against the real engines of the open tabs — or, in server mode, the
 * worker processes of the fleet the studio server controls — each ending with pass/fail checks: the drill's
 * own expectation, then the invariants over the durable timelines (epochs only rose, one writer per epoch,
 * no recorded operation ran twice, every workflow finished, no terminal state overwritten). A drill that
 * needs more engines than run says so and offers to add one; a drill that needs tab mode says so.
 */
import { Button } from '../../components/Button';
import { Icon } from '../../components/icons';
import { formatDuration } from '../../components/time-format';
import { useChaosEnvironment } from '../../data/chaos';
import { isEngineLive, useEngines } from '../../data/engine-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { openEngineTab, StartWorkerButton } from '../../components/AddEngine';
import { useFleet, useStudioMode } from '../../data/studio-mode';
import { useNow } from '../../state/now';
import styles from './ChaosScreen.module.css';
import { useDrillStore } from './drill-store';
import { drillDefinitions, type DrillDefinition, type DrillReport, type DrillStep } from './drills';
import { ScreenHeader } from '../../components/ScreenHeader';

export function ChaosScreen() {
  const engines = useEngines().data ?? [];
  const { server } = useStudioMode();
  const fleet = useFleet().data;
  const liveTabs = engines.filter((engine) => isEngineLive(engine) && engine.mode === 'engine').length;
  return (
    <section className={styles.screen} aria-labelledby="chaos-title">
      <ScreenHeader
        titleId="chaos-title"
        title="Chaos drills"
        summary={
          server ? (
            <>
              Break the worker processes of this fleet on purpose — SIGKILL, SIGSTOP, SIGTERM — and check,
              from the durable record, that nothing was lost or done twice.{' '}
              <strong data-testid="chaos.engine-count">
                {liveTabs} worker{liveTabs === 1 ? '' : 's'} running.
              </strong>
              {fleet && !fleet.controlled
                ? ' This studio server controls no fleet (only shuttle dev does), so the drills cannot run here.'
                : ''}
            </>
          ) : (
            <>
              Break the engines of the open tabs on purpose and check, from the durable record, that nothing
              was lost or done twice.{' '}
              <strong data-testid="chaos.engine-count">
                {liveTabs} engine tab{liveTabs === 1 ? '' : 's'} open.
              </strong>
            </>
          )
        }
      >
        {server ? (
          <StartWorkerButton size="md" variant="secondary" testId="chaos.start-worker" />
        ) : (
          <Button icon="plus" onClick={openEngineTab} testId="chaos.open-tab">
            Open engine tab
          </Button>
        )}
      </ScreenHeader>
      <div className={styles.drills}>
        {drillDefinitions.map((drill) => (
          <DrillCard key={drill.id} drill={drill} liveTabs={liveTabs} server={server} />
        ))}
      </div>
    </section>
  );
}

const statusWords: Record<DrillReport['status'], string> = {
  passed: 'Passed',
  failed: 'Failed',
  error: 'Could not finish',
  cancelled: 'Cancelled',
};

function DrillCard({
  drill,
  liveTabs,
  server,
}: {
  drill: DrillDefinition;
  liveTabs: number;
  server: boolean;
}) {
  const environment = useChaosEnvironment();
  const needsTabs = server && drill.tabModeOnly === true;
  const noun = server ? 'worker' : 'engine tab';
  const running = useDrillStore((state) => state.running);
  const report = useDrillStore((state) => state.reports[drill.id]);
  const run = useDrillStore((state) => state.run);
  const cancel = useDrillStore((state) => state.cancel);
  const mine = running?.drillId === drill.id ? running : null;
  const enough = liveTabs >= drill.minEngines;
  const canRun =
    !needsTabs && !running && environment !== null && (enough || (!server && drill.fallback !== null));
  return (
    <article
      className={styles.card}
      data-testid="chaos.drill"
      data-drill={drill.id}
      data-state={mine ? 'running' : (report?.status ?? 'idle')}
    >
      <header className={styles.cardHead}>
        <div className={styles.cardText}>
          <h2 className={styles.cardTitle}>{server ? drill.serverTitle : drill.title}</h2>
          <p className={styles.description}>{server ? drill.serverDescription : drill.description}</p>
          {needsTabs ? (
            <p className={`${styles.requirement} ${styles.short}`} data-testid="chaos.needs-tab-mode">
              <Icon name="cross" size={14} />
              Needs tab mode.
            </p>
          ) : (
            <p className={`${styles.requirement} ${enough ? styles.ok : styles.short}`}>
              <Icon name={enough ? 'check' : 'plus'} size={14} />
              {enough
                ? `Needs ${drill.minEngines} ${noun}s — ${liveTabs} ${server ? 'running' : 'open'}.`
                : `Needs ${drill.minEngines} ${noun}s — ${liveTabs} ${server ? 'running' : 'open'}. ${server ? 'Start another worker to run it.' : (drill.fallback ?? 'Open another tab to run it.')}`}
            </p>
          )}
        </div>
        <div className={styles.cardActions}>
          {mine ? (
            <Button variant="secondary" onClick={cancel} testId="chaos.cancel">
              Cancel
            </Button>
          ) : (
            <Button
              variant="primary"
              icon="play"
              disabled={!canRun}
              onClick={() => environment && void run(drill.id, environment)}
              testId="chaos.run"
            >
              {report ? 'Run again' : 'Run drill'}
            </Button>
          )}
          {!enough && !needsTabs ? (
            server ? (
              <StartWorkerButton size="md" variant="secondary" testId="chaos.drill-start-worker" />
            ) : (
              <Button variant="secondary" icon="plus" onClick={openEngineTab}>
                Open a tab
              </Button>
            )
          ) : null}
        </div>
      </header>
      {mine ? <Steps steps={mine.steps} live /> : report ? <Report report={report} /> : null}
    </article>
  );
}

function Steps({ steps, live }: { steps: DrillStep[]; live?: boolean }) {
  const now = useNow();
  if (steps.length === 0) return <p className={styles.muted}>Starting…</p>;
  return (
    <ol className={styles.steps} data-testid="chaos.steps">
      {steps.map((step) => (
        <li key={step.id} className={`${styles.step} ${styles[step.state]}`} data-state={step.state}>
          <span className={styles.stepIcon} aria-hidden>
            {step.state === 'done' ? (
              <Icon name="check" size={14} />
            ) : step.state === 'failed' ? (
              <Icon name="cross" size={14} />
            ) : (
              <span className={styles.spinner} />
            )}
          </span>
          <span className={styles.stepText}>{step.text}</span>
          {step.detail ? <span className={styles.stepDetail}>{step.detail}</span> : null}
          <span className={styles.stepTime}>
            {formatDuration((step.endedAt ?? (live ? now : step.startedAt)) - step.startedAt)}
          </span>
        </li>
      ))}
    </ol>
  );
}

function Report({ report }: { report: DrillReport }) {
  const results = [
    ...report.checks.map((check) => ({
      key: check.title,
      title: check.title,
      ok: check.ok,
      summary: check.summary,
      violations: [] as string[],
    })),
    ...report.invariants.map((result) => ({
      key: result.name,
      title: result.title,
      ok: result.ok,
      summary: result.summary,
      violations: result.violations,
    })),
  ];
  return (
    <div className={styles.report} data-testid="chaos.report" data-status={report.status}>
      <div className={`${styles.verdict} ${styles[`verdict-${report.status}`]}`} data-testid="chaos.verdict">
        <Icon
          name={report.status === 'passed' ? 'check' : report.status === 'cancelled' ? 'close' : 'cross'}
          size={16}
        />
        <strong>{statusWords[report.status]}</strong>
        <span>
          in {formatDuration(report.endedAt - report.startedAt)}
          {results.length > 0
            ? ` · ${results.filter((result) => result.ok).length} of ${results.length} checks pass`
            : ''}
        </span>
      </div>
      {report.message ? <p className={styles.message}>{report.message}</p> : null}
      {results.length > 0 ? (
        <ul className={styles.checks}>
          {results.map((result) => (
            <li key={result.key} className={styles.check} data-testid="chaos.check" data-ok={result.ok}>
              <span className={`${styles.checkIcon} ${result.ok ? styles.pass : styles.fail}`}>
                <Icon name={result.ok ? 'check' : 'cross'} size={13} />
                <span className="visually-hidden">{result.ok ? 'pass' : 'fail'}</span>
              </span>
              <span className={styles.checkTitle}>{result.title}</span>
              <span className={styles.checkSummary}>{result.summary}</span>
              {result.violations.length > 1 ? (
                <details className={styles.violations}>
                  <summary>{result.violations.length} violations</summary>
                  <ul>
                    {result.violations.slice(0, 50).map((violation) => (
                      <li key={violation}>{violation}</li>
                    ))}
                  </ul>
                </details>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <details className={styles.log}>
        <summary>What the drill did ({report.steps.length} steps)</summary>
        <Steps steps={report.steps} />
      </details>
      {report.workflowIds.length > 0 ? (
        <p className={styles.workflows}>
          Workflows:{' '}
          {report.workflowIds.slice(0, 4).map((workflowId, index) => (
            <span key={workflowId}>
              {index > 0 ? ', ' : ''}
              <Link to={routes.workflow(workflowId)} className={styles.mono}>
                {workflowId}
              </Link>
            </span>
          ))}
          {report.workflowIds.length > 4 ? ` and ${report.workflowIds.length - 4} more` : ''}
        </p>
      ) : null}
    </div>
  );
}
