/**
 * The run switcher of the detail screen: "Run 2 of 3 ▾" beside the status, when the workflow id has more
 * than one stored run. It opens a list of every run (latest first: status, when it started, how long it
 * took) whose entries are links — `#/workflows/<id>?run=<n>` for an earlier run, the plain workflow link for
 * the latest — so a run can be opened in a new tab, copied, or shared. Escape or a click outside closes it.
 */
import { useEffect, useRef, useState } from 'react';
import type { RunSummary } from '../../../public';
import { Icon } from '../../components/icons';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatAbsolute, formatDuration } from '../../components/time-format';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { runSwitcherLabel } from './run-history';
import styles from './RunSwitcher.module.css';

export function RunSwitcher({
  workflowId,
  run,
  runs,
}: {
  workflowId: string;
  /** The run shown. */
  run: number;
  /** Every stored run, latest first. */
  runs: readonly RunSummary[];
}) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        ref.current?.querySelector('button')?.focus();
      }
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  const latest = runs[0]?.run;
  return (
    <div className={styles.switcher} ref={ref}>
      <button
        type="button"
        className={`${styles.trigger} ${run !== latest ? styles.earlier : ''}`}
        aria-expanded={open}
        aria-controls="detail-runs"
        onClick={() => setOpen(!open)}
        data-testid="detail.run-switcher"
        data-run={run}
        title="This id ran more than once: every run is kept. Switch to another run."
      >
        {runSwitcherLabel(run, runs)}
        <Icon name="chevron-down" size={12} />
      </button>
      {open ? (
        <ul id="detail-runs" className={styles.menu} aria-label="Runs of this workflow id">
          {runs.map((item) => (
            // A click on a run navigates (the link) and closes the list (here, as it bubbles).
            <li key={item.run} onClick={() => setOpen(false)}>
              <Link
                to={item.latest ? routes.workflow(workflowId) : routes.workflow(workflowId, item.run)}
                className={styles.option}
                aria-current={item.run === run ? 'page' : undefined}
                testId="detail.run-option"
                data={{ run: String(item.run) }}
                title={`Created ${formatAbsolute(item.createdAt)}${item.endedAt ? `, ended ${formatAbsolute(item.endedAt)}` : ''}`}
              >
                <span className={styles.optionRun}>
                  Run {item.run}
                  {item.latest ? <span className={styles.latest}>latest</span> : null}
                </span>
                <StatusBadge status={item.status} />
                <span className={styles.optionMeta}>
                  <RelativeTime at={item.startedAt ?? item.createdAt} />
                  {item.endedAt ? (
                    <> · took {formatDuration(item.endedAt - (item.startedAt ?? item.createdAt))}</>
                  ) : null}
                  {item.workflowType !== runs[0]?.workflowType ? <> · {item.workflowType}</> : null}
                </span>
                {item.run === run ? <Icon name="check" size={14} /> : <span aria-hidden />}
              </Link>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
