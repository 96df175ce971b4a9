/** An id in monospace, shortened when asked, with a button that copies the whole id. */
import { useEffect, useState } from 'react';
import styles from './CopyableId.module.css';

export type CopyableIdProps = {
  id: string;
  /** Show only the first this many characters (the whole id is in the tooltip and the clipboard). */
  visibleChars?: number;
  label: string;
  testId?: string;
};

export function CopyableId({ id, visibleChars, label, testId }: CopyableIdProps) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1_200);
    return () => clearTimeout(timer);
  }, [copied]);
  const shown = visibleChars !== undefined && id.length > visibleChars ? `${id.slice(0, visibleChars)}…` : id;
  return (
    <span className={styles.wrap}>
      <code className={styles.id} title={id} data-testid={testId} data-full-id={id}>
        {shown}
      </code>
      <button
        type="button"
        className={styles.copy}
        aria-label={`Copy ${label}`}
        title={copied ? 'Copied' : `Copy ${label}`}
        onClick={() => {
          void navigator.clipboard?.writeText(id).then(
            () => setCopied(true),
            () => undefined,
          );
        }}
      >
        <svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true">
          {copied ? (
            <path
              d="M3 8.5l3 3 7-7"
              fill="none"
              stroke="currentColor"
              strokeWidth="1.8"
              strokeLinecap="round"
            />
          ) : (
            <>
              <rect
                x="5.5"
                y="5.5"
                width="8"
                height="8"
                rx="1.5"
                fill="none"
                stroke="currentColor"
                strokeWidth="1.4"
              />
              <path
                d="M3.5 10.5h-.5a1 1 0 0 1-1-1V3a1 1 0 0 1 1-1h6.5a1 1 0 0 1 1 1v.5"
                fill="none"
                stroke="currentColor"
                strokeWidth="1.4"
              />
            </>
          )}
        </svg>
      </button>
    </span>
  );
}
