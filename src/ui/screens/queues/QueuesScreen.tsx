/**
 * Queues: every workflow queue of the store (declared in code: `createEngine({ queues })` / `defineQueue`) —
 * its limits in one line, how many of its workflows run against its limit, how many wait and for how long
 * the first has, and its rate window — and one queue's page (`#/queues/<name>`): the workflows holding its
 * slots (since when, admitted by which engine), the next waiting in admission order (position, priority,
 * key, not-before), and the per-key breakdown.
 *
 * Read-only: a queue changes only through starts and ends of its workflows. Live: queue writes (an
 * admission, a freed slot, an enqueue, on whichever engine) and, while this screen is shown, workflow
 * changes refresh it (live-updates.ts).
 */
import type { ReactNode } from 'react';
import type { QueueView } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { EmptyState } from '../../components/EmptyState';
import { EngineTag } from '../../components/EngineTag';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Icon } from '../../components/icons';
import { RelativeTime } from '../../components/RelativeTime';
import { ScreenHeader } from '../../components/ScreenHeader';
import { StatusBadge } from '../../components/StatusBadge';
import {
  oldestWaitText,
  queueFull,
  queueLimitsText,
  queuesSummary,
  rateText,
  roundDurationText,
  runningText,
  slotText,
  waitingRows,
  waitingText,
} from '../../components/queue-view';
import { formatAbsolute, formatRelative } from '../../components/time-format';
import { useEngineDirectory } from '../../data/engine-queries';
import { useQueue, useQueues } from '../../data/queue-queries';
import { useStudioMode } from '../../data/studio-mode';
import { useWorkflowDescriptions } from '../../data/workflow-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import { useNow } from '../../state/now';
import { ActivityLimits } from './ActivityLimits';
import styles from './QueuesScreen.module.css';

export function QueuesScreen({ selected }: { selected: string | null }) {
  return selected === null ? <QueueList /> : <QueuePage name={selected} />;
}

function QueueList() {
  const queues = useQueues();
  const now = useNow();
  const items = queues.data;
  return (
    <section className={styles.screen} aria-labelledby="queues-title">
      <ScreenHeader
        titleId="queues-title"
        title="Queues"
        summary={items ? queuesSummary(items) : 'Workflows admitted under concurrency and rate limits.'}
        summaryTestId="queues.summary"
      />
      {queues.isError && !items ? (
        <ErrorNotice
          error={queues.error}
          title="Could not list the queues"
          onRetry={() => void queues.refetch()}
          testId="queues.error"
        />
      ) : !items ? (
        <div className={styles.card}>
          <EmptyState compact title="Loading queues…" testId="queues.loading" />
        </div>
      ) : items.length === 0 ? (
        <div className={styles.card}>
          <Empty />
        </div>
      ) : (
        <div className={styles.card}>
          <table className={styles.table} aria-label="Queues" data-testid="queues.table">
            <thead>
              <tr>
                <th scope="col">Queue</th>
                <th scope="col">Limits</th>
                <th scope="col" className={styles.number}>
                  Running
                </th>
                <th scope="col" className={styles.number}>
                  Waiting
                </th>
                <th scope="col" className={styles.number}>
                  Oldest wait
                </th>
                <th scope="col">Rate window</th>
              </tr>
            </thead>
            <tbody>
              {items.map((queue) => (
                <QueueRow key={queue.name} queue={queue} now={now} />
              ))}
            </tbody>
          </table>
          {queues.isError ? (
            <div className={styles.stale} role="status">
              Showing the last list: refreshing failed ({queues.error.message}).
            </div>
          ) : null}
        </div>
      )}
      <ActivityLimits />
    </section>
  );
}

