import { describe, expect, it } from 'vitest';
import { choiceStorage, createThemeStore, themeStorageKey } from './theme';

/** A localStorage stand-in over a map; `broken` makes every call throw, like storage in private mode. */
function memoryStorage(initial: Record<string, string> = {}, broken = false): Storage {
  const items = new Map(Object.entries(initial));
  const guard = () => {
    if (broken) throw new Error('SecurityError');
  };
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    key: (index) => [...items.keys()][index] ?? null,
    getItem: (key) => (guard(), items.get(key) ?? null),
    setItem: (key, value) => (guard(), void items.set(key, value)),
    removeItem: (key) => (guard(), void items.delete(key)),
  };
}

describe('theme', () => {
  it('opens with the choice stored under shuttle.theme as a bare word, as every build stores it', () => {
    const storage = memoryStorage({ [themeStorageKey]: 'dark' });
    const store = createThemeStore(
      choiceStorage(() => storage),
      () => false,
    );
    expect(store.getState()).toMatchObject({ choice: 'dark', applied: 'dark' });
  });

  it('follows the system preference when nothing, or nothing readable, is stored', () => {
    const nothingReadable: Record<string, string>[] = [
      {},
      { [themeStorageKey]: '{"state":{"choice":"dark"}}' },
    ];
    for (const initial of nothingReadable) {
      const storage = memoryStorage(initial);
      const store = createThemeStore(
        choiceStorage(() => storage),
        () => true,
      );
      expect(store.getState()).toMatchObject({ choice: 'system', applied: 'dark' });
    }
  });

  it('stores a new choice as the bare word, and toggles from what shows', () => {
    const storage = memoryStorage();
    const store = createThemeStore(
      choiceStorage(() => storage),
      () => true,
    );
    store.getState().toggle();
    expect(store.getState()).toMatchObject({ choice: 'light', applied: 'light' });
    expect(storage.getItem(themeStorageKey)).toBe('light');
    store.getState().choose('system');
    expect(storage.getItem(themeStorageKey)).toBe('system');
    expect(store.getState().applied).toBe('dark');
  });

  it('picks up a choice another tab stored when it rehydrates', async () => {
    const storage = memoryStorage({ [themeStorageKey]: 'light' });
    const store = createThemeStore(
      choiceStorage(() => storage),
      () => false,
    );
    storage.setItem(themeStorageKey, 'dark');
    await store.persist.rehydrate();
    expect(store.getState()).toMatchObject({ choice: 'dark', applied: 'dark' });
  });

  it('keeps a choice for the page when storage refuses to be used', () => {
    const store = createThemeStore(
      choiceStorage(() => memoryStorage({}, true)),
      () => false,
    );
    expect(store.getState().choice).toBe('system');
    store.getState().choose('dark');
    expect(store.getState()).toMatchObject({ choice: 'dark', applied: 'dark' });
  });
});
