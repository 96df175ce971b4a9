/**
 * The theme: light, dark, or whatever the system prefers. The choice is view state in a zustand store,
 * persisted by zustand's `persist` middleware under the localStorage key `shuttle.theme` — as the bare word
 * (`light`, `dark` or `system`), so a choice made by any build of the studio is read by every other. With
 * nothing stored (or storage unavailable) the choice is "system", which follows `prefers-color-scheme`
 * live. `installTheme` applies the theme as `data-theme` on <html>, where the design tokens
 * (styles/global.css) pick it up, and keeps every tab of the studio on the same choice.
 */
import { useStore } from 'zustand';
import { persist, type PersistStorage } from 'zustand/middleware';
import { createStore } from 'zustand/vanilla';

export type ThemeChoice = 'light' | 'dark' | 'system';
export type AppliedTheme = 'light' | 'dark';

/** The localStorage key of the choice. */
export const themeStorageKey = 'shuttle.theme';

export function isThemeChoice(value: unknown): value is ThemeChoice {
  return value === 'light' || value === 'dark' || value === 'system';
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

type PersistedTheme = Pick<ThemeState, 'choice'>;

/**
 * The persist middleware's storage: the choice alone, as the bare word, in `storage` (localStorage by
 * default). Anything else stored under the key reads as no choice; a storage that throws (private mode, no
 * DOM) reads as empty and keeps writes for this page only.
 */
export function choiceStorage(storage: () => Storage = () => localStorage): PersistStorage<PersistedTheme> {
  return {
    getItem: (name) => {
      try {
        const stored = storage().getItem(name);
        return isThemeChoice(stored) ? { state: { choice: stored }, version: 0 } : null;
      } catch {
        return null;
      }
    },
    setItem: (name, value) => {
      try {
        storage().setItem(name, value.state.choice);
      } catch {
        // private mode: the choice lasts for this page only
      }
    },
    removeItem: (name) => {
      try {
        storage().removeItem(name);
      } catch {
        // nothing stored to remove
      }
    },
  };
}

/** Builds a theme store over `storage`; the studio has one, `themeStore`. */
export function createThemeStore(
  storage: PersistStorage<PersistedTheme> = choiceStorage(),
  prefersDark: () => boolean = systemPrefersDark,
) {
  return createStore<ThemeState>()(
    persist(
      (set, get) => ({
        choice: 'system',
        applied: resolveTheme('system', prefersDark()),
        choose: (choice) => set({ choice, applied: resolveTheme(choice, prefersDark()) }),
        toggle: () => get().choose(get().applied === 'dark' ? 'light' : 'dark'),
      }),
      {
        name: themeStorageKey,
        storage,
        partialize: (state) => ({ choice: state.choice }),
        // What is stored decides the choice; nothing (or something unreadable) stored means "system".
        merge: (persisted, current) => {
          const stored = (persisted as Partial<PersistedTheme> | undefined)?.choice;
          const choice = isThemeChoice(stored) ? stored : 'system';
          return { ...current, choice, applied: resolveTheme(choice, prefersDark()) };
        },
      },
    ),
  );
}

export type ThemeStore = ReturnType<typeof createThemeStore>;

/** The studio's theme store (hydrated from localStorage as it is created). */
export const themeStore: ThemeStore = createThemeStore();

/** A slice of the theme state; re-renders when it changes. */
export function useTheme<T>(selector: (state: ThemeState) => T): T {
  return useStore(themeStore, selector);
}

function apply(applied: AppliedTheme): void {
  document.documentElement.dataset.theme = applied;
  document
    .querySelector('meta[name="theme-color"]')
    ?.setAttribute('content', applied === 'dark' ? '#0d1117' : '#1f2a44');
}

/** Applies the stored choice before the first render, follows the system setting, and syncs other tabs. */
export function installTheme(): void {
  apply(themeStore.getState().applied);
  themeStore.subscribe((state, previous) => {
    if (state.applied !== previous.applied) apply(state.applied);
  });
  if (typeof matchMedia === 'function')
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      const { choice, choose } = themeStore.getState();
      if (choice === 'system') choose('system');
    });
  addEventListener('storage', (event) => {
    if (event.key === themeStorageKey) void themeStore.persist.rehydrate();
  });
}
