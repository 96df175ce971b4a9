/**
 * A shared clock for relative times ("3 s ago"): one timer for the whole page, ticking every second while
 * anything shows a relative time, so every label on screen moves in step.
 */
import { useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const notify of [...listeners]) notify();
    }, 1_000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** The current time in epoch ms, updated every second. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}
