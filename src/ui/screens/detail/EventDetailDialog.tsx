/**
 * Event detail: one timeline entry in full — what happened in words (never cut), when, which engine wrote it
 * under which epoch, the attempt, every recorded field, a failure with its stack — and the other entries of
 * the same operation, so an attempt reads with its retries and its outcome.
 */
import type { TimelineEntry } from '../../../engine';
import type { EngineRecord } from '../../../host/protocol';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { EngineTag } from '../../components/EngineTag';
import { JsonView } from '../../components/JsonView';
import { formatAbsolute, formatClock } from '../../components/time-format';
import { eventDetail, sameOperation } from './event-detail';
import styles from './EventDetailDialog.module.css';
import { describeEntry } from './operations';

export function EventDetailDialog({
  entry,
  timeline,
  engines,
  onClose,
  onOpen,
}: {
  entry: TimelineEntry | null;
  timeline: readonly TimelineEntry[];
  engines: ReadonlyMap<string, EngineRecord>;
  onClose: () => void;
  onOpen: (seq: number) => void;
}) {
  const name = (engineId: string) => engines.get(engineId)?.label ?? engineId.slice(0, 8);
  const detail = entry ? eventDetail(entry, formatAbsolute) : null;
  const related = entry ? sameOperation(timeline, entry) : [];
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
              {detail.error.details ? <JsonView value={detail.error.details} expandDepth={1} /> : null}
              {detail.error.stack ? (
                <details open>
                  <summary>Stack</summary>
                  <pre className={styles.pre}>{detail.error.stack}</pre>
                </details>
              ) : null}
            </section>
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
