/**
 * One workflow, in full: a header (status, type, version, owner with its epoch and a bar draining to the
 * claim's expiry, the claim's liveness with "Take over" while it runs (ClaimControl.tsx), durations, copyable ids, parent, the schedule that started it), the actions (signal,
 * update, query, wait for the result, suspend or resume, cancel, terminate, export), custody lanes and the
 * operations timeline on one axis, the grouped event list beside the state / input / result inspectors and
 * the children. When this tab's engine was deposed from the workflow, a notice says so.
 *
 * Run history: an id started again after it finished has several runs. The run switcher in the header
 * shows them; the page shows the latest run, or `run` (from the URL) — an earlier run is read-only: its
 * description, timeline, custody and result as they were, and no actions but going to the latest run.
 */
import { useEffect, useMemo, useState } from 'react';
import type { FenceRejection, QueueMembership, TimelineEntry, WorkflowDescription } from '../../../public';
import { formatAttribute } from '../../../public/browser';
import type { EngineRecord, HelloResult } from '../../../public/browser';
import { CopyableId } from '../../components/CopyableId';
import { DrainingBar } from '../../components/DrainingBar';
import { EmptyState } from '../../components/EmptyState';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Notice } from '../../components/Notice';
import { PanelErrorBoundary } from '../../components/PanelErrorBoundary';
import { RelativeTime } from '../../components/RelativeTime';
import { StatusBadge } from '../../components/StatusBadge';
import { formatAbsolute, formatDuration } from '../../components/time-format';
import { claimTimings, useEngineDirectory, useThisEngine } from '../../data/engine-queries';
import { useLostWorkflow } from '../../data/engine-activity';
import { useQueue, useQueuePosition } from '../../data/queue-queries';
import { admittedText, positionText } from '../../components/queue-view';
import { describeLoss, whereNow } from './lost-notice';
import {
  useFenceRejections,
  useWorkflowDescription,
  useWorkflowRuns,
  useWorkflowTimeline,
} from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useNow } from '../../state/now';
import { useViewStore } from '../../state/view-store';
import { deriveCustody } from '../../components/custody';
import { CustodyTimeline } from './CustodyTimeline';
import { EventList } from './EventList';
import { Inspectors } from './Inspectors';
import { deriveOperations } from './operations';
import { WorkflowActions } from './WorkflowActions';
import { waitingOnText } from '../../components/waiting-on';
import { ClaimControl } from './ClaimControl';
import { PurgeDialog } from './PurgeDialog';
import { ExternalActivities } from './ExternalActivities';
import { waitingExternalActivities } from './external-activities';
import { RunSwitcher } from './RunSwitcher';
import { earlierRunNote, isEarlierRun, latestRunOf, rejectionsOfRun } from './run-history';
import type { RunSummary } from '../../../public';
import { Button } from '../../components/Button';
import { navigate } from '../../routing/router';
import styles from './WorkflowDetailScreen.module.css';
import { isTerminal } from '../../../public/browser';
import { Icon } from '../../components/icons';