function QueueRow({ queue, now }: { queue: QueueView; now: number }) {
  const rate = rateText(queue, now);
  return (
    <tr data-testid="queues.row" data-name={queue.name}>
      <td>
        <Link to={routes.queues(queue.name)} className={styles.name} testId="queues.row-name">
          {queue.name}
        </Link>
      </td>
      <td className={styles.limits} data-testid="queues.row-limits">
        {queueLimitsText(queue)}
      </td>
      <td className={styles.number}>
        <Running queue={queue} testId="queues.row-running" />
      </td>
      <td className={styles.number} data-testid="queues.row-waiting" data-waiting={queue.waiting}>
        {waitingText(queue)}
      </td>
      <td
        className={styles.number}
        data-testid="queues.row-oldest"
        title={
          queue.oldestEnqueuedAt === null ? undefined : `enqueued ${formatAbsolute(queue.oldestEnqueuedAt)}`
        }
      >
        {oldestWaitText(queue, now)}
      </td>
      <td data-testid="queues.row-rate">{rate ?? <span className={styles.muted}>no rate limit</span>}</td>
    </tr>
  );
}

/** "1 / 2" with a small bar of the held slots; the raw count in `data-running` for tests and tools. */
function Running({ queue, testId }: { queue: QueueView; testId: string }) {
  const full = queueFull(queue);
  return (
    <span
      className={`${styles.running} ${full ? styles.full : ''}`}
      data-testid={testId}
      data-running={queue.running ?? undefined}
      data-limit={queue.concurrency ?? undefined}
      title={
        queue.concurrency === null
          ? 'No concurrency limit: the queue counts no running workflows'
          : full
            ? 'Every slot is held: the next waits for one to end'
            : undefined
      }
    >
      {queue.concurrency !== null && queue.concurrency <= 20 ? (
        <span className={styles.bar} aria-hidden="true">
          {Array.from({ length: queue.concurrency }, (_, index) => (
            <span key={index} className={index < (queue.running ?? 0) ? styles.held : styles.free} />
          ))}
        </span>
      ) : null}
      {runningText(queue)}
    </span>
  );
}

function Empty() {
  const { server } = useStudioMode();
  return (
    <EmptyState icon="queues" title="No queues are declared" testId="queues.empty">
      <p className={styles.emptyText}>
        A queue admits its workflows under limits shared by every {server ? 'worker process' : 'engine (tab)'}
        : so many at once, so many per key, so many a minute. Declare one with <code>defineQueue</code> beside
        your workflows, pass it to every engine, and start workflows onto it:
      </p>
      <pre className={styles.snippet}>
        {`export const payments = defineQueue('payments', {
  concurrency: 2, perKeyConcurrency: 1,
  rateLimit: { limit: 30, periodMs: 60_000 },
});
createEngine({ queues: [payments], … });
start('charge', input, { queue: 'payments', concurrencyKey: customerId });`}
      </pre>
      <p className={styles.emptyText}>
        {server
          ? 'A worker declares the queues its --workflows modules export.'
          : 'The studio’s tabs declare the demos’ queue (payments, for the payment demo); a queue exported by a definition written in the editor is not declared yet.'}
      </p>
    </EmptyState>
  );
}

