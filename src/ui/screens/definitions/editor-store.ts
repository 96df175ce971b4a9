/**
 * View state of the definitions editor: the unsaved text of every definition this person edited in this tab,
 * and the drafts (new definitions not saved yet). Switching between definitions keeps each one's edits; a
 * definition nobody edited shows its saved source, live. Saved sources themselves live in the query cache.
 *
 * While there is unsaved work, leaving or reloading the tab asks first (`beforeunload`): edits and drafts
 * live only in this tab's memory.
 */
import { create } from 'zustand';

/** A new definition of this tab, not saved yet. */
export type Draft = { id: string; createdAt: number };

export type EditorStore = {
  /** Edited text by buffer key (see `bufferKey`); absent while the buffer shows its saved source. */
  edits: Readonly<Record<string, string>>;
  drafts: readonly Draft[];
  edit(key: string, text: string): void;
  /** Forgets the edits of a buffer (after a save, or to revert). */
  discard(key: string): void;
  /** Starts a draft with `text`; returns its id. */
  createDraft(text: string): string;
  /** Forgets a draft and its text. */
  removeDraft(id: string): void;
};

/** The key of a buffer: a saved version by name and version, or a draft by id. */
export const bufferKey = {
  saved: (name: string, version: number) => `${name}@${version}`,
  draft: (id: string) => `draft:${id}`,
};

let draftCount = 0;

export const useEditorStore = create<EditorStore>()((set) => ({
  edits: {},
  drafts: [],
  edit: (key, text) => set((state) => ({ edits: { ...state.edits, [key]: text } })),
  discard: (key) =>
    set((state) => {
      if (!(key in state.edits)) return state;
      const edits = { ...state.edits };
      delete edits[key];
      return { edits };
    }),
  createDraft: (text) => {
    draftCount += 1;
    const id = `${Date.now().toString(36)}-${draftCount}`;
    set((state) => ({
      drafts: [...state.drafts, { id, createdAt: Date.now() }],
      edits: { ...state.edits, [bufferKey.draft(id)]: text },
    }));
    return id;
  },
  removeDraft: (id) =>
    set((state) => {
      const edits = { ...state.edits };
      delete edits[bufferKey.draft(id)];
      return { drafts: state.drafts.filter((draft) => draft.id !== id), edits };
    }),
}));

/** Whether this tab holds edits or drafts that are not saved (an edit equal to its saved source is discarded). */
export function hasUnsavedWork(state: Pick<EditorStore, 'edits' | 'drafts'>): boolean {
  return state.drafts.length > 0 || Object.keys(state.edits).length > 0;
}

function askBeforeLeaving(event: BeforeUnloadEvent): void {
  event.preventDefault();
}

if (typeof addEventListener === 'function') {
  let guarded = false;
  useEditorStore.subscribe((state) => {
    const unsaved = hasUnsavedWork(state);
    if (unsaved === guarded) return;
    guarded = unsaved;
    if (unsaved) addEventListener('beforeunload', askBeforeLeaving);
    else removeEventListener('beforeunload', askBeforeLeaving);
  });
}
