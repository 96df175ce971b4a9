/**
 * The theme: light, dark, or whatever the system prefers. The choice is view state (zustand), persisted in
 * localStorage so every tab of the studio opens the same way, and applied as `data-theme` on <html>, where
 * the design tokens (styles/global.css) pick it up. "system" follows the OS setting live.
 */
import { create } from 'zustand';

export type ThemeChoice = 'light' | 'dark' | 'system';
export type AppliedTheme = 'light' | 'dark';

const storageKey = 'shuttle.theme';

function readChoice(): ThemeChoice {
  try {
    const stored = localStorage.getItem(storageKey);
    return stored === 'light' || stored === 'dark' || stored === 'system' ? stored : 'system';
  } catch {
    return 'system';
  }
}

function systemPrefersDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
}

/** The theme a choice shows right now. */
export function resolveTheme(choice: ThemeChoice, prefersDark: boolean): AppliedTheme {
  return choice === 'system' ? (prefersDark ? 'dark' : 'light') : choice;
}

export type ThemeState = {
  choice: ThemeChoice;
  applied: AppliedTheme;
  choose(choice: ThemeChoice): void;
  /** Light ↔ dark (from "system", to the opposite of what shows). */
  toggle(): void;
};

function apply(applied: AppliedTheme): void {
  document.documentElement.dataset.theme = applied;
  document
    .querySelector('meta[name="theme-color"]')
    ?.setAttribute('content', applied === 'dark' ? '#0d1117' : '#1f2a44');
}

export const useThemeStore = create<ThemeState>()((set, get) => ({
  choice: 'system',
  applied: 'light',
  choose: (choice) => {
    try {
      localStorage.setItem(storageKey, choice);
    } catch {
      // private mode: the choice lasts for this page only
    }
    const applied = resolveTheme(choice, systemPrefersDark());
    apply(applied);
    set({ choice, applied });
  },
  toggle: () => get().choose(get().applied === 'dark' ? 'light' : 'dark'),
}));

/** Applies the stored choice before the first render, follows the system setting, and syncs other tabs. */
export function installTheme(): void {
  const choice = readChoice();
  const applied = resolveTheme(choice, systemPrefersDark());
  apply(applied);
  useThemeStore.setState({ choice, applied });
  if (typeof matchMedia === 'function')
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      const { choice: current } = useThemeStore.getState();
      if (current === 'system') useThemeStore.getState().choose('system');
    });
  addEventListener('storage', (event) => {
    if (event.key === storageKey) useThemeStore.getState().choose(readChoice());
  });
}