export function WorkflowDetailScreen({ workflowId, run }: { workflowId: string; run?: number }) {
  const description = useWorkflowDescription(workflowId, run);
  // While another run loads, the run shown so far stays (no blank page between runs).
  const workflow = description.data;
  const timeline = useWorkflowTimeline(workflowId, workflow?.timelineLength, run);
  const runs = useWorkflowRuns(workflowId);
  const allRejections = useFenceRejections(workflowId);
  const self = useThisEngine().data;
  const selectGroup = useViewStore((state) => state.selectGroup);
  useEffect(() => selectGroup(null), [workflowId, run, selectGroup]);
  const earlier = workflow ? isEarlierRun(workflow, runs.data) : false;
  const rejections = useMemo(
    () => (workflow ? rejectionsOfRun(allRejections.data ?? [], runs.data, workflow.run) : []),
    [allRejections.data, runs.data, workflow],
  );

  // A workflow purged while shown (here or in another tab) is gone: say so rather than keep its last state.
  if (description.isError && (!workflow || description.error.name === 'WorkflowNotFoundError'))
    return (
      <section className={styles.screen}>
        <Breadcrumb workflowId={workflowId} />
        {description.error.name === 'WorkflowNotFoundError' && run !== undefined ? (
          <div className={styles.card}>
            <EmptyState
              icon="search"
              title={`No run ${run} of this workflow`}
              testId="detail.not-found"
              action={
                <Button onClick={() => navigate(routes.workflow(workflowId))} testId="detail.latest-run">
                  Open the latest run
                </Button>
              }
            >
              The workflow <code>{workflowId}</code> has no stored run {run}. It may not have run that many
              times, or that run was purged.
            </EmptyState>
          </div>
        ) : description.error.name === 'WorkflowNotFoundError' ? (
          <div className={styles.card}>
            <EmptyState icon="search" title="No such workflow" testId="detail.not-found">
              No workflow with the id <code>{workflowId}</code> exists in this database. It may not have been
              started yet, or it was purged.
            </EmptyState>
          </div>
        ) : (
          <ErrorNotice
            error={description.error}
            title="Could not load this workflow"
            onRetry={() => void description.refetch()}
            testId="detail.error"
          />
        )}
      </section>
    );
  if (!workflow)
    return (
      <section className={styles.screen}>
        <Breadcrumb workflowId={workflowId} />
        <div className={styles.card}>
          <EmptyState compact title="Loading the workflow…" testId="detail.loading" />
        </div>
      </section>
    );
  return (
    <section
      className={styles.screen}
      aria-labelledby="detail-title"
      data-testid="detail.screen"
      data-workflow-id={workflowId}
      data-run={workflow.run}
      data-earlier-run={earlier || undefined}
    >
      <Breadcrumb workflowId={workflowId} />
      <PanelErrorBoundary name="header">
        <Header workflow={workflow} self={self} runs={runs.data} earlier={earlier} />
      </PanelErrorBoundary>
      {earlier ? null : (
        <PanelErrorBoundary name="lost notice">
          <LostNotice workflow={workflow} self={self} rejections={rejections} />
        </PanelErrorBoundary>
      )}
      {earlier ? null : (
        <PanelErrorBoundary name="external activities">
          <ExternalActivities workflow={workflow} />
        </PanelErrorBoundary>
      )}
      <PanelErrorBoundary name="custody and timeline">
        <div className={styles.card}>
          <div className={styles.cardHead}>
            <h2 className={styles.cardTitle}>Custody and timeline</h2>
            <span className={styles.cardHint}>Which engine owned it when, and what it did</span>
          </div>
          {timeline.isError && !timeline.data ? (
            <ErrorNotice
              error={timeline.error}
              title="Could not load the timeline"
              onRetry={() => void timeline.refetch()}
            />
          ) : timeline.data ? (
            <Chart workflow={workflow} timeline={timeline.data} rejections={rejections} />
          ) : (
            <EmptyState compact title="Loading the timeline…" />
          )}
        </div>
      </PanelErrorBoundary>
      <div className={styles.lower}>
        <PanelErrorBoundary name="events">
          <div className={styles.card}>
            <div className={styles.cardHead}>
              <h2 className={styles.cardTitle}>Events</h2>
            </div>
            <Events workflow={workflow} timeline={timeline.data ?? []} />
          </div>
        </PanelErrorBoundary>
        <PanelErrorBoundary name="inspectors">
          <Inspectors key={workflow.run} workflow={workflow} timeline={timeline.data ?? []} />
        </PanelErrorBoundary>
      </div>
    </section>
  );
}

function Breadcrumb({ workflowId }: { workflowId: string }) {
  return (
    <nav className={styles.breadcrumb} aria-label="Breadcrumb">
      <Link to={routes.workflows()} testId="detail.back">
        Workflows
      </Link>
      <span aria-hidden>/</span>
      <span className={styles.crumbId} title={workflowId}>
        {workflowId}
      </span>
    </nav>
  );
}

