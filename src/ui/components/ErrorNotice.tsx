/**
 * An error from the worker, explained: what happened (the engine's own message, as text), and what to do —
 * with a reload button when reloading is the remedy and a retry when the caller offers one.
 */
import { Notice } from './Notice';
import styles from './ErrorNotice.module.css';
import { explainError } from './error-advice';

export type ErrorNoticeProps = {
  error: unknown;
  /** Overrides the explained title, e.g. "Could not load the workflows". */
  title?: string;
  onRetry?: () => void;
  testId?: string;
};

export function ErrorNotice({ error, title, onRetry, testId }: ErrorNoticeProps) {
  const explained = explainError(error);
  const action = explained.reload
    ? { label: 'Reload tab', onClick: () => location.reload() }
    : onRetry
      ? { label: 'Retry', onClick: onRetry }
      : undefined;
  return (
    <Notice tone="danger" title={title ?? explained.title} testId={testId} {...(action ? { action } : {})}>
      <span data-error-name={explained.name}>
        {explained.name}: {explained.message}
      </span>
      {explained.advice ? <span> {explained.advice}</span> : null}
    </Notice>
  );
}

/** An error as one inline line (forms, action results). */
export function InlineError({ error, testId }: { error: unknown; testId?: string }) {
  const explained = explainError(error);
  return (
    <div role="alert" className={styles.inline} data-testid={testId} data-error-name={explained.name}>
      <svg className={styles.icon} viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
        <circle cx="8" cy="8" r="7" fill="currentColor" />
        <path d="M8 4.2v4.6" stroke="var(--color-surface)" strokeWidth="1.7" strokeLinecap="round" />
        <circle cx="8" cy="11.4" r="1" fill="var(--color-surface)" />
      </svg>
      <div>
        <strong className={styles.title}>{explained.title}</strong>
        <span className={styles.message}>{explained.message}</span>
        {explained.advice ? <span className={styles.advice}>{explained.advice}</span> : null}
      </div>
    </div>
  );
}
