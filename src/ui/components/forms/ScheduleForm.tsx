/**
 * The start dialog's Schedule tab: the chosen definition and its JSON input (as for a start), a name, a
 * cron with presets and a live preview (the cron in English and its next five fire times, from the engine's
 * own parser, or its reason for refusing the cron — as you type, before anything is written), a time zone
 * (UTC by default; the browser's one click away), overlap and catch-up with what each does, and the delay and
 * timeout each run gets. The engine's refusal of the whole spec is shown at the field it names; a schedule
 * of that name with another spec can be replaced on purpose. On success the Schedules screen opens on it.
 */
import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import type { ScheduleCatchUp, ScheduleOverlap } from '../../../public';
import type { DefinitionInfo } from '../../../public/browser';
import { Button } from '../Button';
import { InlineError } from '../ErrorNotice';
import { useCreateSchedule, useSchedulePreview } from '../../data/schedule-queries';
import { routes } from '../../routing/route';
import { navigate } from '../../routing/router';
import { useNow } from '../../state/now';
import { humanTitle } from '../definition-names';
import { FormActions, SecondsField, submitOnCtrlEnter, TextField, useDefinitionInput } from './FormFields';
import { JsonInputField } from './JsonInputField';
import { saveRecentInput } from './start-form';
import startStyles from './StartDialog.module.css';
import {
  buildScheduleRequest,
  cronHint,
  cronPresets,
  fieldOfError,
  type ScheduleField,
  type ScheduleFields,
} from './schedule-form';
import {
  browserTimeZone,
  catchUpText,
  describeCron,
  formatInZone,
  overlapText,
  timeZoneChoices,
} from '../schedule-view';
import { formatRelative } from '../time-format';
import styles from './ScheduleForm.module.css';

export type ScheduleFormProps = {
  definition: DefinitionInfo;
  fields: ScheduleFields;
  onFields: (fields: ScheduleFields) => void;
  onDone: () => void;
};