function Header({
  workflow,
  self,
  runs,
  earlier,
}: {
  workflow: WorkflowDescription;
  self: HelloResult | undefined;
  runs: readonly RunSummary[] | undefined;
  /** An earlier run: read-only. */
  earlier: boolean;
}) {
  const engines = useEngineDirectory();
  const now = useNow();
  const ended = isTerminal(workflow.status);
  const startedAt = workflow.startedAt ?? workflow.createdAt;
  const duration = (workflow.endedAt ?? now) - startedAt;
  // The purge confirmation names what it was opened on, and stays open if the page moves to another run
  // meanwhile (the engine then refuses, in its words, to purge what is no longer finished).
  const [purge, setPurge] = useState<{
    workflow: WorkflowDescription;
    earlierRun: boolean;
    runs: number;
  } | null>(null);
  return (
    <header className={`${styles.card} ${styles.header}`}>
      <div className={styles.titleRow}>
        <div className={styles.titleBlock}>
          <h1 id="detail-title" className={styles.title}>
            <CopyableId id={workflow.workflowId} label="workflow id" testId="detail.workflow-id" />
          </h1>
          <div className={styles.badges}>
            <StatusBadge status={workflow.status} testId="detail.status" />
            <span className={styles.type} data-testid="detail.type">
              {workflow.workflowType} <span className={styles.version}>v{workflow.version}</span>
            </span>
            {runs && runs.length > 1 ? (
              <RunSwitcher workflowId={workflow.workflowId} run={workflow.run} runs={runs} />
            ) : workflow.run > 1 ? (
              <span className={styles.pill} data-testid="detail.run">
                run {workflow.run}
              </span>
            ) : null}
            {workflow.cancelRequested && !ended ? (
              <span className={`${styles.pill} ${styles.warn}`}>cancel requested</span>
            ) : null}
            {workflow.corrupt ? (
              <span className={`${styles.pill} ${styles.bad}`} title={workflow.corrupt.message}>
                corrupt record {workflow.corrupt.key}
              </span>
            ) : null}
          </div>
        </div>
        {earlier ? (
          <EarlierRun
            workflow={workflow}
            latest={latestRunOf(runs)}
            onPurge={() => setPurge({ workflow, earlierRun: true, runs: 1 })}
          />
        ) : (
          <WorkflowActions
            workflow={workflow}
            self={self}
            onPurge={() => setPurge({ workflow, earlierRun: false, runs: runs?.length ?? 1 })}
          />
        )}
      </div>
      <dl className={styles.facts}>
        <div className={styles.fact}>
          <dt>Owner</dt>
          <dd data-testid="detail.owner" className={styles.ownerCell}>
            <Owner workflow={workflow} engines={engines} />
            {!earlier && workflow.status === 'running' ? (
              <ClaimControl workflow={workflow} self={self} />
            ) : null}
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>Epoch</dt>
          <dd data-testid="detail.epoch" className={styles.number}>
            {workflow.epoch ?? '—'}
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>
            {ended
              ? 'Took'
              : workflow.status === 'pending'
                ? workflow.queue && !workflow.startAt
                  ? 'Queued for'
                  : 'Starts'
                : 'Running for'}
          </dt>
          <dd
            className={styles.number}
            title={`Started ${formatAbsolute(startedAt)}${workflow.endedAt ? `, ended ${formatAbsolute(workflow.endedAt)}` : ''}`}
            data-testid="detail.duration"
          >
            {workflow.status === 'pending' && workflow.startAt ? (
              <RelativeTime at={workflow.startAt} />
            ) : (
              formatDuration(Math.max(0, duration))
            )}
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>Started</dt>
          <dd>
            <RelativeTime at={startedAt} />
          </dd>
        </div>
        <div className={styles.fact}>
          <dt>Updated</dt>
          <dd>
            <RelativeTime at={workflow.updatedAt} />
          </dd>
        </div>
        <div className={`${styles.fact} ${styles.wide}`}>
          <dt>{ended ? 'Outcome' : 'Waiting on'}</dt>
          <dd className={styles.waiting} data-testid="detail.waiting">
            {ended ? (
              workflow.error ? (
                <span className={styles.errorText}>
                  {workflow.error.name}: {workflow.error.message}
                </span>
              ) : (
                (workflow.reason ?? workflow.status)
              )
            ) : workflow.pending ? (
              <>
                {waitingOnText(workflow.pending.summary)}
                {waitingExternalActivities(workflow).length > 0 ? (
                  <span className={styles.muted}> · external</span>
                ) : null}{' '}
                <span className={styles.muted}>· since </span>
                <RelativeTime at={workflow.pending.since} />
              </>
            ) : (
              <span className={styles.muted}>
                {workflow.status === 'suspended'
                  ? 'resume'
                  : workflow.status === 'pending' && workflow.queue && workflow.queue.admittedAt === undefined
                    ? `its turn in queue ${workflow.queue.name}`
                    : '—'}
              </span>
            )}
          </dd>
        </div>
        {workflow.scheduledBy ? (
          <div className={styles.fact}>
            <dt>Schedule</dt>
            <dd className={styles.scheduled}>
              <Link
                to={routes.schedules(workflow.scheduledBy.schedule)}
                className={styles.mono}
                testId="detail.schedule"
                title={`Started by schedule ${workflow.scheduledBy.schedule}`}
              >
                {workflow.scheduledBy.schedule}
              </Link>
              <span className={styles.muted} title={formatAbsolute(workflow.scheduledBy.slot)}>
                {workflow.scheduledBy.trigger
                  ? ' · triggered by hand'
                  : ` · slot ${slotTime(workflow.scheduledBy.slot)}`}
              </span>
            </dd>
          </div>
        ) : null}
        {workflow.queue ? <QueueFact workflow={workflow} queue={workflow.queue} /> : null}
        {workflow.forkedFrom ? (
          <div className={styles.fact}>
            <dt>Forked from</dt>
            <dd data-testid="detail.forked-from">
              <span>
                <Link
                  to={routes.workflow(workflow.forkedFrom.id, workflow.forkedFrom.run)}
                  className={styles.mono}
                  testId="detail.forked-from-link"
                  title={`Replays run ${workflow.forkedFrom.run} of ${workflow.forkedFrom.id} up to operation #${workflow.forkedFrom.position}, then ran on from there`}
                >
                  {workflow.forkedFrom.id === workflow.workflowId
                    ? `run ${workflow.forkedFrom.run}`
                    : `${workflow.forkedFrom.id} · run ${workflow.forkedFrom.run}`}
                </Link>
                <span className={styles.muted}>
                  {' · from #'}
                  {workflow.forkedFrom.position}
                </span>
              </span>
            </dd>
          </div>
        ) : null}
        {workflow.continuedFrom !== undefined || workflow.status === 'continued-as-new' ? (
          <div className={`${styles.fact} ${styles.twoColumns}`}>
            <dt>Continued as new</dt>
            <dd data-testid="detail.chain">
              <span>
                {workflow.continuedFrom !== undefined ? (
                  <span data-testid="detail.continued-from">
                    {'from '}
                    <Link
                      to={routes.workflow(workflow.workflowId, workflow.continuedFrom)}
                      className={styles.mono}
                      testId="detail.continued-from-link"
                      title={`Run ${workflow.continuedFrom} called ctx.continueAsNew: this run started in its place, with the input it gave`}
                    >
                      {`run ${workflow.continuedFrom}`}
                    </Link>
                  </span>
                ) : null}
                {workflow.continuedFrom !== undefined && workflow.status === 'continued-as-new' ? (
                  <span className={styles.muted}>{' · '}</span>
                ) : null}
                {workflow.status === 'continued-as-new' ? (
                  <span data-testid="detail.continued-as">
                    {'into '}
                    <Link
                      to={routes.workflow(workflow.workflowId, workflow.run + 1)}
                      className={styles.mono}
                      testId="detail.continued-as-link"
                      title={`This run called ctx.continueAsNew: run ${workflow.run + 1} started in its place`}
                    >
                      {`run ${workflow.run + 1}`}
                    </Link>
                  </span>
                ) : null}
              </span>
            </dd>
          </div>
        ) : null}
        {workflow.attributes ? (
          <div className={`${styles.fact} ${styles.wholeRow}`}>
            <dt>Attributes</dt>
            <dd data-testid="detail.attributes">
              <span>
                {Object.keys(workflow.attributes)
                  .sort()
                  .map((name, index) => (
                    <span
                      key={name}
                      data-testid="detail.attribute"
                      data-attribute={name}
                      className={styles.unbroken}
                    >
                      {index > 0 ? <span className={styles.muted}>{' · '}</span> : null}
                      <span className={styles.muted}>{name} </span>
                      <Link
                        to={routes.workflows({
                          where: [`${name}=${formatAttribute(workflow.attributes![name]!)}`],
                        })}
                        className={styles.mono}
                        title={`List the workflows whose ${name} is ${formatAttribute(workflow.attributes![name]!)}`}
                      >
                        {formatAttribute(workflow.attributes![name]!)}
                      </Link>
                    </span>
                  ))}
              </span>
            </dd>
          </div>
        ) : null}
        {workflow.parentId ? (
          <div className={styles.fact}>
            <dt>Parent</dt>
            <dd>
              <Link to={routes.workflow(workflow.parentId)} className={styles.mono} testId="detail.parent">
                {workflow.parentId}
              </Link>
            </dd>
          </div>
        ) : null}
      </dl>
      {purge ? <PurgeDialog {...purge} onClose={() => setPurge(null)} /> : null}
    </header>
  );
}

