/**
 * Event detail: one timeline entry in full — what happened in words (never cut), when, which engine wrote it
 * under which epoch, the attempt, every recorded field, a failure with its stack —, the value its operation
 * recorded (an activity's or child's result, a signal's payload, the error it failed with, the state after
 * an update: timeline entries carry no values, so it is read from the run's history), the input the event
 * carried in (a start's and a child's input, read from the workflow's or the child's record; an update's
 * argument, kept with its outcome), the other entries of the same operation, so an attempt reads with its
 * retries and its outcome, and "Run again from here": a fork of the run from the event's operation.
 */
import { useState } from 'react';
import type { TimelineEntry } from '../../../public';
import type { EngineRecord } from '../../../public/browser';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { EngineTag } from '../../components/EngineTag';
import { JsonView } from '../../components/JsonView';
import { formatAbsolute, formatClock } from '../../components/time-format';
import { InlineError } from '../../components/ErrorNotice';
import { useOperationOutcome } from '../../data/outcome-queries';
import { useFork } from '../../data/workflow-actions';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import { useWorkflowDescription } from '../../data/workflow-queries';
import { formatBytes } from '../../components/byte-format';
import {
  eventDetail,
  forkWords,
  inputTarget,
  inputView,
  outcomeTarget,
  outcomeView,
  sameOperation,
  type AttemptOutcome,
  type InputTarget,
  type InputView,
  type OutcomeTarget,
} from './event-detail';
import styles from './EventDetailDialog.module.css';
import { describeEntry } from './operations';
import { detailsShown } from './stack-lines';
import { StackView } from './StackView';

export function EventDetailDialog({
  workflowId,
  run,
  entry,
  timeline,
  engines,
  onClose,
  onOpen,
}: {
  workflowId: string;
  /** The run `timeline` belongs to. */
  run: number;
  entry: TimelineEntry | null;
  timeline: readonly TimelineEntry[];
  engines: ReadonlyMap<string, EngineRecord>;
  onClose: () => void;
  onOpen: (seq: number) => void;
}) {
  const name = (engineId: string) => engines.get(engineId)?.label ?? engineId.slice(0, 8);
  const detail = entry ? eventDetail(entry, formatAbsolute) : null;
  const related = entry ? sameOperation(timeline, entry) : [];
  const target = entry ? outcomeTarget(entry, timeline) : null;
  const input = entry ? inputTarget(entry) : null;
  return (
    <Dialog
      open={entry !== null}
      onClose={onClose}
      title={entry ? `Event #${entry.seq} · ${entry.kind}` : 'Event'}
      description={entry ? describeEntry(entry, name) : undefined}
      width={680}
      testId="detail.event-dialog"
    >
      {entry && detail ? (
        <div className={styles.body}>
          <dl className={styles.facts}>
            <div>
              <dt>When</dt>
              <dd>{formatAbsolute(entry.at)}</dd>
            </div>
            <div>
              <dt>Written by</dt>
              <dd data-testid="detail.event-engine">
                <EngineTag engineId={entry.engineId} engine={engines.get(entry.engineId)} />
              </dd>
            </div>
            <div>
              <dt>Under epoch</dt>
              <dd data-testid="detail.event-epoch">{entry.epoch}</dd>
            </div>
            {detail.facts.map((fact) => (
              <div key={fact.label}>
                <dt>{fact.label}</dt>
                <dd className={styles.value}>{fact.value}</dd>
              </div>
            ))}
          </dl>
          {detail.error ? (
            <section className={styles.error} data-testid="detail.event-error">
              <h3 className={styles.heading}>Failure</h3>
              <p className={styles.errorTitle}>{detail.error.name}</p>
              <pre className={styles.pre}>{detail.error.message}</pre>
              {detail.error.details ? <JsonView value={detailsShown(detail.error)} expandDepth={1} /> : null}
              <StackView error={detail.error} testId="detail.event-stack" />
            </section>
          ) : null}
          {input ? (
            <EventInput key={`input-${entry.seq}`} workflowId={workflowId} run={run} target={input} />
          ) : null}
          {target?.of && target.settledBy ? (
            <OtherAttemptOutcome settledBy={target.settledBy} onOpen={onOpen} />
          ) : target ? (
            <OperationOutcome
              key={entry.seq}
              workflowId={workflowId}
              run={run}
              target={target}
              timeline={timeline}
              onOpen={onOpen}
            />
          ) : null}
          {'pos' in entry.detail ? (
            <RunAgainFromHere
              key={`fork-${entry.seq}`}
              workflowId={workflowId}
              run={run}
              position={entry.detail.pos}
              onDone={onClose}
            />
          ) : null}
          <section>
            <h3 className={styles.heading}>As recorded</h3>
            <JsonView value={detail.raw} expandDepth={3} testId="detail.event-raw" />
          </section>
          {related.length > 1 ? (
            <section>
              <h3 className={styles.heading}>This operation ({related.length} entries)</h3>
              <ol className={styles.related}>
                {related.map((other) => (
                  <li key={other.seq} aria-current={other.seq === entry.seq ? 'true' : undefined}>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => onOpen(other.seq)}
                      disabled={other.seq === entry.seq}
                    >
                      #{other.seq}
                    </Button>
                    <time title={formatAbsolute(other.at)}>{formatClock(other.at)}</time>
                    <span className={styles.relatedText}>{describeEntry(other, name)}</span>
                    <span className={styles.epoch}>
                      {name(other.engineId)} · e{other.epoch}
                    </span>
                  </li>
                ))}
              </ol>
            </section>
          ) : null}
        </div>
      ) : null}
    </Dialog>
  );
}

