/**
 * Schedules: every schedule of the store — its name and workflow, the cron in English and as written, its
 * time zone, when it fires next (relative, and the time in its zone), what became of its last slots
 * (started, with a link to the workflow; skipped or missed, and why), and whether it is paused — with pause
 * or resume, trigger now and delete (after a confirmation). A row opens to the details: the next five fire
 * times, the last ten slots with the engine that decided each and the workflow's status now, and the
 * settings (overlap, catch-up, input, start options).
 *
 * Live: schedule writes (every fire, on whichever engine) and, while this screen is shown, workflow changes
 * refresh it (live-updates.ts). Errors are the engine's own, with what to do (error-advice.ts).
 */
import { useEffect, useMemo, useState } from 'react';
import type { ScheduleInfo, SlotOutcome, WorkflowDescription } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { EmptyState } from '../../components/EmptyState';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice, InlineError } from '../../components/ErrorNotice';
import { Icon } from '../../components/icons';
import { JsonView } from '../../components/JsonView';
import { RelativeTime } from '../../components/RelativeTime';
import { ScreenHeader } from '../../components/ScreenHeader';
import { StatusBadge } from '../../components/StatusBadge';
import { formatAbsolute, formatRelative } from '../../components/time-format';
import { useEngineDirectory } from '../../data/engine-queries';
import { useScheduleAction, useSchedules } from '../../data/schedule-queries';
import { useStudioMode } from '../../data/studio-mode';
import { useWorkflowDescriptions } from '../../data/workflow-queries';
import { isTerminal } from '../../../public/browser';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import { useNow } from '../../state/now';
import { useViewStore } from '../../state/view-store';
import {
  catchUpText,
  describeCron,
  formatInZone,
  overlapText,
  scheduleIdPrefix,
  schedulesSummary,
  slotView,
  upcoming,
} from '../../components/schedule-view';
import styles from './SchedulesScreen.module.css';

export function SchedulesScreen({ selected }: { selected: string | null }) {
  const schedules = useSchedules();
  const now = useNow();
  const openStartDialog = useViewStore((state) => state.openStartDialog);
  const items = schedules.data;
  // A link to one schedule (from a workflow it started) opens it and brings it into view.
  useEffect(() => {
    if (!selected || !items?.some((schedule) => schedule.name === selected)) return;
    document.getElementById(`schedule-${encodeURIComponent(selected)}`)?.scrollIntoView({ block: 'nearest' });
  }, [selected, items]);
  return (
    <section className={styles.screen} aria-labelledby="schedules-title">
      <ScreenHeader
        titleId="schedules-title"
        title="Schedules"
        summary={items ? schedulesSummary(items, now) : 'Workflows started on a cron, exactly once per slot.'}
        summaryTestId="schedules.summary"
      >
        <Button
          variant="primary"
          icon="plus"
          onClick={() => openStartDialog(null, 'schedule')}
          testId="schedules.new-button"
        >
          New schedule
        </Button>
      </ScreenHeader>
      {schedules.isError && !items ? (
        <ErrorNotice
          error={schedules.error}
          title="Could not list the schedules"
          onRetry={() => void schedules.refetch()}
          testId="schedules.error"
        />
      ) : !items ? (
        <div className={styles.card}>
          <EmptyState compact title="Loading schedules…" testId="schedules.loading" />
        </div>
      ) : items.length === 0 ? (
        <div className={styles.card}>
          <Empty onCreate={() => openStartDialog(null, 'schedule')} />
        </div>
      ) : (
        <div className={styles.card}>
          <div role="table" aria-label="Schedules" className={styles.table} data-testid="schedules.table">
            <div role="row" className={`${styles.row} ${styles.head}`}>
              <div role="columnheader">Schedule</div>
              <div role="columnheader">When</div>
              <div role="columnheader">Next</div>
              <div role="columnheader">Recent slots</div>
              <div role="columnheader" className={styles.actionsHead}>
                <span className="visually-hidden">Actions</span>
              </div>
            </div>
            {items.map((schedule) => (
              <ScheduleRow
                key={schedule.name}
                schedule={schedule}
                open={schedule.name === selected}
                now={now}
              />
            ))}
          </div>
          {schedules.isError ? (
            <div className={styles.stale} role="status">
              Showing the last list: refreshing failed ({schedules.error.message}).
            </div>
          ) : null}
        </div>
      )}
    </section>
  );
}

