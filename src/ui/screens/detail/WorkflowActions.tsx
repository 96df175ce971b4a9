/**
 * What a person can do to a workflow from its page: send a signal, send an update (and see what it
 * returned), run a query, wait for its result (a real `result()` call registered as a result waiter on this
 * tab's engine), suspend or resume it, cancel or terminate it (after a confirmation that says what happens),
 * retry it from where it stopped once it ended badly (a fork), rerun or purge it once finished, and export its record and timeline as JSON. Every call goes through this tab's engine, whichever tab owns
 * the workflow; errors are shown in the engine's own words.
 */
import { useState, type FormEvent } from 'react';
import type { WorkflowDescription } from '../../../public';
import type { HelloResult } from '../../../public/browser';
import { Button } from '../../components/Button';
import { InlineError } from '../../components/ErrorNotice';
import { JsonView } from '../../components/JsonView';
import { formatDuration } from '../../components/time-format';
import { useCollectExport } from '../../data/workflow-export';
import {
  useDefinitions,
  useWaitForResult,
  useWorkflowAction,
  type WorkflowAction,
} from '../../data/workflow-queries';
import { useNow } from '../../state/now';
import { parseJsonInput } from '../../components/forms/start-form';
import { FormDialog, InputField, JsonValueField } from './DialogForm';
import { downloadExport } from './export';
import { signalNote } from './signal-note';
import { replayCheckWords, rerunId, useCheckReplay, useFork, useRerun } from '../../data/workflow-actions';
import { Notice } from '../../components/Notice';
import { ConfirmButton } from '../../components/ConfirmButton';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import styles from './WorkflowActions.module.css';
import { isTerminal } from '../../../public/browser';

type MessageKind = 'signal' | 'update' | 'query';
type Destructive = 'cancel' | 'terminate' | 'suspend';