/** The value the entry's operation recorded, read from the run's history, with its loading states in words. */
function OperationOutcome({
  workflowId,
  run,
  target,
  timeline,
  onOpen,
}: {
  workflowId: string;
  run: number;
  target: OutcomeTarget;
  timeline: readonly TimelineEntry[];
  onOpen: (seq: number) => void;
}) {
  const outcome = useOperationOutcome(workflowId, run, target.of);
  const consumedBy =
    target.of !== null && target.consumedBy !== undefined ? (
      <p className={styles.note}>
        Consumed by{' '}
        <Button size="sm" variant="ghost" onClick={() => onOpen(target.consumedBy!)}>
          #{target.consumedBy}
        </Button>{' '}
        in the same commit.
      </p>
    ) : null;
  let heading: string = target.heading;
  let body;
  let argument: InputView | null = null;
  if (target.of === null) body = <p className={styles.note}>{target.note}</p>;
  else if (outcome.isPending)
    body = <p className={styles.note}>Reading the recorded {heading.toLowerCase()}…</p>;
  else if (outcome.isError)
    body = (
      <p className={styles.note} role="alert">
        Could not read it: {outcome.error.message}
      </p>
    );
  else {
    const view = outcomeView(outcome.data, target, timeline);
    heading = view.heading;
    if (view.state === 'value') argument = view.argument ?? null;
    if (view.state === 'not-recorded') body = <p className={styles.note}>{view.text}</p>;
    else if (view.state === 'error')
      body = (
        <div className={styles.error}>
          <p className={styles.errorTitle}>{view.error.name}</p>
          <pre className={styles.pre}>{view.error.message}</pre>
          {view.error.details ? <JsonView value={detailsShown(view.error)} expandDepth={1} /> : null}
          <StackView error={view.error} testId="detail.event-outcome-stack" open={false} />
          {view.text ? <p className={styles.note}>{view.text}</p> : null}
        </div>
      );
    else body = <ValueBox json={view.json} text={view.text} testId="detail.event-outcome-value" />;
    if (view.state === 'value' && view.json !== null)
      heading = `${view.heading} · ${formatBytes(view.bytes)}`;
  }
  return (
    <>
      {argument ? <CarriedValue view={argument} /> : null}
      <section data-testid="detail.event-outcome" aria-live="polite">
        <h3 className={styles.heading} data-testid="detail.event-outcome-heading">
          {heading}
        </h3>
        {body}
        {consumedBy}
      </section>
    </>
  );
}

/**
 * The outcome of an operation on an event of another attempt than the one that settled it (an attempt that
 * failed and was retried, or was interrupted): whose it is, and a link to that attempt's event, which shows
 * it. An attempt's event shows its own failure, never a later attempt's result as if it were its own.
 */