function Empty({ onCreate }: { onCreate: () => void }) {
  const { server } = useStudioMode();
  return (
    <EmptyState
      icon="schedules"
      title="No schedules yet"
      testId="schedules.empty"
      action={
        <Button variant="primary" icon="plus" onClick={onCreate}>
          New schedule
        </Button>
      }
    >
      <p className={styles.emptyText}>
        A schedule starts a workflow on a cron — every weekday at 09:00, every ten seconds — once per slot, on
        whichever {server ? 'worker process' : 'engine (tab)'} gets there first, even when several run. Each
        run is an ordinary workflow named <code>&lt;schedule&gt;@&lt;slot time&gt;</code>.
      </p>
      <p className={styles.emptyText}>
        Create one with <strong>New schedule</strong> (the start dialog’s Schedule tab), or from the console:
      </p>
      <pre className={styles.snippet}>
        {`await shuttle.schedule('nightly', {
  cron: '0 2 * * *',
  workflow: 'countdown',
  input: { from: 3 },
})`}
      </pre>
    </EmptyState>
  );
}

function ScheduleRow({ schedule, open, now }: { schedule: ScheduleInfo; open: boolean; now: number }) {
  const { name, spec } = schedule;
  const english = useMemo(() => describeCron(spec.cron), [spec.cron]);
  const next = upcoming(schedule.nextFireAt, now);
  const action = useScheduleAction(name);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const toggle = () => navigate(routes.schedules(open ? null : name), { replace: true });
  // The record's list of unfinished runs is as the schedule last saw it: a run that ended since is left out.
  const tracked = schedule.running;
  const described = useWorkflowDescriptions(tracked);
  const running = tracked.filter((id) => {
    const workflow = described.get(id);
    return workflow === undefined || !isTerminal(workflow.status);
  });
  const last = schedule.lastSlots[0];
  const lastView = last ? slotView(last, spec.timezone, now) : null;
  return (
    <div
      role="rowgroup"
      className={`${styles.item} ${open ? styles.open : ''} ${schedule.paused ? styles.pausedItem : ''}`}
      id={`schedule-${encodeURIComponent(name)}`}
      data-testid="schedules.row"
      data-name={name}
      data-paused={schedule.paused || undefined}
    >
      <div role="row" className={styles.row}>
        <div role="cell" className={styles.cell}>
          <button
            type="button"
            className={styles.expand}
            aria-expanded={open}
            aria-controls={`schedule-details-${encodeURIComponent(name)}`}
            onClick={toggle}
            data-testid="schedules.row-toggle"
            title={open ? 'Hide the details' : 'Show the details'}
          >
            <Icon name={open ? 'chevron-down' : 'chevron-right'} size={14} />
            <span className={styles.name} data-testid="schedules.row-name">
              {name}
            </span>
          </button>
          <div className={styles.sub}>
            <span className={styles.workflow} data-testid="schedules.row-workflow">
              {spec.workflow}
            </span>
            {schedule.paused ? (
              <span className={styles.pausedBadge} data-testid="schedules.row-paused">
                paused
              </span>
            ) : null}
            {running.length > 0 ? (
              <span className={styles.runningBadge} title={running.join('\n')}>
                {running.length} running
              </span>
            ) : null}
            {schedule.buffered !== null ? (
              <span
                className={styles.bufferedBadge}
                title={`A slot (${formatInZone(schedule.buffered, spec.timezone, now)}) waits for the previous run`}
              >
                1 waiting
              </span>
            ) : null}
          </div>
        </div>
        <div role="cell" className={styles.cell} data-testid="schedules.row-when">
          <div className={styles.english} title={english ?? undefined}>
            {english ?? spec.cron}
          </div>
          <div className={styles.sub}>
            <code className={styles.cron} data-testid="schedules.row-cron">
              {spec.cron}
            </code>
            <span className={styles.zone} data-testid="schedules.row-timezone">
              {spec.timezone}
            </span>
          </div>
        </div>
        <div role="cell" className={styles.cell} data-testid="schedules.row-next">
          {schedule.paused ? (
            <span className={styles.muted}>
              paused{schedule.pausedAt ? ` ${formatRelative(schedule.pausedAt, now)}` : ''}
            </span>
          ) : next[0] !== undefined ? (
            <>
              <div className={styles.nextRelative}>
                <RelativeTime at={next[0]} />
              </div>
              <div className={styles.sub} title={`${formatAbsolute(next[0])} here`}>
                {formatInZone(next[0], spec.timezone, now)}
              </div>
            </>
          ) : schedule.nextFireAt.length > 0 ? (
            <span className={styles.muted} title="Due now: the next engine pass starts it">
              due now
            </span>
          ) : (
            <span className={styles.muted}>no further slot</span>
          )}
        </div>
        <div role="cell" className={styles.cell}>
          <SlotStrip schedule={schedule} now={now} />
          <div className={styles.sub} data-testid="schedules.row-last">
            {lastView && last ? (
              <span title={lastView.reason}>
                <span className={styles[`tone-${lastView.tone}`]}>{lastView.label}</span>{' '}
                {formatRelative(last.at, now)}
              </span>
            ) : (
              <span className={styles.muted}>nothing fired yet</span>
            )}
          </div>
        </div>
        <div role="cell" className={`${styles.cell} ${styles.actions}`}>
          {schedule.paused ? (
            <Button
              size="sm"
              icon="play"
              onClick={() => action.mutate('resume')}
              busy={action.isPending && action.variables === 'resume'}
              testId="schedules.resume"
            >
              Resume
            </Button>
          ) : (
            <Button
              size="sm"
              onClick={() => action.mutate('pause')}
              busy={action.isPending && action.variables === 'pause'}
              testId="schedules.pause"
            >
              Pause
            </Button>
          )}
          <Button
            size="sm"
            icon="bolt"
            onClick={() => action.mutate('trigger')}
            busy={action.isPending && action.variables === 'trigger'}
            testId="schedules.trigger"
            title="Start one run now, outside the slots (paused or not)"
          >
            Trigger
          </Button>
          <Button
            size="sm"
            variant="ghost"
            icon="trash"
            label={`Delete schedule ${name}`}
            onClick={() => setConfirmDelete(true)}
            testId="schedules.delete"
          />
        </div>
      </div>
      <ActionOutcome action={action} />
      {open ? (
        <div role="row">
          <div role="cell" aria-colspan={5}>
            <ScheduleDetails schedule={schedule} now={now} />
          </div>
        </div>
      ) : null}
      {confirmDelete ? (
        <DeleteDialog
          schedule={schedule}
          busy={action.isPending && action.variables === 'delete'}
          error={action.isError && action.variables === 'delete' ? action.error : null}
          onConfirm={() =>
            action.mutate('delete', {
              onSuccess: () => {
                setConfirmDelete(false);
                if (open) navigate(routes.schedules(), { replace: true });
              },
            })
          }
          onClose={() => {
            setConfirmDelete(false);
            action.reset();
          }}
        />
      ) : null}
    </div>
  );
}