/** The text typed, once it has stayed the same for `ms` (the preview does not ask at every keystroke). */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function ScheduleForm({ definition, fields, onFields, onDone }: ScheduleFormProps) {
  const { sample, input, setInput, recent, parsed } = useDefinitionInput(definition);
  const [showOptions, setShowOptions] = useState(
    fields.startDelaySeconds !== '' || fields.executionTimeoutSeconds !== '',
  );
  const create = useCreateSchedule();
  const built = parsed.ok ? buildScheduleRequest(fields, definition.name, parsed) : null;
  const cron = useSettled(fields.cron.trim(), 250);
  const timezone = useSettled(fields.timezone.trim() || 'UTC', 250);
  const preview = useSchedulePreview(cron, timezone, cron.length > 0);
  const previewRefused =
    preview.data && !preview.data.ok && cron === fields.cron.trim() ? preview.data : null;
  const refusedField = create.isError ? fieldOfError(create.error) : null;
  const exists = create.isError && create.error.name === 'ScheduleExistsError';
  const canSubmit = parsed.ok && built?.ok === true && !previewRefused && !create.isPending;
  const zones = useMemo(() => timeZoneChoices(), []);
  const browserZone = useMemo(() => browserTimeZone(), []);

  const set = <K extends keyof ScheduleFields>(field: K, value: ScheduleFields[K]) => {
    create.reset();
    onFields({ ...fields, [field]: value });
  };
  const submit = (event?: FormEvent, replace = false) => {
    event?.preventDefault();
    if (!parsed.ok || !built?.ok) return;
    create.mutate(
      { ...built.request, ...(replace ? { replace: true } : {}) },
      {
        onSuccess: (schedule) => {
          if (!parsed.empty) saveRecentInput(definition.name, input);
          onDone();
          navigate(routes.schedules(schedule.name));
        },
      },
    );
  };
  const onKeyDown = submitOnCtrlEnter(submit);
  /** The engine's refusal, where it belongs. */
  const refusal = (field: ScheduleField): ReactNode =>
    refusedField === field ? <InlineError error={create.error} testId={`schedule.error-${field}`} /> : null;
  const missing = built && !built.ok && (fields.name !== '' || fields.cron !== '') ? built : null;

  return (
    <form
      className={startStyles.form}
      onSubmit={submit}
      onKeyDown={onKeyDown}
      noValidate
      data-testid="schedule.form"
    >
      <div className={styles.grid}>
        <TextField
          id="schedule-name"
          label="Name"
          value={fields.name}
          onValue={(value) => set('name', value)}
          invalid={refusedField === 'name'}
          placeholder={`e.g. ${definition.name}-nightly`}
          spellCheck={false}
          autoComplete="off"
          aria-invalid={refusedField === 'name'}
          aria-describedby="schedule-name-helper"
          testId="schedule.name"
        >
          <span id="schedule-name-helper" className={styles.helper}>
            Each run’s id:{' '}
            <code>
              {fields.name.trim() || 'name'}@
              {preview.data?.ok && preview.data.nextFireAt[0] !== undefined
                ? new Date(preview.data.nextFireAt[0]).toISOString()
                : 'slot time'}
            </code>
          </span>
        </TextField>
        <TextField
          id="schedule-timezone"
          label={
            <>
              Time zone
              {browserZone !== 'UTC' ? (
                <span className={styles.zoneShortcuts}>
                  {[browserZone, 'UTC'].map((zone) => (
                    <button
                      key={zone}
                      type="button"
                      className={styles.linkButton}
                      onClick={() => set('timezone', zone)}
                      disabled={fields.timezone === zone}
                      data-testid={zone === 'UTC' ? 'schedule.zone-utc' : 'schedule.zone-browser'}
                    >
                      {zone === 'UTC' ? 'UTC' : `${zone} (yours)`}
                    </button>
                  ))}
                </span>
              ) : null}
            </>
          }
          value={fields.timezone}
          onValue={(value) => set('timezone', value)}
          invalid={refusedField === 'timezone' || previewRefused?.field === 'timezone'}
          list="schedule-zones"
          spellCheck={false}
          autoComplete="off"
          testId="schedule.timezone"
        >
          <datalist id="schedule-zones">
            {zones.map((zone) => (
              <option key={zone} value={zone} />
            ))}
          </datalist>
        </TextField>
      </div>
      {refusal('name')}
      {refusal('timezone')}

      <div className={startStyles.field}>
        <div className={startStyles.labelRow}>
          <label htmlFor="schedule-cron" className={startStyles.label}>
            Cron <span className={startStyles.hint}>{cronHint}</span>
          </label>
        </div>
        <div className={styles.cronRow}>
          <input
            id="schedule-cron"
            className={`${startStyles.text} ${styles.cron} ${previewRefused?.field === 'cron' || refusedField === 'cron' ? startStyles.invalid : ''}`}
            value={fields.cron}
            onChange={(event) => set('cron', event.target.value)}
            placeholder="0 9 * * 1-5"
            spellCheck={false}
            autoComplete="off"
            aria-describedby="schedule-preview"
            aria-invalid={previewRefused?.field === 'cron'}
            data-testid="schedule.cron"
          />
          <div className={styles.presets} role="group" aria-label="Cron presets">
            {cronPresets.map((preset) => (
              <button
                key={preset.cron}
                type="button"
                className={styles.preset}
                aria-pressed={fields.cron.trim() === preset.cron}
                onClick={() => set('cron', preset.cron)}
                title={preset.cron}
              >
                {preset.label}
              </button>
            ))}
          </div>
        </div>
        <Preview cron={fields.cron.trim()} settledCron={cron} timezone={timezone} preview={preview} />
      </div>
      {refusal('cron')}

      <div className={styles.grid}>
        <PolicySelect
          id="schedule-overlap"
          label="Overlap"
          value={fields.overlap}
          options={overlapText}
          onChange={(value) => set('overlap', value as ScheduleOverlap)}
          testId="schedule.overlap"
        />
        <PolicySelect
          id="schedule-catch-up"
          label="Catch-up"
          value={fields.catchUp}
          options={catchUpText}
          onChange={(value) => set('catchUp', value as ScheduleCatchUp)}
          testId="schedule.catch-up"
        />
      </div>
      {refusal('overlap')}
      {refusal('catchUp')}

      <JsonInputField
        id="schedule-input"
        value={input}
        onChange={(value) => {
          setInput(value);
          create.reset();
        }}
        parsed={parsed}
        sample={sample}
        recent={recent}
        testPrefix="schedule"
        rows={6}
      />

      <div className={startStyles.row}>
        <button
          type="button"
          className={startStyles.more}
          aria-expanded={showOptions}
          onClick={() => setShowOptions(!showOptions)}
        >
          {showOptions ? 'Fewer options' : 'Delay and timeout of each run…'}
        </button>
      </div>
      {showOptions ? (
        <div className={startStyles.row}>
          <SecondsField
            id="schedule-delay"
            label="Start delay"
            value={fields.startDelaySeconds}
            onValue={(value) => set('startDelaySeconds', value)}
            placeholder="at the slot"
          />
          <SecondsField
            id="schedule-timeout"
            label="Execution timeout"
            value={fields.executionTimeoutSeconds}
            onValue={(value) => set('executionTimeoutSeconds', value)}
            placeholder="none"
          />
        </div>
      ) : null}
      {missing && missing.field === 'options' ? (
        <p className={startStyles.danger} role="alert" data-testid="schedule.field-error">
          {missing.message}
        </p>
      ) : null}
      {refusal('options')}
      {create.isError && refusedField === null ? (
        <InlineError error={create.error} testId="schedule.error" />
      ) : null}
      {exists ? (
        <div className={styles.replace} data-testid="schedule.exists">
          <span>Replace it? Its history and paused state stay; its slots start afresh from now.</span>
          <Button
            size="sm"
            variant="danger"
            onClick={() => submit(undefined, true)}
            testId="schedule.replace"
          >
            Replace {fields.name}
          </Button>
        </div>
      ) : null}

      <FormActions
        verb="create"
        note={missing && missing.field !== 'options' ? missing.message : undefined}
        onCancel={onDone}
      >
        <Button
          type="submit"
          variant="primary"
          icon="schedules"
          disabled={!canSubmit}
          busy={create.isPending}
          testId="schedule.submit"
        >
          Schedule {humanTitle(definition).toLowerCase()}
        </Button>
      </FormActions>
    </form>
  );
}

