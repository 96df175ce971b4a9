/**
 * The top of every screen: its title (the `h1` the screen's section is labelled by), a one-line summary of
 * what it shows, and the screen's actions on the right.
 */
import type { ReactNode } from 'react';
import styles from './ScreenHeader.module.css';

export type ScreenHeaderProps = {
  /** The `h1`'s id, for the screen's `aria-labelledby`. */
  titleId: string;
  title: string;
  summary: ReactNode;
  summaryTestId?: string;
  /** The screen's actions (buttons, figures), aligned to the right. */
  children?: ReactNode;
};

export function ScreenHeader({ titleId, title, summary, summaryTestId, children }: ScreenHeaderProps) {
  return (
    <div className={styles.header}>
      <div>
        <h1 id={titleId} className={styles.title}>
          {title}
        </h1>
        <p className={styles.summary} data-testid={summaryTestId}>
          {summary}
        </p>
      </div>
      {children ? <div className={styles.actions}>{children}</div> : null}
    </div>
  );
}