/** A slot's time, as short as it can be read: the time of day today, else the date too. */
function slotTime(at: number): string {
  const text = formatAbsolute(at);
  const today = formatAbsolute(Date.now()).slice(0, 10);
  const withoutMillis = text.replace(/\.000$/, '');
  return withoutMillis.startsWith(today) ? withoutMillis.slice(11) : withoutMillis;
}

/** What an earlier run's header offers instead of actions: how it ended, and the way to the latest run. */
function EarlierRun({
  workflow,
  latest,
  onPurge,
}: {
  workflow: WorkflowDescription;
  latest: RunSummary | null;
  onPurge: () => void;
}) {
  return (
    <div className={styles.earlier} data-testid="detail.earlier-run">
      <span className={styles.earlierNote} role="status">
        <Icon name="lock" size={14} /> {earlierRunNote(workflow)}
      </span>
      <span className={styles.earlierHint}>
        Read-only: signals, updates and cancels go to the latest run.
      </span>
      <span className={styles.earlierButtons}>
        <Button
          size="sm"
          variant="danger"
          icon="trash"
          onClick={onPurge}
          testId="detail.purge-run-button"
          title={`Delete run ${workflow.run} from the database; the other runs stay`}
        >
          Purge this run…
        </Button>
        {latest ? (
          <Button
            size="sm"
            onClick={() => navigate(routes.workflow(workflow.workflowId))}
            testId="detail.latest-run"
          >
            Open run {latest.run} ({latest.status})
          </Button>
        ) : null}
      </span>
    </div>
  );
}

