/**
 * A run's lifecycle and what drives it. Every state change of a run goes through `reduceRunPhase`:
 * loading → idle ⇄ busy → finished | dropped (final). Events arrive in the run's mailbox and are handled one
 * at a time; `wakeKindOf` says which of them wake a parked run (and so pass the wake guard first).
 */
import type { WakeKind } from '../events';
import type { Frontier, WorkflowRecord } from '../records';
import type { WorkflowStatus } from '../vocabulary';

/** Why a run stopped without finishing (the engine decides from this whether to load it again). */
export type DropReason =
  | 'deposed'
  | 'lost-race'
  | 'storage-error'
  | 'claim-lost'
  | 'wake-refused'
  | 'corrupt'
  | 'shutdown'
  | 'evicted'
  | 'rotated';

export type RunEvent =
  | { type: 'resync'; wake: WakeKind | null }
  | {
      type: 'activity-settled';
      pos: number;
      member: number;
      attempt: number;
      startedAt: number;
      outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    }
  | { type: 'timer'; key: string }
  | { type: 'signals' }
  | { type: 'completions' }
  | { type: 'updates' }
  | { type: 'cancel' }
  | { type: 'child-settled'; childId: string; record: WorkflowRecord };

export type RunPhase =
  | { tag: 'loading' }
  | { tag: 'idle'; parkedAt: number; parkedEpoch: number }
  | { tag: 'busy' }
  | { tag: 'finished'; status: WorkflowStatus }
  | { tag: 'dropped'; reason: DropReason };

export type PhaseAction =
  | { type: 'turn-started' }
  | { type: 'parked'; at: number; epoch: number }
  | { type: 'finished'; status: WorkflowStatus }
  | { type: 'dropped'; reason: DropReason };

export function reduceRunPhase(phase: RunPhase, action: PhaseAction): RunPhase {
  if (phase.tag === 'finished' || phase.tag === 'dropped') return phase; // final
  switch (action.type) {
    case 'turn-started':
      return { tag: 'busy' };
    case 'parked':
      return { tag: 'idle', parkedAt: action.at, parkedEpoch: action.epoch };
    case 'finished':
      return { tag: 'finished', status: action.status };
    case 'dropped':
      return { tag: 'dropped', reason: action.reason };
  }
}

/** Which wake kind an event is, for the wake guard (null: not a wake, e.g. an activity finishing its step). */
export function wakeKindOf(event: RunEvent, frontier: Frontier | null): WakeKind | null {
  switch (event.type) {
    case 'resync':
      return event.wake;
    case 'activity-settled':
      return frontier && frontier.leaves.length > 1 ? 'async-activity' : null;
    case 'timer': {
      const leaf = frontier?.leaves.find((candidate) => candidate.timerKey === event.key);
      return leaf?.kind === 'until' ? 'wait-condition' : leaf?.kind === 'signal' ? 'signal' : 'sleep';
    }
    case 'signals':
      return 'signal';
    case 'completions':
      return 'async-activity';
    case 'updates':
      return 'update';
    case 'cancel':
      return 'cancel-request';
    case 'child-settled':
      return 'child-completion';
  }
}
