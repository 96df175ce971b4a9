/**
 * The browser soak's checks, from durable evidence only — each workflow's description and timeline as the
 * shared IndexedDB holds them, the writes storage refused, and the ledger the activity bodies wrote to — never
 * from what a tab says about itself. A pure function, so it is the same for every seed.
 *
 * 1. **Every workflow finished with its right result**: `completed`, and the result its input, the signals
 *    sent to it (in send order) and its updates imply (`expectedResult`).
 * 2. **Executions equal the recorded attempts** (the ledger against the timelines, as the cluster suite
 *    does): every ledger row has an `activity-started` entry of that workflow, step and attempt; every
 *    `activity-completed` attempt, and every attempt that failed on purpose, has exactly one row; no attempt
 *    ran twice (a second row of one attempt is a ledger conflict). An attempt that started but was
 *    interrupted (its tab crashed, froze, closed or lost the workflow) may have a row or not.
 * 3. **Zero duplicate commits**: no operation committed twice in a timeline (`countDuplicateCommits`,
 *    bench/timeline-audit.ts: an activity completion, a fired timer, a consumed signal, a completed wait, an
 *    applied update id, the start, the end), and exactly four activity completions per completed workflow.
 * 4. **No epoch held twice**, and the other ownership invariants (`checkOwnershipInvariants`,
 *    src/engine/invariants.ts) over every timeline and every refused write: epochs only rose and each claim
 *    minted a new one, one writer per epoch, no recorded operation ran twice, every workflow finished, no
 *    terminal state overwritten.
 */
import { isDeepStrictEqual } from 'node:util';
import { countDuplicateCommits } from '../../bench/timeline-audit';
import type { FenceRejection, TimelineEntry, WorkflowDescription } from '../../src/engine';
import { checkOwnershipInvariants, type WorkflowEvidence } from '../../src/engine/invariants';
import { entriesOf } from '../fixtures/console';
import { attemptKey, type LedgerRow } from './ledger';
import type { WorkflowPlan } from './schedule';
import { expectedResult, plannedFailure, type SoakInput } from './workflow';

/** The activities of one `soak-order`. */
const stepsPerWorkflow = 4;

export type WorkflowRecord = {
  plan: WorkflowPlan;
  input: SoakInput;
  /** Null when the workflow could not be read (it was never started: a violation). */
  description: WorkflowDescription | null;
  timeline: readonly TimelineEntry[];
};

export type SeedEvidence = {
  workflows: readonly WorkflowRecord[];
  rejections: readonly FenceRejection[];
  ledger: { rows: readonly LedgerRow[]; conflicts: readonly LedgerRow[]; malformed: readonly string[] };
};

export type SeedFigures = {
  workflows: number;
  timelineEntries: number;
  attemptsStarted: number;
  /** Attempts the engine recorded as started whose body never reached the ledger (interrupted first). */
  startedWithoutRow: number;
  ledgerRows: number;
  reruns: number;
  /** Takeovers by reason (`holder-dead`, `expired`, `holder-stopped`, …). */
  takeovers: Record<string, number>;
  refusedWrites: number;
  highestEpoch: number;
};

export type SeedVerdict = { violations: string[]; figures: SeedFigures };