/** What the last action on a row did: the workflow a trigger started, or the engine's refusal. */
function ActionOutcome({ action }: { action: ReturnType<typeof useScheduleAction> }) {
  if (action.isError && action.variables !== 'delete')
    return (
      <div role="row">
        <div role="cell" aria-colspan={5} className={styles.outcome}>
          <InlineError error={action.error} testId="schedules.action-error" />
        </div>
      </div>
    );
  if (action.isSuccess && action.variables === 'trigger' && action.data)
    return (
      <div role="row">
        <div role="cell" aria-colspan={5} className={styles.outcome}>
          <span className={styles.triggered} role="status" data-testid="schedules.triggered">
            <Icon name="check" size={14} /> Started{' '}
            <Link to={routes.workflow(action.data.workflowId)} className={styles.id}>
              {action.data.workflowId}
            </Link>
            <button
              type="button"
              className={styles.dismiss}
              onClick={() => action.reset()}
              aria-label="Dismiss"
            >
              <Icon name="close" size={12} />
            </button>
          </span>
        </div>
      </div>
    );
  return null;
}

/** The last slots as a strip of marks, oldest on the left; a started slot's mark links to its workflow. */
function SlotStrip({ schedule, now }: { schedule: ScheduleInfo; now: number }) {
  const slots = [...schedule.lastSlots].reverse();
  if (slots.length === 0) return null;
  return (
    <div className={styles.strip} data-testid="schedules.row-slots">
      {slots.map((slot, index) => {
        const view = slotView(slot, schedule.spec.timezone, now);
        const label = `${formatInZone(slot.slot, schedule.spec.timezone, now)} — ${view.reason}`;
        const className = `${styles.mark} ${styles[`mark-${view.tone}`]}`;
        return slot.outcome === 'started' ? (
          <Link
            key={`${slot.slot}-${index}`}
            to={routes.workflow(slot.workflowId)}
            className={className}
            title={label}
            testId="schedules.slot"
            data={{ outcome: view.outcome, workflowId: slot.workflowId }}
          >
            <span className="visually-hidden">{label}</span>
          </Link>
        ) : (
          <span
            key={`${slot.slot}-${index}`}
            className={className}
            title={label}
            role="img"
            aria-label={label}
            data-testid="schedules.slot"
            data-outcome={view.outcome}
          />
        );
      })}
    </div>
  );
}