export function WorkflowActions({
  workflow,
  self,
  onPurge,
}: {
  workflow: WorkflowDescription;
  self: HelloResult | undefined;
  /** Opens the purge confirmation (kept by the page, so it outlives a change of the run shown). */
  onPurge?: () => void;
}) {
  const [message, setMessage] = useState<MessageKind | null>(null);
  const [confirm, setConfirm] = useState<Destructive | null>(null);
  const action = useWorkflowAction(workflow.workflowId);
  const waiter = useWaitForResult(workflow.workflowId);
  const exporter = useCollectExport(workflow.workflowId);
  const rerun = useRerun();
  const fork = useFork();
  const replayCheck = useCheckReplay();
  const replayWords = replayCheck.data ? replayCheckWords(replayCheck.data) : null;
  const ended = isTerminal(workflow.status);
  const endedBadly = ended && workflow.status !== 'completed';
  const running = workflow.status === 'running' || workflow.status === 'pending';
  return (
    <div className={styles.wrap}>
      <div className={styles.toolbar} role="toolbar" aria-label="Workflow actions">
        <Button size="sm" onClick={() => setMessage('signal')} disabled={ended} testId="detail.signal-button">
          Signal
        </Button>
        <Button size="sm" onClick={() => setMessage('update')} disabled={ended} testId="detail.update-button">
          Update
        </Button>
        <Button size="sm" onClick={() => setMessage('query')} testId="detail.query-button">
          Query
        </Button>
        <Button
          size="sm"
          icon="hourglass"
          onClick={() => waiter.mutate()}
          busy={waiter.isPending}
          testId="detail.wait-result-button"
          title="Call result(): registers a result waiter on this page’s engine (the studio server’s in server mode)"
        >
          Wait for result
        </Button>
        <span className={styles.divider} aria-hidden />
        {workflow.status === 'suspended' ? (
          <Button
            size="sm"
            onClick={() => action.mutate({ kind: 'resume' })}
            busy={action.isPending && action.variables?.kind === 'resume'}
            testId="detail.resume-button"
          >
            Resume
          </Button>
        ) : (
          <Button
            size="sm"
            onClick={() => setConfirm('suspend')}
            disabled={workflow.status !== 'running'}
            testId="detail.suspend-button"
          >
            Suspend
          </Button>
        )}
        <Button
          size="sm"
          variant="danger"
          onClick={() => setConfirm('cancel')}
          disabled={!running}
          testId="detail.cancel-button"
        >
          Cancel
        </Button>
        <Button
          size="sm"
          variant="danger"
          onClick={() => setConfirm('terminate')}
          disabled={ended}
          testId="detail.terminate-button"
        >
          Terminate
        </Button>
        <span className={styles.divider} aria-hidden />
        {endedBadly ? (
          <ConfirmButton
            size="sm"
            icon="refresh"
            busy={fork.isPending}
            onConfirm={() =>
              fork.mutate(
                { workflowId: workflow.workflowId, run: workflow.run },
                { onSuccess: (forked) => navigate(routes.workflow(forked.workflowId)) },
              )
            }
            testId="detail.retry-button"
            title="Fork this run from the operation it stopped at: what came before is replayed, not run again"
            confirm={{
              title: 'Retry from where it stopped?',
              body: `A new run of ${workflow.workflowId} starts with the same input: the operations before the one this run stopped at are replayed from its history (their activities do not run again), and that operation and the rest run anew — on the code registered now. This run stays as it is. (While ${workflow.workflowId} runs again already, the fork gets its own id, ${workflow.workflowId}-fork-1 or the next free number.)`,
              submit: 'Retry',
              variant: 'primary',
            }}
          >
            Retry
          </ConfirmButton>
        ) : null}
        {ended ? (
          <ConfirmButton
            size="sm"
            icon="refresh"
            busy={rerun.isPending}
            onConfirm={() =>
              rerun.mutate(workflow, { onSuccess: (workflowId) => navigate(routes.workflow(workflowId)) })
            }
            testId="detail.rerun-button"
            title="Start a new workflow of the same type with the same input; this one stays as it is"
            confirm={{
              title: 'Rerun this workflow?',
              body: `A new ${workflow.workflowType} workflow starts from its first step with the same input, as ${rerunId(workflow.workflowId, 1)} (or the next free -rerun- number). Its activities run again. This one stays as it is.`,
              submit: 'Rerun',
              variant: 'primary',
            }}
          >
            Rerun
          </ConfirmButton>
        ) : null}
        {ended && onPurge ? (
          <Button
            size="sm"
            variant="danger"
            icon="trash"
            onClick={onPurge}
            testId="detail.purge-button"
            title="Delete this finished workflow and all of its runs from the database"
          >
            Purge…
          </Button>
        ) : null}
        <Button
          size="sm"
          variant="ghost"
          busy={replayCheck.isPending}
          onClick={() => replayCheck.mutate({ workflowId: workflow.workflowId, run: workflow.run })}
          testId="detail.check-replay-button"
          title="Replay this run's history against the definitions registered now, as a handoff would"
        >
          Check replay
        </Button>
        <Button
          size="sm"
          variant="ghost"
          icon="download"
          busy={exporter.isPending}
          onClick={() => exporter.mutate(undefined, { onSuccess: downloadExport })}
          testId="detail.export-button"
          title="Download the workflow's record, timeline and refused writes as JSON"
        >
          Export
        </Button>
      </div>
      {rerun.isError ? <InlineError error={rerun.error} testId="detail.rerun-error" /> : null}
      {fork.isError ? <InlineError error={fork.error} testId="detail.retry-error" /> : null}
      {replayCheck.isError ? (
        <InlineError error={replayCheck.error} testId="detail.check-replay-error" />
      ) : null}
      {replayWords ? (
        <Notice
          tone={replayWords.ok ? 'info' : 'danger'}
          title={replayWords.title}
          testId="detail.check-replay-result"
          action={{ label: 'Dismiss', onClick: () => replayCheck.reset() }}
        >
          {replayWords.detail}
        </Notice>
      ) : null}
      {action.isError && action.variables && action.variables.kind === 'resume' ? (
        <InlineError error={action.error} testId="detail.action-error" />
      ) : null}
      {waiter.isPending || waiter.isSuccess || waiter.isError ? (
        <WaiterResult waiter={waiter} self={self} onDismiss={() => waiter.reset()} />
      ) : null}
      {message ? <MessageDialog kind={message} workflow={workflow} onClose={() => setMessage(null)} /> : null}
      {confirm ? <ConfirmDialog kind={confirm} workflow={workflow} onClose={() => setConfirm(null)} /> : null}
    </div>
  );
}

