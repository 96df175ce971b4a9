/**
 * The start dialog: pick a definition (the built-in demos, then the definitions saved in the studio — the
 * newest registered version of each, which is what starting by name runs; child types last), edit its input
 * as JSON (prefilled with the definition's sample, validated as you type, recent inputs one click away),
 * optionally name the workflow and give it a start delay or an execution timeout. What the engine refuses —
 * an existing id, an oversized payload, a bad id — is shown inline in its own words, and the dialog stays
 * open so it can be fixed. An id that last ran as another workflow type (`WorkflowIdReuseError`) is refused
 * with the engine's message and one explicit way on: reuse the id for the chosen type (`idReuse:
 * 'any-type'`, IdReuseRefused.tsx), which keeps the earlier runs. On success the new workflow's page opens.
 *
 * More options also offer an idempotency key, and a signal sent with the start (signal-with-start, which
 * needs an id): see StartExtrasFields.tsx. A start that started nothing — the key returned an earlier
 * start's run, or the workflow was already running and only got the signal — keeps the dialog open and says
 * so, with the way to that workflow.
 *
 * Its second tab, Schedule, creates a schedule of the chosen definition and input instead
 * (`ScheduleForm.tsx`, beside it): a name, a cron previewed live, a time zone, overlap and catch-up. On
 * success the Schedules screen opens on it.
 *
 * The app renders it once; the Workflows, Schedules and Definitions screens and the command palette open it
 * through the view store (`openStartDialog`).
 */
import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import type { DefinitionInfo } from '../../../public/browser';
import { Button } from '../Button';
import { useStudioMode } from '../../data/studio-mode';
import { Dialog } from '../Dialog';
import { InlineError } from '../ErrorNotice';
import { useDialogStart } from '../../data/start-actions';
import { useDefinitions } from '../../data/workflow-queries';
import { routes, type Route } from '../../routing/route';
import { navigate, useRoute } from '../../routing/router';
import { useViewStore, type StartDialogMode } from '../../state/view-store';
import { ScheduleForm } from './ScheduleForm';
import { defaultScheduleFields, type ScheduleFields } from './schedule-form';
import { FormActions, SecondsField, submitOnCtrlEnter, TextField, useDefinitionInput } from './FormFields';
import { JsonInputField } from './JsonInputField';
import { NothingStarted, StartExtrasFields } from './StartExtrasFields';
import { IdReuseRefused } from './IdReuseRefused';
import { idReuseRefusal, withIdReuse } from './id-reuse';
import { noStartExtras, planStart, type StartExtras } from './start-extras';
import { startableDefinitions } from '../definition-catalog';
import { humanTitle, isChildOnly } from '../definition-names';
import styles from './StartDialog.module.css';
import {
  buildStartOptions,
  payloadBytes,
  payloadLimitBytes,
  saveRecentInput,
  type StartFields,
} from './start-form';

function setMode(mode: StartDialogMode): void {
  useViewStore.setState((state) => ({ startDialog: { ...state.startDialog, mode } }));
}

/** Where the studio is, as far as a dialog cares: the screen (and the workflow), not its filters. */
function placeOf(route: Route): string {
  return route.screen === 'workflow' ? `workflow:${route.workflowId}:${route.run ?? ''}` : route.screen;
}

export function StartDialog() {
  const { open, workflowType, mode } = useViewStore((state) => state.startDialog);
  const close = useViewStore((state) => state.closeStartDialog);
  const { server } = useStudioMode();
  // Going elsewhere (Back, a link, a shortcut) closes the dialog: it belongs to the place it was opened on
  const place = placeOf(useRoute());
  const placeWhenOpened = useRef(place);
  useEffect(() => {
    if (!open) placeWhenOpened.current = place;
    else if (place !== placeWhenOpened.current) close();
  }, [open, place, close]);
  return (
    <Dialog
      open={open}
      onClose={close}
      title={mode === 'schedule' ? 'Schedule a workflow' : 'Start a workflow'}
      description={
        mode === 'schedule'
          ? server
            ? 'It starts once per cron slot on whichever worker process gets there first — exactly once per slot, however many run.'
            : 'It starts once per cron slot on whichever tab’s engine gets there first — exactly once per slot, however many tabs are open.'
          : server
            ? 'A worker process of the server claims and runs it; stop that worker and another takes it over.'
            : 'It runs on this tab’s engine; close the tab and another engine takes it over.'
      }
      width={900}
      testId="start.dialog"
    >
      {open ? <StartForm initialType={workflowType} mode={mode} onDone={close} /> : null}
    </Dialog>
  );
}

