/**
 * What happened to this tab's engine that a person should hear about, kept from the pushed events and
 * warnings of the worker: the workflows it lost (a claim taken over or rotated away, a write refused by the
 * epoch fence), and the latest 20 warnings (another tab on a different build, storage trouble). A zustand
 * store derived from pushes, not a copy of stored data; every change replaces the changed part, so a
 * selector re-renders only what changed.
 */
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { HostWarning, PushMessage } from '../../public/browser';

export type LostWorkflow = {
  workflowId: string;
  at: number;
  /** The epoch this engine held. */
  epoch: number;
  /** `claim-lost`: the claim was taken or rotated away; `fenced-out`: a write was refused. */
  how: 'claim-lost' | 'fenced-out';
  reason: string;
  /** The epoch that superseded ours, when known. */
  currentEpoch: number | null;
};

export type RecentWarning = HostWarning & { at: number; id: number };

export type Snapshot = { lost: ReadonlyMap<string, LostWorkflow>; warnings: readonly RecentWarning[] };

const maxWarnings = 20;
let nextWarningId = 1;

/** Written only by the functions below. */
const engineActivityStore = createStore<Snapshot>()(() => ({ lost: new Map(), warnings: [] }));

function publish(next: Snapshot): void {
  engineActivityStore.setState(next, true);
}

/** Folds one pushed message into the store. Returns whether anything changed. */
export function recordPush(message: PushMessage, now: number = Date.now()): boolean {
  const snapshot = engineActivityStore.getState();
  if (message.kind === 'warning') {
    const warning: RecentWarning = { ...message.warning, at: now, id: nextWarningId++ };
    publish({ ...snapshot, warnings: [warning, ...snapshot.warnings].slice(0, maxWarnings) });
    return true;
  }
  if (message.kind !== 'events') return false;
  let lost: Map<string, LostWorkflow> | null = null;
  for (const event of message.events) {
    if (event.type === 'claim.lost') {
      lost ??= new Map(snapshot.lost);
      const previous = lost.get(event.workflowId);
      lost.set(event.workflowId, {
        workflowId: event.workflowId,
        at: now,
        epoch: event.epoch,
        how: previous?.how === 'fenced-out' ? 'fenced-out' : 'claim-lost',
        reason: event.reason,
        currentEpoch: previous?.currentEpoch ?? null,
      });
    } else if (event.type === 'write.fenced-out') {
      lost ??= new Map(snapshot.lost);
      lost.set(event.workflowId, {
        workflowId: event.workflowId,
        at: now,
        epoch: event.heldEpoch,
        how: 'fenced-out',
        reason: `its write was refused: the workflow is at epoch ${event.currentEpoch ?? 'unknown'} now`,
        currentEpoch: event.currentEpoch,
      });
    } else if (
      (event.type === 'claim.acquired' || event.type === 'claim.taken-over') &&
      (lost ?? snapshot.lost).has(event.workflowId)
    ) {
      // This engine owns it again: the old loss is history, not news.
      lost ??= new Map(snapshot.lost);
      lost.delete(event.workflowId);
    }
  }
  if (!lost) return false;
  publish({ ...snapshot, lost });
  return true;
}

/** Forgets a warning the person dismissed. */
export function dismissWarning(id: number): void {
  const snapshot = engineActivityStore.getState();
  publish({ ...snapshot, warnings: snapshot.warnings.filter((warning) => warning.id !== id) });
}

/** Clears everything (tests, and a restarted engine). */
export function resetEngineActivity(): void {
  publish({ lost: new Map(), warnings: [] });
}

/** What the store holds now (for code outside React). */
export function engineActivitySnapshot(): Snapshot {
  return engineActivityStore.getState();
}

/** How this tab's engine lost `workflowId`, or null if it did not (since this page loaded). */
export function useLostWorkflow(workflowId: string): LostWorkflow | null {
  return useStore(engineActivityStore, (snapshot) => snapshot.lost.get(workflowId) ?? null);
}

/** The workflows this tab's engine lost. */
export function useLostWorkflows(): ReadonlyMap<string, LostWorkflow> {
  return useStore(engineActivityStore, (snapshot) => snapshot.lost);
}

/** Recent warnings of this tab's engine worker, newest first. */
export function useRecentWarnings(): readonly RecentWarning[] {
  return useStore(engineActivityStore, (snapshot) => snapshot.warnings);
}