function QueuePage({ name }: { name: string }) {
  const queue = useQueue(name);
  const now = useNow();
  const engines = useEngineDirectory();
  const view = queue.data;
  const back = (
    <Link to={routes.queues()} className={styles.back} testId="queue.back">
      <Icon name="chevron-right" size={12} /> Queues
    </Link>
  );
  if (!view)
    return (
      <section className={styles.screen} aria-labelledby="queue-title">
        <ScreenHeader titleId="queue-title" title={name} summary={back} />
        {queue.isError ? (
          queue.error.name === 'QueueNotFoundError' ? (
            <div className={styles.card}>
              <EmptyState icon="queues" title={`No queue named ${name}`} testId="queue.not-found">
                <p className={styles.emptyText}>
                  No engine of this store declares it. Check the name on the{' '}
                  <Link to={routes.queues()}>Queues</Link> screen, or declare it with{' '}
                  <code>defineQueue(&apos;{name}&apos;, …)</code> on every engine.
                </p>
              </EmptyState>
            </div>
          ) : (
            <ErrorNotice
              error={queue.error}
              title={`Could not read queue ${name}`}
              onRetry={() => void queue.refetch()}
              testId="queue.error"
            />
          )
        ) : (
          <div className={styles.card}>
            <EmptyState compact title="Loading the queue…" testId="queue.loading" />
          </div>
        )}
      </section>
    );
  const rate = rateText(view, now);
  return (
    <section
      className={styles.screen}
      aria-labelledby="queue-title"
      data-testid="queue.page"
      data-name={name}
    >
      <ScreenHeader
        titleId="queue-title"
        title={name}
        summary={
          <span className={styles.headerSummary}>
            {back}
            <span data-testid="queue.limits">{queueLimitsText(view)}</span>
          </span>
        }
      />
      <div className={`${styles.card} ${styles.facts}`} data-testid="queue.facts">
        <Fact label="Running">
          <Running queue={view} testId="queue.running" />
        </Fact>
        <Fact label="Waiting">
          <span data-testid="queue.waiting" data-waiting={view.waiting}>
            {waitingText(view)}
          </span>
        </Fact>
        <Fact label="Oldest wait">{oldestWaitText(view, now)}</Fact>
        <Fact label="Rate window">{rate ?? <span className={styles.muted}>no rate limit</span>}</Fact>
        <Fact label="Driven by this engine">{view.drivenHere}</Fact>
        <Fact label="Priority step">
          <span title="How much waiting one priority level is worth: nothing waits forever">
            {roundDurationText(view.priorityStepMs)} per level
          </span>
        </Fact>
      </div>
      <Slots view={view} engines={engines} />
      <Waiting view={view} now={now} />
      <Keys view={view} />
    </section>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className={styles.fact}>
      <span className={styles.factLabel}>{label}</span>
      <span className={styles.factValue}>{children}</span>
    </div>
  );
}

