/**
 * View state of the studio: what the person selected, opened and just did. Never a copy of engine data —
 * that lives in the query cache (src/ui/data). Filters live in the URL (routing/), the theme in its own
 * store (theme.ts).
 */
import { create } from 'zustand';

export type StartedNotice = { workflowId: string; workflowType: string; at: number };

/** What the start dialog does: start one workflow now, or create a schedule that starts one per cron slot. */
export type StartDialogMode = 'start' | 'schedule';

export type ViewState = {
  /** The workflow highlighted in lists. */
  selectedWorkflowId: string | null;
  /** The workflow this person last started from this tab, for the confirmation line. */
  lastStarted: StartedNotice | null;
  paletteOpen: boolean;
  /** The start dialog: closed, or open with a preselected definition, on its Start or Schedule tab. */
  startDialog: { open: boolean; workflowType: string | null; mode: StartDialogMode };
  /** The selected operation group of the detail screen (timeline ↔ event list). */
  selectedGroupKey: string | null;
  selectWorkflow(workflowId: string | null): void;
  noteStarted(notice: StartedNotice): void;
  openPalette(): void;
  closePalette(): void;
  openStartDialog(workflowType?: string | null, mode?: StartDialogMode): void;
  closeStartDialog(): void;
  selectGroup(groupKey: string | null): void;
};

export const useViewStore = create<ViewState>()((set) => ({
  selectedWorkflowId: null,
  lastStarted: null,
  paletteOpen: false,
  startDialog: { open: false, workflowType: null, mode: 'start' },
  selectedGroupKey: null,
  selectWorkflow: (workflowId) => set({ selectedWorkflowId: workflowId }),
  noteStarted: (notice) => set({ lastStarted: notice, selectedWorkflowId: notice.workflowId }),
  openPalette: () => set({ paletteOpen: true }),
  closePalette: () => set({ paletteOpen: false }),
  openStartDialog: (workflowType = null, mode = 'start') =>
    set({ startDialog: { open: true, workflowType, mode }, paletteOpen: false }),
  closeStartDialog: () => set((state) => ({ startDialog: { ...state.startDialog, open: false } })),
  selectGroup: (groupKey) => set({ selectedGroupKey: groupKey }),
}));