function Owner({
  workflow,
  engines,
}: {
  workflow: WorkflowDescription;
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  if (!workflow.owner)
    return isTerminal(workflow.status) ? (
      <span className={styles.muted}>— finished</span>
    ) : workflow.status === 'suspended' ? (
      <span className={styles.muted}>nobody (suspended)</span>
    ) : (
      <span
        className={styles.unowned}
        title="No engine holds a claim right now; a live engine takes it over within a second or two."
      >
        nobody right now
      </span>
    );
  return (
    <span className={styles.ownerLine}>
      <EngineTag
        engineId={workflow.owner.engineId}
        engine={engines.get(workflow.owner.engineId)}
        testId="detail.owner-engine"
      />
      <DrainingBar
        expiresAt={workflow.owner.expiresAt}
        totalMs={claimTimings.ttlMs}
        testId="detail.claim-expiry"
      />
    </span>
  );
}

function LostNotice({
  workflow,
  self,
  rejections,
}: {
  workflow: WorkflowDescription;
  self: HelloResult | undefined;
  rejections: readonly FenceRejection[];
}) {
  const lost = useLostWorkflow(workflow.workflowId);
  const engines = useEngineDirectory();
  const refused = self ? rejections.filter((rejection) => rejection.engineId === self.engineId) : [];
  if (!self || (!lost && refused.length === 0)) return null;
  const name = (engineId: string) => engines.get(engineId)?.label ?? `engine ${engineId.slice(0, 8)}`;
  return (
    <Notice tone="danger" title={`${self.label} (this tab) lost this workflow`} testId="detail.lost-notice">
      {describeLoss(lost, refused)} {whereNow(workflow, name, self.engineId)} Nothing this tab did after
      losing it was recorded.
    </Notice>
  );
}

function Chart({
  workflow,
  timeline,
  rejections,
}: {
  workflow: WorkflowDescription;
  timeline: readonly TimelineEntry[];
  rejections: readonly FenceRejection[];
}) {
  const engines = useEngineDirectory();
  const now = useNow();
  const selectedGroupKey = useViewStore((state) => state.selectedGroupKey);
  const selectGroup = useViewStore((state) => state.selectGroup);
  const live = !isTerminal(workflow.status);
  // While the workflow runs, the axis ends at "now" (ticking every second); once it ended, it stands still.
  const clock = live ? now : workflow.updatedAt;
  const custody = useMemo(
    () =>
      deriveCustody({
        timeline,
        rejections,
        workflow,
        now: clock,
        claimTtlMs: claimTimings.ttlMs,
        graceMs: claimTimings.graceMs,
      }),
    [timeline, rejections, workflow, clock],
  );
  const operations = useMemo(
    () => deriveOperations(timeline, custody.end, custody.live),
    [timeline, custody.end, custody.live],
  );
  return (
    <CustodyTimeline
      custody={custody}
      operations={operations}
      engines={engines}
      selectedGroupKey={selectedGroupKey}
      onSelectGroup={selectGroup}
    />
  );
}

function Events({
  workflow,
  timeline,
}: {
  workflow: WorkflowDescription;
  timeline: readonly TimelineEntry[];
}) {
  const engines = useEngineDirectory();
  const selectedGroupKey = useViewStore((state) => state.selectedGroupKey);
  const selectGroup = useViewStore((state) => state.selectGroup);
  const live = !isTerminal(workflow.status);
  const lastAt = timeline.at(-1)?.at ?? workflow.updatedAt;
  const operations = useMemo(() => deriveOperations(timeline, lastAt, live), [timeline, lastAt, live]);
  return (
    <EventList
      workflowId={workflow.workflowId}
      run={workflow.run}
      groups={operations.groups}
      timeline={timeline}
      engines={engines}
      selectedGroupKey={selectedGroupKey}
      onSelectGroup={selectGroup}
      totalEntries={timeline.length}
    />
  );
}

/**
 * Where a queued workflow stands: waiting (its position of how many wait, its key and priority, and when a
 * delay holds it), or admitted (after how long, into which slot), with a link to its queue's page. The
 * position is asked while it waits; it moves when others are admitted (the `queues` area).
 */
function QueueFact({ workflow, queue }: { workflow: WorkflowDescription; queue: QueueMembership }) {
  const waiting = workflow.status === 'pending' && queue.admittedAt === undefined;
  const position = useQueuePosition(workflow.workflowId, waiting).data;
  const view = useQueue(queue.name, waiting).data;
  const now = useNow();
  const link = (
    <Link to={routes.queues(queue.name)} className={styles.mono} testId="detail.queue-link">
      {queue.name}
    </Link>
  );
  return (
    <div className={`${styles.fact} ${styles.wholeRow}`}>
      <dt>Queue</dt>
      <dd
        data-testid="detail.queue"
        data-state={waiting ? 'waiting' : queue.admittedAt === undefined ? 'left' : 'admitted'}
      >
        <span>
          {waiting ? (
            <>
              Waiting in queue {link}
              {position?.status === 'waiting' ? (
                <span data-testid="detail.queue-position" data-position={position.position}>
                  {' '}
                  — {positionText(position, view)}
                </span>
              ) : null}
              {queue.notBefore !== undefined && queue.notBefore > now ? (
                <span className={styles.muted} title={formatAbsolute(queue.notBefore)}>
                  {' '}
                  · not before {formatDuration(queue.notBefore - now, { coarse: true })} from now
                </span>
              ) : null}
            </>
          ) : queue.admittedAt !== undefined ? (
            <>
              Admitted from queue {link} {admittedText(queue)}
            </>
          ) : (
            <>Left queue {link} before it was admitted</>
          )}
        </span>
      </dd>
    </div>
  );
}