export function verifySeed(evidence: SeedEvidence): SeedVerdict {
  const violations: string[] = [];

  // 1. Every workflow finished with its right result.
  for (const { plan, input, description } of evidence.workflows) {
    if (!description) {
      violations.push(`${plan.id}: not found in the database`);
      continue;
    }
    if (description.status !== 'completed') {
      const error = description.error ? `: ${description.error.name}: ${description.error.message}` : '';
      violations.push(`${plan.id}: ended ${description.status}${error}`);
      continue;
    }
    const expected = expectedResult(input, plan.signals, plan.updates);
    if (!isDeepStrictEqual(description.result, expected))
      violations.push(
        `${plan.id}: returned ${JSON.stringify(description.result)}, expected ${JSON.stringify(expected)}`,
      );
  }

  // 2. The ledger against the timelines.
  for (const conflict of evidence.ledger.conflicts)
    violations.push(
      `${conflict.workflowId}: attempt ${conflict.attempt} of '${conflict.step}' ran twice (the ledger got it again)`,
    );
  for (const body of evidence.ledger.malformed)
    violations.push(`ledger: a malformed row ${JSON.stringify(body)}`);
  const rows = new Map<string, number>();
  for (const row of [...evidence.ledger.rows, ...evidence.ledger.conflicts]) {
    const key = attemptKey(row.workflowId, row.step, row.attempt);
    rows.set(key, (rows.get(key) ?? 0) + 1);
  }
  const started = new Set<string>();
  let attemptsStarted = 0;
  let startedWithoutRow = 0;
  let reruns = 0;
  for (const { plan, timeline } of evidence.workflows) {
    for (const entry of entriesOf(timeline, 'activity-started')) {
      const key = attemptKey(plan.id, entry.detail.name, entry.detail.attempt);
      started.add(key);
      attemptsStarted++;
      if (entry.detail.rerun) reruns++;
      if (!rows.has(key)) startedWithoutRow++;
    }
    for (const entry of entriesOf(timeline, 'activity-completed')) {
      const count = rows.get(attemptKey(plan.id, entry.detail.name, entry.detail.attempt)) ?? 0;
      if (count !== 1)
        violations.push(
          `${plan.id}: '${entry.detail.name}' attempt ${entry.detail.attempt} completed, and the ledger has ${count} executions of it`,
        );
    }
    for (const entry of entriesOf(timeline, 'activity-failed')) {
      if (entry.detail.error.name !== plannedFailure) continue;
      const count = rows.get(attemptKey(plan.id, entry.detail.name, entry.detail.attempt)) ?? 0;
      if (count !== 1)
        violations.push(
          `${plan.id}: '${entry.detail.name}' attempt ${entry.detail.attempt} failed on purpose, and the ledger has ${count} executions of it`,
        );
    }
  }
  for (const key of rows.keys())
    if (!started.has(key)) {
      const [workflowId, step, attempt] = key.split('|');
      violations.push(`${workflowId}: '${step}' attempt ${attempt} ran, but no timeline records it started`);
    }

  // 3. Zero duplicate commits.
  for (const { plan, description, timeline } of evidence.workflows) {
    const expectedSteps =
      description?.status === 'completed'
        ? { kind: 'activity-completed' as const, count: stepsPerWorkflow }
        : undefined;
    const audit = countDuplicateCommits(timeline, expectedSteps);
    for (const finding of audit.findings) violations.push(`${plan.id}: duplicate commit: ${finding}`);
  }

  // 4. No epoch held twice, and the other ownership invariants.
  const ownershipEvidence: WorkflowEvidence[] = evidence.workflows
    .filter((record) => record.description !== null)
    .map((record) => ({
      workflowId: record.plan.id,
      status: record.description!.status,
      timeline: record.timeline,
    }));
  for (const invariant of checkOwnershipInvariants(ownershipEvidence, evidence.rejections))
    if (!invariant.ok) violations.push(...invariant.violations.map((line) => `${invariant.title}: ${line}`));

  const takeovers: Record<string, number> = {};
  let timelineEntries = 0;
  let highestEpoch = 0;
  for (const { timeline } of evidence.workflows) {
    timelineEntries += timeline.length;
    for (const entry of timeline) highestEpoch = Math.max(highestEpoch, entry.epoch);
    for (const entry of entriesOf(timeline, 'claim-taken-over'))
      takeovers[entry.detail.reason] = (takeovers[entry.detail.reason] ?? 0) + 1;
  }
  return {
    violations,
    figures: {
      workflows: evidence.workflows.length,
      timelineEntries,
      attemptsStarted,
      startedWithoutRow,
      ledgerRows: evidence.ledger.rows.length,
      reruns,
      takeovers,
      refusedWrites: evidence.rejections.length,
      highestEpoch,
    },
  };
}
