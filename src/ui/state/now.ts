/**
 * A shared clock for relative times ("3 s ago"): a zustand store of the current time, moved on by one timer
 * for the whole page. The timer ticks every second only while something watches the clock (a mounted
 * `useNow`), so every label on screen moves in step and an idle page runs no timer.
 */
import { useEffect } from 'react';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';

export type Clock = {
  /** The current time in epoch ms, as of the last tick. */
  now: number;
  /** Starts ticking (if nothing else watches yet); the returned function stops watching. */
  watch(): () => void;
  /** Whether the timer runs. */
  ticking(): boolean;
};

/** Builds a clock store; the studio has one, `clockStore`. */
export function createClockStore(read: () => number = Date.now, intervalMs = 1_000) {
  let watchers = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  return createStore<Clock>()((set) => ({
    now: read(),
    watch: () => {
      if (watchers++ === 0) {
        set({ now: read() });
        timer = setInterval(() => set({ now: read() }), intervalMs);
      }
      let watching = true;
      return () => {
        if (!watching) return;
        watching = false;
        if (--watchers === 0 && timer !== null) {
          clearInterval(timer);
          timer = null;
        }
      };
    },
    ticking: () => timer !== null,
  }));
}

export const clockStore = createClockStore();

/** The current time in epoch ms, updated every second while the calling component is mounted. */
export function useNow(): number {
  useEffect(() => clockStore.getState().watch(), []);
  return useStore(clockStore, (clock) => clock.now);
}
