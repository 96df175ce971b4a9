/**
 * Counters and gauges of one engine (`engine.metrics()`). Workflow ids are never labels: cardinality stays
 * fixed however many workflows run.
 */

export type ClaimOutcome = 'acquired' | 'takeover' | 'lost_race' | 'deposed' | 'backoff_skipped';

export type EngineMetrics = {
  claimAttempts: Record<ClaimOutcome, number>;
  claimsHeld: number;
  renewals: number;
  renewalFailures: number;
  claimsLost: number;
  wakesDiscarded: number;
  writesFencedOut: number;
  resultWaitersPending: number;
  resultWaitersSettled: number;
  workflowsStarted: number;
  workflowsFinished: number;
  operationsCommitted: number;
  activitiesRun: number;
  /** Activity attempts that had to wait for a slot of their concurrency limit group (`activityLimits`). */
  activityWaits: number;
  storageTransactions: number;
  groupedTransactions: number;
  groupedBatches: number;
  /** Workflows this engine started for a schedule's slot (or trigger). */
  scheduleStarts: number;
  /** Schedule writes this engine lost to another engine that took the same slot first. */
  scheduleSlotConflicts: number;
  /** Runs deleted by purge (explicit or retention). */
  runsPurged: number;
  /** Runs that ended by `ctx.continueAsNew` here (each started the next run of its workflow). */
  runsContinued: number;
};

export class MetricsCounters {
  claimAttempts: Record<ClaimOutcome, number> = {
    acquired: 0,
    takeover: 0,
    lost_race: 0,
    deposed: 0,
    backoff_skipped: 0,
  };
  renewals = 0;
  renewalFailures = 0;
  claimsLost = 0;
  wakesDiscarded = 0;
  writesFencedOut = 0;
  resultWaitersSettled = 0;
  workflowsStarted = 0;
  workflowsFinished = 0;
  operationsCommitted = 0;
  activitiesRun = 0;
  activityWaits = 0;
  scheduleStarts = 0;
  scheduleSlotConflicts = 0;
  /** Runs deleted by purge (explicit or retention). */
  runsPurged = 0;
  runsContinued = 0;
}
