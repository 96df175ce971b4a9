/** The page's copy of the demo's side-effect log (executions.ts), as a tiny store React can subscribe to. */
import { useSyncExternalStore } from 'react';
import { listenToExecutions, type Execution } from './executions';

let executions: readonly Execution[] = [];
const listeners = new Set<() => void>();

/** Starts collecting the runs every tab announces (call once, before anything starts). */
export function startExecutionLog(): () => void {
  return listenToExecutions((execution) => {
    executions = [...executions, execution];
    for (const listener of listeners) listener();
  });
}

/** Every run announced since this page loaded, oldest first. */
export function useExecutions(): readonly Execution[] {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => executions,
  );
}
