/**
 * The studio's frame: a sidebar (brand, screens, theme), a top bar (command palette, the engines of the
 * store, a button that adds one — another engine tab, or in server mode one more worker process —, and this
 * tab's engine or, in server mode, the store and the server the page is connected to), page-wide notices,
 * and the current screen. Each region has its own error boundary, so one failing panel never blanks the page.
 */
import type { ReactNode } from 'react';
import { Icon } from '../components/icons';
import { PanelErrorBoundary } from '../components/PanelErrorBoundary';
import { useRoute } from '../routing/router';
import { CommandPalette, useCommandPaletteShortcut } from './CommandPalette';
import { ConnectDialog } from './ConnectDialog';
import { EngineNotices } from './EngineNotices';
import { EnginesOverview, OpenEngineTab } from './EnginesOverview';
import { SideNav } from './SideNav';
import styles from './Shell.module.css';
import { ThemeSwitch } from './ThemeSwitch';
import { ThisEngine } from './ThisEngine';
import { useViewStore } from '../state/view-store';

export type ShellProps = { children: ReactNode };

export function Shell({ children }: ShellProps) {
  useCommandPaletteShortcut();
  const openPalette = useViewStore((state) => state.openPalette);
  const route = useRoute();
  return (
    <div className={styles.shell}>
      <aside className={styles.sidebar}>
        <a className={styles.brand} href="#/workflows" aria-label="Shuttle Studio — workflows">
          <img src="/shuttle.svg" alt="" width={28} height={28} />
          <span className={styles.name}>
            Shuttle <span className={styles.product}>Studio</span>
          </span>
        </a>
        <PanelErrorBoundary name="navigation">
          <SideNav route={route} />
        </PanelErrorBoundary>
        <div className={styles.sidebarFoot}>
          <ThemeSwitch />
        </div>
      </aside>
      <div className={styles.column}>
        <header className={styles.topbar}>
          <button
            type="button"
            className={styles.search}
            onClick={() => openPalette()}
            data-testid="shell.palette-button"
            aria-keyshortcuts="Control+K Meta+K"
          >
            <Icon name="search" />
            <span className={styles.searchText}>Jump to a workflow, engine or action…</span>
            <kbd className={styles.kbd}>{isMac() ? '⌘' : 'Ctrl'} K</kbd>
          </button>
          <div className={styles.topbarRight}>
            <PanelErrorBoundary name="engines overview">
              <EnginesOverview />
            </PanelErrorBoundary>
            <OpenEngineTab />
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
      <PanelErrorBoundary name="command palette">
        <CommandPalette />
      </PanelErrorBoundary>
      <PanelErrorBoundary name="connect dialog">
        <ConnectDialog />
      </PanelErrorBoundary>
    </div>
  );
}

function isMac(): boolean {
  return typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);
}
