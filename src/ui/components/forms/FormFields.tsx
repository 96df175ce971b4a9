/**
 * The pieces both tabs of the start dialog build their forms from (start now, `StartDialog.tsx`; on a
 * schedule, `ScheduleForm.tsx`): a labelled text field, its number-of-seconds variant, the definition's JSON
 * input state, Ctrl+↵ to submit, and the row of actions at the bottom.
 */
import { useMemo, useState, type InputHTMLAttributes, type KeyboardEvent, type ReactNode } from 'react';
import type { DefinitionInfo } from '../../../public/browser';
import { Button } from '../Button';
import { formatJson, loadRecentInputs, parseJsonInput } from './start-form';
import styles from './StartDialog.module.css';

export type TextFieldProps = Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'id' | 'value' | 'onChange' | 'className'
> & {
  id: string;
  /** The label's text, or more (the time zone's shortcuts stand in its label). */
  label: ReactNode;
  /** Faint words after the label (`optional`, `seconds`). */
  hint?: string;
  value: string;
  onValue: (value: string) => void;
  /** Outlined as refused. */
  invalid?: boolean;
  testId?: string;
  /** Below the input: a helper line, a datalist. */
  children?: ReactNode;
};

/** A labelled one-line input of the start dialog. */
export function TextField({
  id,
  label,
  hint,
  value,
  onValue,
  invalid = false,
  testId,
  children,
  ...input
}: TextFieldProps) {
  return (
    <div className={styles.field}>
      <label htmlFor={id} className={styles.label}>
        {label}
        {hint ? (
          <>
            {' '}
            <span className={styles.hint}>{hint}</span>
          </>
        ) : null}
      </label>
      <input
        {...input}
        id={id}
        className={invalid ? `${styles.text} ${styles.invalid}` : styles.text}
        value={value}
        onChange={(event) => onValue(event.target.value)}
        data-testid={testId}
      />
      {children}
    </div>
  );
}

/** A number of seconds (a start delay, an execution timeout). */
export function SecondsField(props: {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  placeholder: string;
  testId?: string;
}) {
  return <TextField {...props} hint="seconds" inputMode="decimal" />;
}

/** The JSON input of a definition: prefilled with its sample, its recent inputs, and what it parses to. */
export function useDefinitionInput(definition: DefinitionInfo) {
  const sample = useMemo(() => formatJson(definition.sampleInput ?? undefined), [definition.sampleInput]);
  const [input, setInput] = useState(sample);
  const [recent] = useState(() => loadRecentInputs(definition.name));
  return { sample, input, setInput, recent, parsed: parseJsonInput(input) };
}

/** A form's key handler: Ctrl+↵ (⌘+↵) submits it from any field. */
export function submitOnCtrlEnter(submit: () => void) {
  return (event: KeyboardEvent) => {
    if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) submit();
  };
}

/** The bottom row: a note (by default the Ctrl+↵ shortcut, `to <verb>`), Cancel, and the submit button. */
export function FormActions({
  verb,
  note,
  onCancel,
  children,
}: {
  verb: string;
  /** Said instead of the shortcut (what still keeps the form from submitting). */
  note?: ReactNode;
  onCancel: () => void;
  /** The submit button. */
  children: ReactNode;
}) {
  return (
    <div className={styles.actions}>
      <span className={styles.muted}>
        {note ?? (
          <>
            <kbd className={styles.kbd}>Ctrl</kbd> <kbd className={styles.kbd}>↵</kbd> to {verb}
          </>
        )}
      </span>
      <Button variant="secondary" onClick={onCancel}>
        Cancel
      </Button>
      {children}
    </div>
  );
}
