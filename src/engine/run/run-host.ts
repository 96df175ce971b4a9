/**
 * What a workflow run needs from its engine: the narrow collaborators, passed explicitly (never an engine
 * "internals" bag), and the requests a run makes of it (children to create, its end, its stop).
 */
import type { Condition, Operation as StorageOperation, Storage } from '../../storage/types';
import type { ActivityLimits } from '../activity-limits';
import type { Clock } from '../clock';
import type { SerializedError, StackMapper } from '../errors';
import type { EngineEvent, EngineWarning, WakeKind } from '../events';
import type { MetricsCounters } from '../metrics';
import type { FencedWriter } from '../ownership/fenced-write';
import type { WorkflowRecord } from '../records';
import type { Tracing } from '../tracing';
import type {
  ActivityInterceptor,
  AnyWorkflowDefinition,
  ParentClosePolicy,
  WorkflowInterceptor,
} from '../workflow';
import type { DropReason } from './run-phase';
import type { WorkflowRun } from './workflow-run';

export type ChildRequest = {
  parent: WorkflowRecord;
  pos: number;
  member: number;
  childId: string;
  workflowType: string;
  input: unknown;
  closePolicy: ParentClosePolicy;
};

export type ChildPlan =
  | {
      ok: true;
      childId: string;
      conditions: Condition[];
      operations: StorageOperation[];
      afterCommit: () => void;
    }
  | { ok: false; error: SerializedError };

export type RunHost = {
  readonly engineId: string;
  readonly storage: Storage;
  readonly writer: FencedWriter;
  readonly clock: Clock;
  readonly random: () => number;
  readonly maxPayloadBytes: number;
  /** The host's stack mapper (`EngineOptions.mapStack`), applied to failures of workflow code it records. */
  readonly mapStack: StackMapper | undefined;
  /** `interceptors.activities`: around every activity attempt, outermost first. */
  readonly activityInterceptors: readonly ActivityInterceptor[];
  /** `interceptors.workflows`: around each workflow's execution, signals, updates and queries. */
  readonly workflowInterceptors: readonly WorkflowInterceptor[];
  /** `activityLimits`: the slots an attempt of a limited group takes before its function runs. */
  readonly activityLimits: ActivityLimits;
  /** Spans (tracing.ts), parented on the workflow's stored trace context. */
  readonly tracing: Tracing;
  /** backgroundTasks 'manual': no clock timers; activity timeouts are checked by runMaintenance. */
  readonly manualTimers: boolean;
  /** Operations the terminal commit adds to let the workflow's claim go (nothing outside workflow-lease). */
  releaseOperations(workflowId: string): StorageOperation[];
  readonly metrics: MetricsCounters;
  emit(event: EngineEvent): void;
  warn(warning: EngineWarning): void;
  /** The epoch this engine holds for the workflow (0 when the mode has no per-workflow epochs). */
  heldEpoch(workflowId: string): number | undefined;
  /**
   * The run found the workflow at another epoch than the one this engine holds: the claim was taken over
   * between the claim and the load. Forgets the claim (with its `claim.lost` event); never drives it.
   */
  claimLost(workflowId: string, heldEpoch: number, reason: string): void;
  /** Wake guard (docs/ownership.md): true to proceed. */
  guardWake(workflowId: string, kind: WakeKind, parkedEpoch: number): Promise<boolean>;
  prepareChild(request: ChildRequest): Promise<ChildPlan>;
  /** The registered definition of `type` (`version`: exactly that one; otherwise the newest). */
  definition(type: string, version?: number): AnyWorkflowDefinition | undefined;
  /** A durable timer due at `dueAt` was armed or found by this run. */
  timerArmed(dueAt: number): void;
  /** A commit of this run landed (what it waits on may have changed). */
  runCommitted(run: WorkflowRun): void;
  /** After the terminal commit landed. */
  runFinished(run: WorkflowRun, record: WorkflowRecord): void;
  /** The run stopped without finishing; the engine decides whether to reload it. */
  runDropped(run: WorkflowRun, reason: DropReason, error?: unknown): void;
};