function ScheduleDetails({ schedule, now }: { schedule: ScheduleInfo; now: number }) {
  const { spec } = schedule;
  const engines = useEngineDirectory();
  const ids = useMemo(
    () =>
      schedule.lastSlots.flatMap((slot) =>
        slot.outcome === 'started' ? [slot.workflowId] : slot.outcome === 'buffered' ? [slot.waitingFor] : [],
      ),
    [schedule.lastSlots],
  );
  const workflows = useWorkflowDescriptions(ids);
  const next = upcoming(schedule.nextFireAt, now);
  return (
    <div
      className={styles.details}
      id={`schedule-details-${encodeURIComponent(schedule.name)}`}
      data-testid="schedules.details"
    >
      <section className={styles.panel} aria-label="Upcoming fire times">
        <h3 className={styles.panelTitle}>Upcoming</h3>
        {schedule.paused ? (
          <p className={styles.muted}>
            Paused{schedule.pausedAt ? ` since ${formatInZone(schedule.pausedAt, spec.timezone, now)}` : ''}.
            On resume, slots missed meanwhile follow catch-up{' '}
            <strong>{catchUpText[spec.catchUp].label}</strong>.
          </p>
        ) : next.length === 0 ? (
          <p className={styles.muted}>No further slot.</p>
        ) : (
          <ol className={styles.upcoming} data-testid="schedules.upcoming">
            {next.map((at) => (
              <li key={at}>
                <span className={styles.mono} title={`${formatAbsolute(at)} here`}>
                  {formatInZone(at, spec.timezone, now)}
                </span>
                <span className={styles.muted}>{formatRelative(at, now)}</span>
              </li>
            ))}
          </ol>
        )}
      </section>
      <section className={`${styles.panel} ${styles.wide}`} aria-label="Recent slots">
        <h3 className={styles.panelTitle}>
          Recent slots{' '}
          <Link
            to={routes.workflows({ idPrefix: scheduleIdPrefix(schedule.name) })}
            className={styles.panelLink}
            testId="schedules.all-runs"
          >
            every workflow it started →
          </Link>
        </h3>
        {schedule.lastSlots.length === 0 ? (
          <p className={styles.muted}>Nothing fired yet.</p>
        ) : (
          <ul className={styles.slots}>
            {schedule.lastSlots.map((slot, index) => (
              <SlotLine
                key={`${slot.slot}-${index}`}
                slot={slot}
                timezone={spec.timezone}
                now={now}
                workflow={
                  slot.outcome === 'started'
                    ? workflows.get(slot.workflowId)
                    : slot.outcome === 'buffered'
                      ? workflows.get(slot.waitingFor)
                      : undefined
                }
                engines={engines}
              />
            ))}
          </ul>
        )}
      </section>
      <section className={styles.panel} aria-label="Settings">
        <h3 className={styles.panelTitle}>Settings</h3>
        <dl className={styles.settings}>
          <dt>Overlap</dt>
          <dd>
            <strong>{overlapText[spec.overlap].label}</strong>
            <span className={styles.explain}>{overlapText[spec.overlap].explain}</span>
          </dd>
          <dt>Catch-up</dt>
          <dd>
            <strong>{catchUpText[spec.catchUp].label}</strong>
            <span className={styles.explain}>{catchUpText[spec.catchUp].explain}</span>
          </dd>
          <dt>Time zone</dt>
          <dd>{spec.timezone}</dd>
          {spec.startOptions?.executionTimeoutMs !== undefined ? (
            <>
              <dt>Timeout</dt>
              <dd>{spec.startOptions.executionTimeoutMs / 1000} s per run</dd>
            </>
          ) : null}
          {spec.startOptions?.startDelayMs !== undefined ? (
            <>
              <dt>Start delay</dt>
              <dd>{spec.startOptions.startDelayMs / 1000} s after each slot</dd>
            </>
          ) : null}
          <dt>Created</dt>
          <dd>
            <RelativeTime at={schedule.createdAt} />
          </dd>
          <dt>Input</dt>
          <dd className={styles.input}>
            {spec.input === undefined ? (
              <span className={styles.muted}>none</span>
            ) : (
              <JsonView value={spec.input} expandDepth={1} />
            )}
          </dd>
        </dl>
      </section>
    </div>
  );
}