function OtherAttemptOutcome({
  settledBy,
  onOpen,
}: {
  settledBy: AttemptOutcome;
  onOpen: (seq: number) => void;
}) {
  const { attempt, ownAttempt, ok, seq } = settledBy;
  return (
    <section data-testid="detail.event-outcome">
      <h3 className={styles.heading} data-testid="detail.event-outcome-heading">
        {ok ? `Result of attempt ${attempt}` : `Failed for good at attempt ${attempt}`}
      </h3>
      <p className={styles.note}>
        Attempt {ownAttempt}, this event’s, recorded no result.{' '}
        {ok
          ? `The operation’s result was recorded by attempt ${attempt}:`
          : `The operation failed after attempt ${attempt}; its error is on that attempt’s event:`}{' '}
        <Button size="sm" variant="ghost" onClick={() => onOpen(seq)} testId="detail.event-outcome-attempt">
          #{seq}
        </Button>
      </p>
    </section>
  );
}

/**
 * The input a start or a child's start carried, whole: read from the record of the run (`started`,
 * `scheduled`) or of the child (`child-started`).
 */
function EventInput({ workflowId, run, target }: { workflowId: string; run: number; target: InputTarget }) {
  const description = useWorkflowDescription(
    target.of === 'child' ? target.childId : workflowId,
    target.of === 'child' ? undefined : run,
  );
  if (description.isSuccess) return <CarriedValue view={inputView(description.data.input, 'Input')} />;
  return (
    <section data-testid="detail.event-input">
      <h3 className={styles.heading} data-testid="detail.event-input-heading">
        Input
      </h3>
      {description.isError ? (
        <p className={styles.note} role="alert">
          {description.error.name === 'WorkflowNotFoundError'
            ? `${target.of === 'child' ? 'The child workflow' : 'This run'} is no longer stored: its input cannot be read.`
            : `Could not read it: ${description.error.message}`}
        </p>
      ) : (
        <p className={styles.note}>Reading the input…</p>
      )}
    </section>
  );
}

/** A value an event carried in (an input, an update's argument), whole, headed with its size as stored. */
function CarriedValue({ view }: { view: InputView }) {
  return (
    <section data-testid="detail.event-input">
      <h3 className={styles.heading} data-testid="detail.event-input-heading">
        {view.json !== null ? `${view.heading} · ${formatBytes(view.bytes)}` : view.heading}
      </h3>
      <ValueBox json={view.json} text={view.text} testId="detail.event-input-value" />
    </section>
  );
}

/** A value as pretty JSON in a scrollable box (none when `json` is null), and a sentence about it. */
function ValueBox({ json, text, testId }: { json: string | null; text: string | undefined; testId: string }) {
  return (
    <>
      {json !== null ? (
        <pre className={styles.outcomeValue} tabIndex={0} data-testid={testId}>
          {json}
        </pre>
      ) : null}
      {text ? <p className={styles.note}>{text}</p> : null}
    </>
  );
}

/**
 * "Run again from here": forks the run from the event's operation (useFork: the next run of the id, or an id
 * of its own while the id runs), after a confirmation in place that says what is replayed and what runs.
 */
function RunAgainFromHere({
  workflowId,
  run,
  position,
  onDone,
}: {
  workflowId: string;
  run: number;
  position: number;
  onDone: () => void;
}) {
  const [asking, setAsking] = useState(false);
  const fork = useFork();
  return (
    <section data-testid="detail.event-fork-section">
      <h3 className={styles.heading}>Run again from here</h3>
      {asking ? (
        <>
          <p className={styles.note}>{forkWords(run, position)}</p>
          <div className={styles.forkButtons}>
            <Button
              size="sm"
              variant="primary"
              busy={fork.isPending}
              testId="detail.event-fork-confirm"
              onClick={() =>
                fork.mutate(
                  { workflowId, run, fromPosition: position },
                  {
                    onSuccess: (forked) => {
                      onDone();
                      navigate(routes.workflow(forked.workflowId));
                    },
                  },
                )
              }
            >
              Fork from #{position}
            </Button>
            <Button size="sm" onClick={() => setAsking(false)}>
              Keep it
            </Button>
          </div>
          {fork.isError ? <InlineError error={fork.error} testId="detail.event-fork-error" /> : null}
        </>
      ) : (
        <Button
          size="sm"
          icon="refresh"
          onClick={() => setAsking(true)}
          testId="detail.event-fork"
          title="Fork the run: replay what came before this operation, run it and the rest again"
        >
          Run again from #{position}…
        </Button>
      )}
    </section>
  );
}
