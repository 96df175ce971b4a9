/**
 * View state of the studio: what the person selected and just did. Never a copy of engine data — that lives
 * in the query cache (src/ui/data). Filters, layout and theme join this store as their screens arrive.
 */
import { create } from 'zustand';

export type StartedNotice = { workflowId: string; workflowType: string; at: number };

export type ViewState = {
  /** The workflow highlighted in lists (and, later, shown in detail). */
  selectedWorkflowId: string | null;
  /** The workflow this person last started from this tab, for the confirmation line. */
  lastStarted: StartedNotice | null;
  selectWorkflow(workflowId: string | null): void;
  noteStarted(notice: StartedNotice): void;
};

export const useViewStore = create<ViewState>()((set) => ({
  selectedWorkflowId: null,
  lastStarted: null,
  selectWorkflow: (workflowId) => set({ selectedWorkflowId: workflowId }),
  noteStarted: (notice) => set({ lastStarted: notice, selectedWorkflowId: notice.workflowId }),
}));