function SlotLine({
  slot,
  timezone,
  now,
  workflow,
  engines,
}: {
  slot: SlotOutcome;
  timezone: string;
  now: number;
  workflow: WorkflowDescription | undefined;
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  const view = slotView(slot, timezone, now);
  return (
    <li
      className={styles.slotLine}
      data-testid="schedules.slot-line"
      data-outcome={view.outcome}
      data-workflow-id={view.workflowId ?? undefined}
    >
      {slot.outcome === 'started' ? (
        <Link
          to={routes.workflow(slot.workflowId)}
          className={`${styles.mono} ${styles.slotLink}`}
          title={`${slot.workflowId} — slot ${formatAbsolute(slot.slot)} here`}
          testId="schedules.slot-link"
        >
          {slot.trigger ? 'trigger' : formatInZone(slot.slot, timezone, now)}
        </Link>
      ) : (
        <span className={styles.mono} title={`Slot ${formatAbsolute(slot.slot)} here`}>
          {formatInZone(slot.slot, timezone, now)}
        </span>
      )}
      {slot.outcome === 'started' && workflow ? (
        <span className={styles.slotStatus} title={view.reason}>
          <StatusBadge status={workflow.status} />
        </span>
      ) : (
        <span className={`${styles.outcomeChip} ${styles[`chip-${view.tone}`]}`} title={view.reason}>
          {view.label}
        </span>
      )}
      <span className={styles.slotWhat}>
        {view.short ? (
          <span className={styles.reason} title={view.reason}>
            {view.short}
          </span>
        ) : null}
      </span>
      <span className={styles.slotBy}>
        {slot.outcome === 'started' ? (
          <EngineTag engineId={slot.engineId} engine={engines.get(slot.engineId)} />
        ) : null}
      </span>
    </li>
  );
}

function DeleteDialog({
  schedule,
  busy,
  error,
  onConfirm,
  onClose,
}: {
  schedule: ScheduleInfo;
  busy: boolean;
  error: Error | null;
  onConfirm: () => void;
  onClose: () => void;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title={`Delete schedule ${schedule.name}?`}
      description="It stops firing on every engine at once. The workflows it started are left alone."
      testId="schedules.delete-dialog"
      footer={
        <>
          <Button variant="secondary" onClick={onClose}>
            Keep it
          </Button>
          <Button
            variant="danger"
            icon="trash"
            busy={busy}
            onClick={onConfirm}
            testId="schedules.delete-confirm"
          >
            Delete schedule
          </Button>
        </>
      }
    >
      <p className={styles.dialogText}>
        <code>{schedule.spec.cron}</code> ({describeCron(schedule.spec.cron) ?? 'cron'},{' '}
        {schedule.spec.timezone}) starting <strong>{schedule.spec.workflow}</strong>. A schedule of the same
        name can be created again later; its slots start afresh.
      </p>
      {error ? <InlineError error={error} testId="schedules.delete-error" /> : null}
    </Dialog>
  );
}
