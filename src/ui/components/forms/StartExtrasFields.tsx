/**
 * The start dialog's optional extras (start-extras.ts): the queue, concurrency key and priority (when the
 * store has queues), an idempotency key, and a signal sent with the
 * start (signal name and JSON payload). And what the dialog says when a start started nothing: the
 * idempotency key returned an earlier start's run, or signal-with-start found the workflow running and only
 * delivered its signal — with the way to that workflow.
 */
import { Button } from '../Button';
import { useQueues } from '../../data/queue-queries';
import { queueLimitsText } from '../queue-view';
import type { DialogStartOutcome } from '../../data/start-actions';
import styles from './StartDialog.module.css';
import extraStyles from './StartExtrasFields.module.css';
import type { ExtrasProblem, StartExtras } from './start-extras';

export function StartExtrasFields({
  extras,
  onChange,
  problem,
}: {
  extras: StartExtras;
  onChange: (extras: StartExtras) => void;
  /** The field at fault, if any (the message is shown by the form). */
  problem: ExtrasProblem | null;
}) {
  const set = (patch: Partial<StartExtras>) => onChange({ ...extras, ...patch });
  const invalid = (field: ExtrasProblem['field']) => (problem?.field === field ? styles.invalid : '');
  const queues = useQueues().data ?? [];
  return (
    <div className={extraStyles.extras}>
      {queues.length > 0 || extras.queue !== '' ? (
        <div className={styles.row} data-testid="start.queue-fields">
          <div className={styles.field}>
            <label htmlFor="start-queue" className={styles.label}>
              Queue
            </label>
            <select
              id="start-queue"
              className={`${styles.text} ${invalid('queue')}`}
              value={extras.queue}
              onChange={(event) => set({ queue: event.target.value })}
              data-testid="start.queue"
              title="The queue to start onto; “as defined”: the definition’s own queue, if it names one"
            >
              <option value="">as defined</option>
              {queues.map((queue) => (
                <option key={queue.name} value={queue.name}>
                  {queue.name} — {queueLimitsText(queue)}
                </option>
              ))}
            </select>
          </div>
          <div className={styles.field}>
            <label htmlFor="start-concurrency-key" className={styles.label}>
              Concurrency key
            </label>
            <input
              id="start-concurrency-key"
              className={`${styles.text} ${invalid('concurrencyKey')}`}
              value={extras.concurrencyKey}
              onChange={(event) => set({ concurrencyKey: event.target.value })}
              placeholder="optional"
              spellCheck={false}
              autoComplete="off"
              data-testid="start.concurrency-key"
            />
          </div>
          <div className={styles.field}>
            <label htmlFor="start-priority" className={styles.label}>
              Priority
            </label>
            <select
              id="start-priority"
              className={`${styles.text} ${invalid('priority')}`}
              value={extras.priority}
              onChange={(event) => set({ priority: event.target.value })}
              data-testid="start.priority"
            >
              {Array.from({ length: 10 }, (_, index) => index + 1).map((priority) => (
                <option key={priority} value={priority === 5 ? '' : String(priority)}>
                  {priority}
                  {priority === 1
                    ? ' (first)'
                    : priority === 5
                      ? ' (default)'
                      : priority === 10
                        ? ' (last)'
                        : ''}
                </option>
              ))}
            </select>
          </div>
        </div>
      ) : null}
      <div className={styles.field}>
        <label htmlFor="start-idempotency-key" className={styles.label}>
          Idempotency key <span className={styles.hint}>optional</span>
        </label>
        <input
          id="start-idempotency-key"
          className={`${styles.text} ${invalid('idempotencyKey')}`}
          value={extras.idempotencyKey}
          onChange={(event) => set({ idempotencyKey: event.target.value })}
          placeholder="e.g. order-A-1001; starting again with it returns the same run"
          spellCheck={false}
          autoComplete="off"
          aria-describedby="start-idempotency-hint"
          data-testid="start.idempotency-key"
        />
        <span id="start-idempotency-hint" className={extraStyles.note}>
          Within the engine’s window (24 h), a start with a key already used starts nothing and returns the
          run it started — whatever its id, type or input.
        </span>
      </div>
      <label className={extraStyles.check}>
        <input
          type="checkbox"
          checked={extras.withSignal}
          onChange={(event) => set({ withSignal: event.target.checked })}
          data-testid="start.with-signal"
        />
        Send a signal with the start
        <span className={styles.hint}>
          signal-with-start: signals the workflow of this id if it runs, else starts it with the signal
          buffered
        </span>
      </label>
      {extras.withSignal ? (
        <div className={styles.row}>
          <div className={styles.field}>
            <label htmlFor="start-signal-name" className={styles.label}>
              Signal name
            </label>
            <input
              id="start-signal-name"
              className={`${styles.text} ${invalid('signalName')}`}
              value={extras.signalName}
              onChange={(event) => set({ signalName: event.target.value })}
              placeholder="e.g. approve"
              spellCheck={false}
              autoComplete="off"
              data-testid="start.signal-name"
            />
          </div>
          <div className={styles.field}>
            <label htmlFor="start-signal-payload" className={styles.label}>
              Payload <span className={styles.hint}>JSON, optional</span>
            </label>
            <input
              id="start-signal-payload"
              className={`${styles.text} ${invalid('signalPayload')}`}
              value={extras.signalPayload}
              onChange={(event) => set({ signalPayload: event.target.value })}
              placeholder='{ "ok": true, "by": "dana" }'
              spellCheck={false}
              autoComplete="off"
              data-testid="start.signal-payload"
            />
          </div>
        </div>
      ) : null}
    </div>
  );
}

/** What a start that started nothing did, with the way to the workflow it concerns. */
export function NothingStarted({ outcome, onOpen }: { outcome: DialogStartOutcome; onOpen: () => void }) {
  const id = <code className={extraStyles.id}>{outcome.workflowId}</code>;
  return (
    <div
      className={extraStyles.nothingStarted}
      role="status"
      data-testid="start.nothing-started"
      data-kind={outcome.kind}
      data-workflow-id={outcome.workflowId}
    >
      {outcome.kind === 'start' ? (
        <span>
          Nothing new was started: the idempotency key{' '}
          <code className={extraStyles.id}>{outcome.idempotencyKey}</code> already started workflow {id} (run{' '}
          {outcome.run}), and this start returned that existing run.
        </span>
      ) : (
        <span>
          Workflow {id} was already running (run {outcome.run}): signal{' '}
          <code className={extraStyles.id}>{outcome.signalName}</code> was delivered to it, and nothing was
          started.
        </span>
      )}
      <Button size="sm" onClick={onOpen} testId="start.open-existing">
        Open the workflow
      </Button>
    </div>
  );
}