function WaiterResult({
  waiter,
  self,
  onDismiss,
}: {
  waiter: ReturnType<typeof useWaitForResult>;
  self: HelloResult | undefined;
  onDismiss: () => void;
}) {
  const now = useNow();
  const since = waiter.submittedAt;
  return (
    <div className={styles.waiter} data-testid="detail.waiter" data-state={waiter.status}>
      {waiter.isPending ? (
        <span>
          Waiting for the result on{' '}
          {self?.runtime.kind === 'server' ? 'the studio server' : `${self?.label ?? 'this tab'}’s engine`}…{' '}
          <span className={styles.muted}>{formatDuration(Math.max(0, now - since), { coarse: true })}</span>
        </span>
      ) : waiter.isError ? (
        <InlineError error={waiter.error} testId="detail.waiter-error" />
      ) : (
        <div className={styles.waiterValue}>
          <strong>result()</strong> settled:
          <JsonView value={waiter.data} expandDepth={1} testId="detail.waiter-value" />
        </div>
      )}
      {!waiter.isPending ? (
        <Button size="sm" variant="ghost" onClick={onDismiss}>
          Dismiss
        </Button>
      ) : null}
    </div>
  );
}

/** Names of signals the workflow waits for right now (to prefill the signal dialog). */
function awaitedSignals(workflow: WorkflowDescription): string[] {
  const pending = workflow.pending;
  if (!pending) return [];
  return pending.leaves.filter((leaf) => leaf.kind === 'signal' && !leaf.done).map((leaf) => leaf.name);
}

const dialogText: Record<
  MessageKind,
  { title: string; description: string; nameLabel: string; valueLabel: string; submit: string }
> = {
  signal: {
    title: 'Send a signal',
    description: 'Stored durably at once; the owning engine, wherever it runs, consumes it.',
    nameLabel: 'Signal name',
    valueLabel: 'Payload',
    submit: 'Send signal',
  },
  update: {
    title: 'Send an update',
    description: 'Validated here, applied once by the owner; its handler’s return value comes back.',
    nameLabel: 'Update',
    valueLabel: 'Argument',
    submit: 'Send update',
  },
  query: {
    title: 'Run a query',
    description: 'Reads the workflow’s last committed state; changes nothing.',
    nameLabel: 'Query',
    valueLabel: 'Argument',
    submit: 'Run query',
  },
};

function MessageDialog({
  kind,
  workflow,
  onClose,
}: {
  kind: MessageKind;
  workflow: WorkflowDescription;
  onClose: () => void;
}) {
  const definition = useDefinitions().data?.find(
    (candidate) => candidate.name === workflow.workflowType && candidate.version === workflow.version,
  );
  const known =
    kind === 'signal'
      ? awaitedSignals(workflow)
      : kind === 'update'
        ? (definition?.updates ?? [])
        : (definition?.queries ?? []);
  const [name, setName] = useState(known[0] ?? '');
  const [value, setValue] = useState('');
  const action = useWorkflowAction(workflow.workflowId);
  // What the workflow waited for when the signal was sent: once it consumes the signal it waits for something
  // else, and what the dialog says of the sent signal must not change with it
  const [awaitedAtSend, setAwaitedAtSend] = useState<readonly string[]>([]);
  const parsed = parseJsonInput(value);
  const text = dialogText[kind];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.ok || !name.trim()) return;
    setAwaitedAtSend(known);
    const request: WorkflowAction =
      kind === 'signal'
        ? { kind, name: name.trim(), ...(parsed.empty ? {} : { payload: parsed.value }) }
        : { kind, name: name.trim(), ...(parsed.empty ? {} : { arg: parsed.value }) };
    action.mutate(request);
  };
  return (
    <FormDialog
      formId="message-form"
      onClose={onClose}
      title={text.title}
      description={text.description}
      width={560}
      testId={`detail.${kind}-dialog`}
      cancelLabel={action.isSuccess ? 'Close' : 'Cancel'}
      submit={{
        label: text.submit,
        variant: 'primary',
        disabled: !parsed.ok || !name.trim(),
        busy: action.isPending,
        testId: `detail.${kind}-submit`,
      }}
      onSubmit={submit}
    >
      <InputField
        label={text.nameLabel}
        value={name}
        onValue={(next) => {
          setName(next);
          action.reset();
        }}
        list={`${kind}-names`}
        autoFocus
        spellCheck={false}
        autoComplete="off"
        testId={`detail.${kind}-name`}
      >
        <datalist id={`${kind}-names`}>
          {known.map((option) => (
            <option key={option} value={option} />
          ))}
        </datalist>
        {kind === 'signal' && !action.isSuccess && signalNote(name, known) ? (
          <span className={styles.warn} data-testid="detail.signal-note">
            {signalNote(name, known)}
          </span>
        ) : null}
        {known.length > 0 ? (
          <span className={styles.hint}>
            {kind === 'signal' ? 'It waits for: ' : 'The definition has: '}
            {known.map((option, index) => (
              <span key={option}>
                {index > 0 ? ', ' : ''}
                <button type="button" className={styles.suggestion} onClick={() => setName(option)}>
                  {option}
                </button>
              </span>
            ))}
          </span>
        ) : null}
      </InputField>
      <JsonValueField
        label={text.valueLabel}
        value={value}
        onValue={(next) => {
          setValue(next);
          action.reset();
        }}
        parsed={parsed}
        placeholder={
          kind === 'signal'
            ? '{ "ok": true, "by": "dana" }'
            : kind === 'update'
              ? 'e.g. "12 Analytical Row, London" or { "quantity": 2 }'
              : 'e.g. "en" — most queries take none'
        }
        testId={`detail.${kind}-value`}
      />
      {action.isError ? <InlineError error={action.error} testId={`detail.${kind}-error`} /> : null}
      {action.isSuccess ? (
        <div className={styles.success} role="status" data-testid={`detail.${kind}-result`}>
          {kind === 'signal' ? (
            <span>
              Signal <strong>{action.variables?.kind === 'signal' ? action.variables.name : name}</strong>{' '}
              sent.{' '}
              {signalNote(action.variables?.kind === 'signal' ? action.variables.name : name, awaitedAtSend)
                ? 'It is buffered: the workflow was not waiting for it when it was sent.'
                : 'The workflow was waiting for it: its owning engine consumes it.'}
            </span>
          ) : (
            <>
              <span>
                {kind === 'update' ? 'The update was applied; it returned:' : 'The query returned:'}
              </span>
              <JsonView value={action.data} expandDepth={2} />
            </>
          )}
        </div>
      ) : null}
    </FormDialog>
  );
}