function Slots({ view, engines }: { view: QueueView; engines: ReadonlyMap<string, EngineRecord> }) {
  const slots = [...view.slots].sort((a, b) => a.slot - b.slot);
  const described = useWorkflowDescriptions(slots.map((slot) => slot.workflowId));
  return (
    <section className={styles.card} aria-labelledby="queue-slots-title">
      <h2 className={styles.panelTitle} id="queue-slots-title">
        Running <span className={styles.muted}>the workflows holding its slots</span>
      </h2>
      {view.concurrency === null ? (
        <p className={styles.panelNote}>
          This queue has no <code>concurrency</code> limit, so it holds no slots: its workflows start as soon
          as the other limits allow.
        </p>
      ) : slots.length === 0 ? (
        <p className={styles.panelNote} data-testid="queue.slots-empty">
          No slot is held: none of its workflows runs.
        </p>
      ) : (
        <table className={styles.table} aria-label="Slots" data-testid="queue.slots">
          <thead>
            <tr>
              <th scope="col">Slot</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">Since</th>
              <th scope="col">Admitted by</th>
            </tr>
          </thead>
          <tbody>
            {slots.map((slot) => {
              const workflow = described.get(slot.workflowId);
              return (
                <tr key={slot.slot} data-testid="queue.slot" data-workflow-id={slot.workflowId}>
                  <td className={styles.mono}>{slotText(slot.slot, view.concurrency)}</td>
                  <td>
                    <Link to={routes.workflow(slot.workflowId)} className={styles.id}>
                      {slot.workflowId}
                    </Link>
                  </td>
                  <td>{workflow ? <StatusBadge status={workflow.status} /> : null}</td>
                  <td title={formatAbsolute(slot.since)}>
                    <RelativeTime at={slot.since} />
                  </td>
                  <td>
                    <EngineTag engineId={slot.admittedBy} engine={engines.get(slot.admittedBy)} />
                    {workflow?.owner && workflow.owner.engineId !== slot.admittedBy ? (
                      <span className={styles.muted} title="Another engine took it over since">
                        {' '}
                        now on{' '}
                        <EngineTag
                          engineId={workflow.owner.engineId}
                          engine={engines.get(workflow.owner.engineId)}
                        />
                      </span>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Waiting({ view, now }: { view: QueueView; now: number }) {
  const rows = waitingRows(view, now);
  const described = useWorkflowDescriptions(rows.map((row) => row.workflowId));
  return (
    <section className={styles.card} aria-labelledby="queue-waiting-title">
      <h2 className={styles.panelTitle} id="queue-waiting-title">
        Waiting{' '}
        <span className={styles.muted}>
          {view.waiting > rows.length
            ? `the first ${rows.length} of ${waitingText(view)}, in admission order`
            : 'in admission order'}
        </span>
      </h2>
      {rows.length === 0 ? (
        <p className={styles.panelNote} data-testid="queue.waiting-empty">
          Nothing waits: a workflow started onto this queue now is admitted at once if a slot is free.
        </p>
      ) : (
        <table className={styles.table} aria-label="Waiting" data-testid="queue.next">
          <thead>
            <tr>
              <th scope="col" className={styles.number}>
                #
              </th>
              <th scope="col">Workflow</th>
              <th scope="col">Type</th>
              <th scope="col">Key</th>
              <th scope="col" className={styles.number}>
                Priority
              </th>
              <th scope="col">Enqueued</th>
              <th scope="col">Not before</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const membership = described.get(row.workflowId)?.queue;
              return (
                <tr key={row.workflowId} data-testid="queue.waiting-row" data-workflow-id={row.workflowId}>
                  <td className={styles.number}>{row.position}</td>
                  <td>
                    <Link to={routes.workflow(row.workflowId)} className={styles.id}>
                      {row.workflowId}
                    </Link>
                  </td>
                  <td>{row.type}</td>
                  <td>
                    {row.key ?? <span className={styles.muted}>—</span>}
                    {row.keyFull ? (
                      <span
                        className={styles.keyFull}
                        title={`Key ${row.key} is at the queue’s limit of ${view.perKeyConcurrency} at once: workflows behind this one with another key go first`}
                        data-testid="queue.key-full"
                      >
                        key busy
                      </span>
                    ) : null}
                  </td>
                  <td className={styles.number}>{membership?.priority ?? ''}</td>
                  <td>{membership ? <RelativeTime at={membership.enqueuedAt} /> : null}</td>
                  <td>
                    {row.notBefore === null ? (
                      <span className={styles.muted}>—</span>
                    ) : (
                      <span
                        title={formatAbsolute(row.notBefore)}
                        className={row.held ? styles.held : undefined}
                      >
                        {row.held ? formatRelative(row.notBefore, now) : 'due'}
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Keys({ view }: { view: QueueView }) {
  if (view.perKeyConcurrency === null && view.keys.length === 0) return null;
  return (
    <section className={styles.card} aria-labelledby="queue-keys-title">
      <h2 className={styles.panelTitle} id="queue-keys-title">
        By key{' '}
        <span className={styles.muted}>
          {view.perKeyConcurrency === null
            ? 'no per-key limit'
            : `${view.perKeyConcurrency} at once per concurrencyKey`}
        </span>
      </h2>
      {view.keys.length === 0 ? (
        <p className={styles.panelNote}>No workflow with a concurrency key runs or waits.</p>
      ) : (
        <table className={styles.table} aria-label="By key" data-testid="queue.keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col" className={styles.number}>
                Running
              </th>
              <th scope="col" className={styles.number}>
                Waiting
              </th>
            </tr>
          </thead>
          <tbody>
            {view.keys.map((key) => (
              <tr key={key.key} data-testid="queue.key" data-key={key.key}>
                <td className={styles.mono}>{key.key}</td>
                <td className={styles.number}>
                  {view.perKeyConcurrency === null
                    ? key.running
                    : `${key.running} / ${view.perKeyConcurrency}`}
                </td>
                <td className={styles.number}>{key.waiting}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