/** Start now, or on a schedule: two tabs over the same definition and input. */
function ModeTabs({ mode }: { mode: StartDialogMode }) {
  const tabs: { value: StartDialogMode; label: string; hint: string }[] = [
    { value: 'start', label: 'Start now', hint: 'One workflow, now' },
    { value: 'schedule', label: 'Schedule', hint: 'One workflow per cron slot' },
  ];
  return (
    <div className={styles.modes} role="tablist" aria-label="Start now or on a schedule">
      {tabs.map((tab) => (
        <button
          key={tab.value}
          type="button"
          role="tab"
          aria-selected={mode === tab.value}
          className={styles.mode}
          onClick={() => setMode(tab.value)}
          data-testid={`start.mode-${tab.value}`}
          title={tab.hint}
        >
          {tab.label}
        </button>
      ))}
    </div>
  );
}

function sortDefinitions(definitions: readonly DefinitionInfo[]): DefinitionInfo[] {
  return startableDefinitions(definitions).sort((a, b) => Number(isChildOnly(a)) - Number(isChildOnly(b)));
}

function StartForm({
  initialType,
  mode,
  onDone,
}: {
  initialType: string | null;
  mode: StartDialogMode;
  onDone: () => void;
}) {
  const definitions = useDefinitions();
  const sorted = useMemo(() => sortDefinitions(definitions.data ?? []), [definitions.data]);
  const [chosen, setChosen] = useState<string | null>(initialType);
  // The schedule's own fields outlive a change of definition (its input does not: each has its sample).
  const [schedule, setSchedule] = useState<ScheduleFields>(defaultScheduleFields);
  const definition = sorted.find((candidate) => candidate.name === chosen) ?? sorted[0] ?? null;
  if (definitions.isError) return <InlineError error={definitions.error} testId="start.error" />;
  if (!definition) return <p className={styles.loading}>Loading definitions…</p>;
  return (
    <>
      <ModeTabs mode={mode} />
      <div className={styles.layout}>
        <div
          className={styles.definitions}
          role="radiogroup"
          aria-label="Definition"
          data-testid="start.definitions"
        >
          {sorted.map((candidate, index) => {
            const child = isChildOnly(candidate);
            const previous = sorted[index - 1];
            const firstChild = child && !isChildOnly(previous ?? candidate);
            const firstSaved = !candidate.builtIn && !child && (previous?.builtIn ?? true);
            return (
              <div key={`${candidate.name}@${candidate.version}`}>
                {firstChild ? <div className={styles.groupLabel}>Child workflows</div> : null}
                {firstSaved ? <div className={styles.groupLabel}>Your definitions</div> : null}
                <button
                  type="button"
                  role="radio"
                  aria-checked={candidate.name === definition.name}
                  className={styles.definition}
                  onClick={() => setChosen(candidate.name)}
                  data-testid="start.definition"
                  data-definition={candidate.name}
                >
                  <span className={styles.definitionTitle}>
                    {humanTitle(candidate)}
                    <code className={styles.definitionName}>
                      {candidate.name} v{candidate.version}
                    </code>
                  </span>
                  {candidate.description ? (
                    <span className={styles.definitionDescription}>{candidate.description}</span>
                  ) : null}
                </button>
              </div>
            );
          })}
        </div>
        {mode === 'schedule' ? (
          <ScheduleForm
            key={`${definition.name}@${definition.version}`}
            definition={definition}
            fields={schedule}
            onFields={setSchedule}
            onDone={onDone}
          />
        ) : (
          <DefinitionForm
            key={`${definition.name}@${definition.version}`}
            definition={definition}
            onDone={onDone}
          />
        )}
      </div>
    </>
  );
}

