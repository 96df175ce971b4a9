/**
 * Typed engine events, delivered to `engine.subscribe(listener)`. The studio's live panels consume this
 * stream; nothing parses logs. Names are past tense. Warnings also go to the `onWarning` option.
 */
import type { Json } from './codec';
import type { SerializedError } from './errors';
import type { WorkflowStatus } from './vocabulary';

export type WakeKind =
  | 'sleep'
  | 'wait-condition'
  | 'signal'
  | 'update'
  | 'async-activity'
  | 'child-completion'
  | 'queued-start'
  | 'cancel-request';

export type ResultSettledVia = 'local' | 'change-feed' | 'poll';

export type EngineEvent =
  | { type: 'workflow.started'; workflowId: string; workflowType: string; status: WorkflowStatus }
  | { type: 'workflow.resumed'; workflowId: string }
  | { type: 'workflow.suspended'; workflowId: string }
  | { type: 'workflow.completed'; workflowId: string }
  | { type: 'workflow.failed'; workflowId: string; error: SerializedError }
  | { type: 'workflow.cancelled'; workflowId: string }
  | { type: 'workflow.terminated'; workflowId: string }
  | { type: 'workflow.timed-out'; workflowId: string }
  /** A run called `ctx.continueAsNew`: run `run` of the workflow started in its place. */
  | { type: 'workflow.continued-as-new'; workflowId: string; run: number }
  | { type: 'workflow.corrupt'; workflowId: string; key: string; message: string }
  | { type: 'operation.committed'; workflowId: string; position: number; kinds: string[] }
  | { type: 'activity.started'; workflowId: string; name: string; attempt: number }
  | { type: 'activity.heartbeat'; workflowId: string; name: string; attempt: number; details?: Json }
  /** An attempt must wait for a slot of its concurrency limit group (`activityLimits`) before it runs. */
  | { type: 'activity.waiting'; workflowId: string; name: string; group: string; attempt: number }
  | { type: 'claim.acquired'; workflowId: string; epoch: number; how: 'start' | 'acquire' | 'resume' }
  | { type: 'claim.renewed'; count: number }
  | { type: 'claim.released'; workflowId: string; epoch: number }
  | { type: 'claim.taken-over'; workflowId: string; epoch: number; fromEngineId: string; fromEpoch: number }
  | { type: 'claim.lost'; workflowId: string; epoch: number; reason: string }
  | { type: 'wake.discarded'; workflowId: string; wakeKind: WakeKind; reason: string }
  | { type: 'write.fenced-out'; workflowId: string; heldEpoch: number; currentEpoch: number | null }
  | { type: 'lease.acquired'; epoch: number }
  | { type: 'lease.lost'; epoch: number }
  | { type: 'result-waiter.registered'; workflowId: string }
  | { type: 'result-waiter.settled'; workflowId: string; via: ResultSettledVia; latencyMs: number }
  | { type: 'engine.shutdown'; claimsReleased: number };

export type EngineEventType = EngineEvent['type'];

export type WarningCode =
  'WorkflowClaimLostWarning' | 'WorkflowWakeDiscardedWarning' | 'WorkflowCorruptWarning' | 'StorageWarning';

/** A warning: something went wrong that the engine handled, but a person should know. */
export type EngineWarning = { name: WarningCode; message: string; workflowId?: string };

export type EngineListener = (event: EngineEvent) => void;

/** A tiny synchronous event hub. A throwing listener never breaks the engine. */
export class EventHub {
  readonly #listeners = new Set<EngineListener>();

  subscribe(listener: EngineListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: EngineEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own business
      }
    }
  }
}
