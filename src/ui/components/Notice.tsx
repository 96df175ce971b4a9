/** A message block for errors, warnings and hints: a title, an explanation, and at most one action. */
import type { ReactNode } from 'react';
import styles from './Notice.module.css';

export type NoticeProps = {
  tone: 'info' | 'warning' | 'danger';
  title: string;
  children?: ReactNode;
  action?: { label: string; onClick: () => void };
  testId?: string;
};

export function Notice({ tone, title, children, action, testId }: NoticeProps) {
  return (
    <div
      className={`${styles.notice} ${styles[tone]}`}
      role={tone === 'danger' ? 'alert' : 'status'}
      data-testid={testId}
    >
      <div className={styles.text}>
        <strong className={styles.title}>{title}</strong>
        {children ? <div className={styles.body}>{children}</div> : null}
      </div>
      {action ? (
        <button type="button" className={styles.action} onClick={action.onClick}>
          {action.label}
        </button>
      ) : null}
    </div>
  );
}
