/**
 * The dialogs of a workflow's page that ask for something before they act (a signal, an update, a query, a
 * cancel or terminate, an external activity's completion or failure) share their frame and their fields: a
 * form inside a `Dialog` whose footer holds Cancel and the submit button, a labelled one-line input, and a
 * JSON value (optional) that says where it stops parsing.
 */
import type { FormEvent, InputHTMLAttributes, ReactNode } from 'react';
import { Button, type ButtonProps } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import type { JsonParse } from '../../components/forms/start-form';
import styles from './WorkflowActions.module.css';

export function FormDialog({
  formId,
  title,
  description,
  width,
  testId,
  onClose,
  cancelLabel = 'Cancel',
  submit,
  onSubmit,
  noValidate = true,
  children,
}: {
  /** The form's id, which the footer's submit button names. */
  formId: string;
  title: string;
  description?: ReactNode;
  width: number;
  testId: string;
  onClose: () => void;
  cancelLabel?: string;
  submit: {
    label: string;
    variant: ButtonProps['variant'];
    disabled?: boolean;
    busy: boolean;
    testId: string;
  };
  onSubmit: (event: FormEvent) => void;
  noValidate?: boolean;
  children: ReactNode;
}) {
  return (
    <Dialog
      open
      onClose={onClose}
      title={title}
      description={description}
      width={width}
      testId={testId}
      footer={
        <>
          <Button onClick={onClose}>{cancelLabel}</Button>
          <Button
            type="submit"
            form={formId}
            variant={submit.variant}
            disabled={submit.disabled}
            busy={submit.busy}
            testId={submit.testId}
          >
            {submit.label}
          </Button>
        </>
      }
    >
      <form id={formId} className={styles.form} onSubmit={onSubmit} noValidate={noValidate}>
        {children}
      </form>
    </Dialog>
  );
}

/** A field's label, with faint words after it (`optional`, `JSON, optional`). */
function FieldLabel({ label, hint }: { label: string; hint?: string }) {
  return (
    <span className={styles.label}>
      {label}
      {hint ? (
        <>
          {' '}
          <span className={styles.muted}>{hint}</span>
        </>
      ) : null}
    </span>
  );
}

/** A labelled one-line input; `children` follow it inside the label (a datalist, a note). */
export function InputField({
  label,
  hint,
  value,
  onValue,
  testId,
  children,
  ...input
}: Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'className'> & {
  label: string;
  hint?: string;
  value: string;
  onValue: (value: string) => void;
  testId: string;
  children?: ReactNode;
}) {
  return (
    <label className={styles.field}>
      <FieldLabel label={label} hint={hint} />
      <input
        {...input}
        className={styles.input}
        value={value}
        onChange={(event) => onValue(event.target.value)}
        data-testid={testId}
      />
      {children}
    </label>
  );
}

/** An optional JSON value: marked invalid, with the line and column where it stops parsing, until it parses. */
export function JsonValueField({
  label,
  value,
  onValue,
  parsed,
  placeholder,
  autoFocus,
  testId,
}: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  parsed: JsonParse;
  placeholder: string;
  autoFocus?: boolean;
  testId: string;
}) {
  return (
    <label className={styles.field}>
      <FieldLabel label={label} hint="JSON, optional" />
      <textarea
        className={`${styles.textarea} ${parsed.ok ? '' : styles.invalid}`}
        value={value}
        onChange={(event) => onValue(event.target.value)}
        rows={5}
        spellCheck={false}
        autoFocus={autoFocus}
        placeholder={placeholder}
        data-testid={testId}
      />
      {!parsed.ok ? (
        <span className={styles.danger} role="alert">
          Invalid JSON{parsed.line !== null ? ` at line ${parsed.line}, column ${parsed.column}` : ''}:{' '}
          {parsed.message}
        </span>
      ) : null}
    </label>
  );
}
