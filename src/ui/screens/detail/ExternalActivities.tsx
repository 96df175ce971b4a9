/**
 * External activities on a workflow's page: each activity declared `completion: 'external'` that waits now
 * says "Waiting for an external completion", shows its completion token (with a copy button: hand it to
 * whoever finishes it, or use it from the console) and offers Complete… (a JSON result, as the signal
 * dialog edits a payload) and Fail… (a message, and optionally an error name). Exactly one completion is
 * accepted: a second is refused with the engine's `ActivityCompletionRefusedError`, shown in its words.
 */
import { useState, type FormEvent } from 'react';
import type { WorkflowDescription } from '../../../public';
import { Button } from '../../components/Button';
import { CopyableId } from '../../components/CopyableId';
import { InlineError } from '../../components/ErrorNotice';
import { Icon } from '../../components/icons';
import { RelativeTime } from '../../components/RelativeTime';
import { useCompleteActivity } from '../../data/activity-completion';
import { parseJsonInput } from '../../components/forms/start-form';
import { waitingExternalActivities, type WaitingExternalActivity } from './external-activities';
import { FormDialog, InputField, JsonValueField } from './DialogForm';
import styles from './ExternalActivities.module.css';

type Finish = { kind: 'complete' | 'fail'; activity: WaitingExternalActivity };

export function ExternalActivities({ workflow }: { workflow: WorkflowDescription }) {
  const [finish, setFinish] = useState<Finish | null>(null);
  const waiting = waitingExternalActivities(workflow);
  if (waiting.length === 0 && !finish) return null;
  return (
    <>
      {waiting.map((activity) => (
        <section
          key={activity.token}
          className={styles.panel}
          aria-label={`External activity ${activity.name}`}
          data-testid="detail.external-activity"
          data-activity={activity.name}
        >
          <span className={styles.icon} aria-hidden>
            <Icon name="hourglass" size={16} />
          </span>
          <div className={styles.text}>
            <h2 className={styles.title}>Waiting for an external completion</h2>
            <p className={styles.meta}>
              Activity <strong>{activity.name}</strong>
              {activity.attempt > 1 ? ` · attempt ${activity.attempt}` : ''} · since{' '}
              <RelativeTime at={activity.since} />
              {activity.lastError ? (
                <span className={styles.lastError}>
                  {' '}
                  · last failed: {activity.lastError.name}: {activity.lastError.message}
                </span>
              ) : null}
            </p>
            <p className={styles.token}>
              <span className={styles.tokenLabel}>Token</span>
              <CopyableId id={activity.token} label="completion token" testId="detail.completion-token" />
            </p>
          </div>
          <div className={styles.actions}>
            <Button
              size="sm"
              variant="primary"
              icon="check"
              onClick={() => setFinish({ kind: 'complete', activity })}
              testId="detail.complete-activity"
            >
              Complete…
            </Button>
            <Button
              size="sm"
              variant="danger"
              icon="cross"
              onClick={() => setFinish({ kind: 'fail', activity })}
              testId="detail.fail-activity"
            >
              Fail…
            </Button>
          </div>
        </section>
      ))}
      {finish ? (
        <FinishDialog
          workflowId={workflow.workflowId}
          kind={finish.kind}
          activity={finish.activity}
          onClose={() => setFinish(null)}
        />
      ) : null}
    </>
  );
}

function FinishDialog({
  workflowId,
  kind,
  activity,
  onClose,
}: {
  workflowId: string;
  kind: 'complete' | 'fail';
  activity: WaitingExternalActivity;
  onClose: () => void;
}) {
  const [value, setValue] = useState('');
  const [name, setName] = useState('');
  const [message, setMessage] = useState('');
  const action = useCompleteActivity(workflowId);
  const parsed = parseJsonInput(value);
  const ready = kind === 'complete' ? parsed.ok : message.trim().length > 0;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!ready) return;
    if (kind === 'complete')
      action.mutate(
        { kind, token: activity.token, ...(parsed.ok && !parsed.empty ? { result: parsed.value } : {}) },
        { onSuccess: onClose },
      );
    else
      action.mutate(
        {
          kind,
          token: activity.token,
          error: { ...(name.trim() ? { name: name.trim() } : {}), message: message.trim() },
        },
        { onSuccess: onClose },
      );
  };
  return (
    <FormDialog
      formId="finish-activity-form"
      onClose={onClose}
      title={kind === 'complete' ? `Complete “${activity.name}”` : `Fail “${activity.name}”`}
      description={
        kind === 'complete'
          ? 'The result is what the activity returns to the workflow. Exactly one completion is accepted.'
          : 'The attempt fails with this error; its retry policy decides whether it runs again (with the same token) or the workflow sees the failure.'
      }
      width={560}
      testId={kind === 'complete' ? 'detail.complete-dialog' : 'detail.fail-dialog'}
      submit={{
        label: kind === 'complete' ? 'Complete activity' : 'Fail activity',
        variant: kind === 'complete' ? 'primary' : 'danger',
        disabled: !ready,
        busy: action.isPending,
        testId: kind === 'complete' ? 'detail.complete-submit' : 'detail.fail-submit',
      }}
      onSubmit={submit}
    >
      <p className={styles.dialogToken}>
        <span className={styles.tokenLabel}>Token</span> <code>{activity.token}</code>
      </p>
      {kind === 'complete' ? (
        <JsonValueField
          label="Result"
          value={value}
          onValue={(next) => {
            setValue(next);
            action.reset();
          }}
          parsed={parsed}
          autoFocus
          placeholder='{ "approved": true, "by": "ada" }'
          testId="detail.complete-value"
        />
      ) : (
        <>
          <InputField
            label="Message"
            value={message}
            onValue={(next) => {
              setMessage(next);
              action.reset();
            }}
            autoFocus
            required
            placeholder="e.g. Rejected: over budget"
            testId="detail.fail-message"
          />
          <InputField
            label="Error name"
            hint="optional, e.g. Rejected"
            value={name}
            onValue={(next) => {
              setName(next);
              action.reset();
            }}
            spellCheck={false}
            testId="detail.fail-name"
          />
        </>
      )}
      {action.isError ? (
        <InlineError
          error={action.error}
          testId={kind === 'complete' ? 'detail.complete-error' : 'detail.fail-error'}
        />
      ) : null}
    </FormDialog>
  );
}
