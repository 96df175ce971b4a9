/**
 * The chaos drills' view state: which drill runs, its live steps, and the last report of each drill. Kept
 * outside the screen, so a drill keeps running — and its report waits — while the person looks at the
 * workflows it started.
 */
import { create } from 'zustand';
import type { ChaosEnvironment } from '../../data/chaos';
import { runDrill, type DrillId, type DrillReport, type DrillStep } from './drills';

export type DrillState = {
  running: { drillId: DrillId; steps: DrillStep[]; controller: AbortController; startedAt: number } | null;
  reports: Partial<Record<DrillId, DrillReport>>;
  run(drillId: DrillId, env: ChaosEnvironment): Promise<void>;
  cancel(): void;
};

export const useDrillStore = create<DrillState>()((set, get) => ({
  running: null,
  reports: {},
  run: async (drillId, env) => {
    if (get().running) return;
    const controller = new AbortController();
    set({ running: { drillId, steps: [], controller, startedAt: Date.now() } });
    const report = await runDrill(drillId, {
      ...env,
      signal: controller.signal,
      onProgress: (steps) => {
        const running = get().running;
        if (running && running.controller === controller) set({ running: { ...running, steps } });
      },
    });
    set((state) => ({ running: null, reports: { ...state.reports, [drillId]: report } }));
  },
  cancel: () => get().running?.controller.abort(),
}));