const confirmText: Record<Destructive, { title: string; body: string; submit: string; reason: boolean }> = {
  cancel: {
    title: 'Cancel this workflow?',
    body: 'The workflow is asked to stop: its current operation is interrupted, it may run cleanup code, and it ends cancelled.',
    submit: 'Cancel workflow',
    reason: true,
  },
  terminate: {
    title: 'Terminate this workflow?',
    body: 'It ends terminated at once, whichever engine owns it: no more of its code runs, and no cleanup. The epoch rises, so its owner’s next write is refused. This cannot be undone.',
    submit: 'Terminate',
    reason: true,
  },
  suspend: {
    title: 'Suspend this workflow?',
    body: 'It is parked durably at its last checkpoint and its claim is released; nothing runs until someone resumes it. The epoch rises.',
    submit: 'Suspend',
    reason: false,
  },
};

function ConfirmDialog({
  kind,
  workflow,
  onClose,
}: {
  kind: Destructive;
  workflow: WorkflowDescription;
  onClose: () => void;
}) {
  const action = useWorkflowAction(workflow.workflowId);
  const [reason, setReason] = useState('');
  const text = confirmText[kind];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const request: WorkflowAction =
      kind === 'suspend' ? { kind } : { kind, ...(reason.trim() ? { reason: reason.trim() } : {}) };
    action.mutate(request, { onSuccess: onClose });
  };
  return (
    <FormDialog
      formId="confirm-form"
      onClose={onClose}
      title={text.title}
      width={480}
      testId={`detail.${kind}-dialog`}
      cancelLabel="Keep it"
      submit={{
        label: text.submit,
        variant: kind === 'suspend' ? 'primary' : 'danger',
        busy: action.isPending,
        testId: `detail.${kind}-confirm`,
      }}
      onSubmit={submit}
      noValidate={false}
    >
      <p className={styles.body}>{text.body}</p>
      {text.reason ? (
        <InputField
          label="Reason"
          hint="optional, recorded on the timeline"
          value={reason}
          onValue={setReason}
          testId={`detail.${kind}-reason`}
        />
      ) : null}
      {action.isError ? <InlineError error={action.error} testId={`detail.${kind}-error`} /> : null}
    </FormDialog>
  );
}
