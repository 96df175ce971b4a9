/**
 * The studio's frame: brand, navigation, this tab's engine, and page-wide notices around the current screen.
 * Each region has its own error boundary, so one failing panel never blanks the page.
 */
import type { ReactNode } from 'react';
import { PanelErrorBoundary } from '../components/PanelErrorBoundary';
import { EngineNotices } from './EngineNotices';
import styles from './Shell.module.css';
import { ThisEngine } from './ThisEngine';

export type ShellProps = { children: ReactNode };

export function Shell({ children }: ShellProps) {
  return (
    <div className={styles.shell}>
      <header className={styles.header}>
        <div className={styles.brand}>
          <img src="/shuttle.svg" alt="" width={28} height={28} />
          <span className={styles.name}>
            Shuttle <span className={styles.product}>Studio</span>
          </span>
        </div>
        <nav className={styles.nav} aria-label="Screens">
          <a
            className={styles.navItem}
            aria-current="page"
            href="#workflows"
            data-testid="shell.nav-workflows"
          >
            Workflows
          </a>
        </nav>
        <div className={styles.engine}>
          <PanelErrorBoundary name="engine">
            <ThisEngine />
          </PanelErrorBoundary>
        </div>
      </header>
      <div className={styles.notices}>
        <PanelErrorBoundary name="notices">
          <EngineNotices />
        </PanelErrorBoundary>
      </div>
      <main className={styles.main}>{children}</main>
    </div>
  );
}