/** The cron in English and its next fire times, or the engine's reason for refusing it. */
function Preview({
  cron,
  settledCron,
  timezone,
  preview,
}: {
  cron: string;
  settledCron: string;
  timezone: string;
  preview: ReturnType<typeof useSchedulePreview>;
}) {
  const now = useNow();
  const english = useMemo(() => (cron ? describeCron(cron) : null), [cron]);
  if (!cron)
    return (
      <div id="schedule-preview" className={styles.preview} data-testid="schedule.preview" data-state="empty">
        <span className={startStyles.muted}>The next fire times show here as you type.</span>
      </div>
    );
  const data = preview.data;
  const current = settledCron === cron;
  if (preview.isError)
    return (
      <div id="schedule-preview" className={styles.preview} data-state="error">
        <InlineError error={preview.error} />
      </div>
    );
  if (data && !data.ok && current)
    return (
      <div
        id="schedule-preview"
        className={`${styles.preview} ${styles.previewBad}`}
        data-testid="schedule.preview"
        data-state="refused"
      >
        <span className={startStyles.danger} role="alert" data-testid="schedule.cron-error">
          {data.message}
        </span>
      </div>
    );
  return (
    <div
      id="schedule-preview"
      className={styles.preview}
      data-testid="schedule.preview"
      data-state={data?.ok && current ? 'ok' : 'checking'}
      aria-live="polite"
    >
      <div className={styles.english} data-testid="schedule.english">
        {english ?? cron}
        <span className={startStyles.muted}> · in {timezone}</span>
      </div>
      {data?.ok ? (
        <ol className={`${styles.times} ${current ? '' : styles.stale}`}>
          {data.nextFireAt.map((at) => (
            <li key={at} data-testid="schedule.preview-time" data-at={at}>
              <span className={styles.time}>{formatInZone(at, timezone, now)}</span>
              <span className={startStyles.muted}>{formatRelative(at, now)}</span>
            </li>
          ))}
        </ol>
      ) : (
        <span className={startStyles.muted}>Checking…</span>
      )}
    </div>
  );
}

function PolicySelect({
  id,
  label,
  value,
  options,
  onChange,
  testId,
}: {
  id: string;
  label: string;
  value: string;
  options: Record<string, { label: string; explain: string }>;
  onChange: (value: string) => void;
  testId: string;
}) {
  return (
    <div className={startStyles.field}>
      <label htmlFor={id} className={startStyles.label}>
        {label}
      </label>
      <select
        id={id}
        className={`${startStyles.text} ${styles.select}`}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={`${id}-explain`}
        data-testid={testId}
      >
        {Object.entries(options).map(([key, option]) => (
          <option key={key} value={key}>
            {option.label}
          </option>
        ))}
      </select>
      <span id={`${id}-explain`} className={styles.explain}>
        {options[value]?.explain}
      </span>
    </div>
  );
}
