/**
 * The inspection domain of the wire contract: what the engines of a store hold and have done — claims and
 * their holders, refused writes, result waiters, metrics, the store's size — and taking one workflow over.
 */
import type {
  ClaimHolder,
  ClaimInfo,
  EngineMetrics,
  FenceRejection,
  ReclaimOutcome,
  ResultWaiterInfo,
} from '../engine';
import type { StorageUsage } from '../storage/types';
import { method, type Empty } from './declare';

export const inspectionMethods = {
  /** How much room the store takes (see `StorageUsage`). */
  storageUsage: method<Empty, StorageUsage>({}),
  claims: method<Empty, ClaimInfo[]>({}),
  /**
   * Who holds the workflow's claim and whether that holder is live now (its session, and the liveness
   * oracle: a Web Lock in tabs, an advisory lock on servers); null when nobody holds it (finished,
   * suspended, pending, or between owners). `WorkflowNotFoundError` for an id that has no workflow.
   */
  claimHolder: method<{ workflowId: string }, ClaimHolder | null>({ workflowId: 'string' }),
  /**
   * Takes one workflow over on this engine now when, and only when, it has no holder or its holder is
   * expired or dead; a live holder is left alone. The engine's outcome comes back as data (`held-live` with
   * the holder, `taken-over` with the new epoch, …; see `ReclaimOutcome`). Refused with
   * `ObserverCannotClaimError` by an engine that claims nothing (a viewer tab, the studio server's observer).
   */
  reclaim: method<{ workflowId: string }, ReclaimOutcome>({ workflowId: 'string' }),
  fenceRejections: method<{ workflowId?: string }, FenceRejection[]>({ workflowId: 'string?' }),
  resultWaiters: method<Empty, ResultWaiterInfo[]>({}),
  metrics: method<Empty, EngineMetrics>({}),
  ownedWorkflows: method<Empty, string[]>({}),
} as const;