function DefinitionForm({ definition, onDone }: { definition: DefinitionInfo; onDone: () => void }) {
  const { sample, input, setInput, recent, parsed } = useDefinitionInput(definition);
  const [fields, setFields] = useState<StartFields>({
    workflowId: '',
    startDelaySeconds: '',
    executionTimeoutSeconds: '',
  });
  const [showOptions, setShowOptions] = useState(false);
  const [extras, setExtras] = useState<StartExtras>(noStartExtras);
  const start = useDialogStart();
  const noteStarted = useViewStore((state) => state.noteStarted);
  const options = buildStartOptions(fields);
  const planned = options.ok ? planStart(options.options, extras) : null;
  // The size preview already says the engine refuses an input over its limit: Start waits until it fits.
  const oversize = parsed.ok && payloadBytes(parsed.value) > payloadLimitBytes;
  const canSubmit = parsed.ok && !oversize && options.ok && planned?.ok === true && !start.isPending;
  const withSignal = extras.withSignal;
  const refusal = start.isError ? idReuseRefusal(start.error) : null;

  /** Starts; `reuseId`: the person asked to reuse a finished id for this type (after a refusal). */
  const submit = (event?: FormEvent, reuseId = false) => {
    event?.preventDefault();
    if (!parsed.ok || oversize || !planned?.ok) return;
    start.mutate(
      {
        workflowType: definition.name,
        ...(parsed.empty ? {} : { input: parsed.value }),
        ...(reuseId ? withIdReuse(planned.plan) : planned.plan),
      },
      {
        onSuccess: (outcome) => {
          if (!parsed.empty) saveRecentInput(definition.name, input);
          // Nothing started: the dialog stays open and says so (NothingStarted).
          if (!outcome.started) return;
          noteStarted({ workflowId: outcome.workflowId, workflowType: definition.name, at: Date.now() });
          onDone();
          navigate(routes.workflow(outcome.workflowId));
        },
      },
    );
  };
  const openExisting = (workflowId: string) => {
    onDone();
    navigate(routes.workflow(workflowId));
  };
  const onKeyDown = submitOnCtrlEnter(submit);
  const setField = (field: keyof StartFields) => (value: string) => {
    start.reset();
    setFields((current) => ({ ...current, [field]: value }));
  };

  return (
    <form className={styles.form} onSubmit={submit} onKeyDown={onKeyDown} noValidate data-testid="start.form">
      {definition.description ? (
        <p className={styles.about} data-testid="start.about">
          {/* The title leads, unless the description already starts with it ("Order fulfilment: …"). */}
          {definition.description.toLowerCase().startsWith(humanTitle(definition).toLowerCase()) ? null : (
            <strong>{humanTitle(definition)}. </strong>
          )}
          {definition.description}
          {definition.updates.length > 0 ? ` Updates: ${definition.updates.join(', ')}.` : ''}
          {definition.queries.length > 0 ? ` Queries: ${definition.queries.join(', ')}.` : ''}
        </p>
      ) : null}
      <JsonInputField
        id="start-input"
        value={input}
        onChange={(value) => {
          setInput(value);
          start.reset();
        }}
        parsed={parsed}
        sample={sample}
        recent={recent}
        testPrefix="start"
        compact={showOptions}
      />

      <div className={styles.row}>
        <TextField
          id="start-id"
          label="Workflow id"
          hint="optional"
          value={fields.workflowId}
          onValue={setField('workflowId')}
          invalid={!options.ok && options.problem.field === 'workflowId'}
          placeholder="a random UUID"
          spellCheck={false}
          autoComplete="off"
          testId="start.workflow-id"
        />
        <button
          type="button"
          className={styles.more}
          aria-expanded={showOptions}
          onClick={() => setShowOptions(!showOptions)}
          data-testid="start.more-options"
        >
          {showOptions ? 'Fewer options' : 'More options…'}
        </button>
      </div>
      {showOptions ? (
        <div className={styles.row}>
          <SecondsField
            id="start-delay"
            label="Start delay"
            value={fields.startDelaySeconds}
            onValue={setField('startDelaySeconds')}
            placeholder="start now"
            testId="start.delay"
          />
          <SecondsField
            id="start-timeout"
            label="Execution timeout"
            value={fields.executionTimeoutSeconds}
            onValue={setField('executionTimeoutSeconds')}
            placeholder="none"
            testId="start.timeout"
          />
        </div>
      ) : null}
      {showOptions ? (
        <StartExtrasFields
          extras={extras}
          onChange={(next) => {
            start.reset();
            setExtras(next);
          }}
          problem={planned && !planned.ok ? planned.problem : null}
        />
      ) : null}
      {!options.ok ? (
        <p className={styles.danger} role="alert" data-testid="start.field-error">
          {options.problem.message}
        </p>
      ) : planned && !planned.ok ? (
        <p className={styles.danger} role="alert" data-testid="start.field-error">
          {planned.problem.message}
        </p>
      ) : null}
      {refusal ? (
        <IdReuseRefused refusal={refusal} onReuse={() => submit(undefined, true)} />
      ) : start.isError ? (
        <InlineError error={start.error} testId="start.error" />
      ) : null}
      {start.isSuccess && !start.data.started ? (
        <NothingStarted outcome={start.data} onOpen={() => openExisting(start.data.workflowId)} />
      ) : null}

      <FormActions verb="start" onCancel={onDone}>
        <Button
          type="submit"
          variant="primary"
          icon="play"
          disabled={!canSubmit}
          busy={start.isPending}
          title={
            oversize ? 'The input is over the engine’s payload limit: make it smaller to start' : undefined
          }
          testId="start.submit"
        >
          {withSignal ? 'Signal with start' : `Start ${humanTitle(definition).toLowerCase()}`}
        </Button>
      </FormActions>
    </form>
  );
}
