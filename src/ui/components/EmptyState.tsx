/**
 * What a panel shows when it has nothing to show: says why in a sentence, and offers the one next step that
 * would fill it.
 */
import type { ReactNode } from 'react';
import styles from './EmptyState.module.css';
import { Icon, type IconName } from './icons';

export type EmptyStateProps = {
  icon?: IconName;
  title: string;
  children?: ReactNode;
  action?: ReactNode;
  testId?: string;
  compact?: boolean;
};

export function EmptyState({ icon, title, children, action, testId, compact }: EmptyStateProps) {
  return (
    <div className={`${styles.empty} ${compact ? styles.compact : ''}`} data-testid={testId}>
      {icon ? (
        <span className={styles.icon}>
          <Icon name={icon} size={20} />
        </span>
      ) : null}
      <strong className={styles.title}>{title}</strong>
      {children ? <div className={styles.body}>{children}</div> : null}
      {action ? <div className={styles.action}>{action}</div> : null}
    </div>
  );
}
