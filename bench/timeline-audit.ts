/**
 * Reading a workflow's durable timeline for the benchmarks: which operations were committed more than once
 * (`duplicateCommits`, which must be 0), and when a new owner committed its first step after a takeover
 * (the end point of a handoff latency). Pure functions over `TimelineEntry[]`, used by the browser bench
 * worker and by the studio runner alike.
 *
 * An operation is identified by what the engine notes when it commits it: the position (and member of an
 * `all`/`race`) of an activity completion, a fired sleep / signal / wait timer, a consumed signal, a
 * completed wait or child; the update id of an applied update; and the run's one start and one terminal
 * entry. A retry timer (`timer-fired` of kind `activity`) may legitimately fire once per attempt at one
 * position, so it is not counted.
 */
import { isTerminal, type TimelineEntry } from '../src/engine';

/** The outcome of auditing one workflow's timeline. */
export type DuplicateAudit = {
  /** Operations committed more than once, counting each extra commit (two commits of one tick = 1). */
  duplicates: number;
  /** A short description of each duplicated operation, for details.json. */
  findings: string[];
};

function position(entry: TimelineEntry): string {
  const detail = entry.detail as { pos?: number; member?: number };
  return `${String(detail.pos)}/${String(detail.member ?? '-')}`;
}

/** The identity of the operation `entry` commits, or null for entries that may legitimately repeat. */
export function operationIdentity(entry: TimelineEntry): string | null {
  switch (entry.kind) {
    case 'activity-completed':
    case 'signal-consumed':
    case 'wait-completed':
    case 'child-completed':
      return `${entry.kind}@${position(entry)}`;
    case 'timer-fired':
      return entry.detail.kind === 'activity' ? null : `timer-fired@${position(entry)}`;
    case 'update-applied':
      return `update-applied#${String(entry.detail.updateId)}`;
    case 'started':
      return 'started';
    default:
      return isTerminal(entry.kind) ? 'terminal' : null;
  }
}

/**
 * Counts operations committed twice or more in one workflow run's timeline.
 *
 * @param expectedSteps When given (e.g. a completed countdown's `from`), also counts committed sleeps beyond
 *   that number as duplicates: a tick fired twice at different positions would otherwise go unseen.
 */
export function countDuplicateCommits(
  entries: readonly TimelineEntry[],
  expectedSteps?: { kind: 'timer-fired' | 'activity-completed'; count: number },
): DuplicateAudit {
  const seen = new Map<string, number>();
  for (const entry of entries) {
    const identity = operationIdentity(entry);
    if (identity !== null) seen.set(identity, (seen.get(identity) ?? 0) + 1);
  }
  const findings: string[] = [];
  let duplicates = 0;
  for (const [identity, count] of seen)
    if (count > 1) {
      duplicates += count - 1;
      findings.push(`${identity} committed ${count} times`);
    }
  if (expectedSteps) {
    const committed = entries.filter(
      (entry) => entry.kind === expectedSteps.kind && operationIdentity(entry) !== null,
    ).length;
    const extra = committed - expectedSteps.count;
    const alreadyCounted = [...seen]
      .filter(([identity]) => identity.startsWith(`${expectedSteps.kind}@`))
      .reduce((sum, [, count]) => sum + Math.max(0, count - 1), 0);
    if (extra > alreadyCounted) {
      duplicates += extra - alreadyCounted;
      findings.push(`${committed} ${expectedSteps.kind} entries for ${expectedSteps.count} steps`);
    }
  }
  return { duplicates, findings };
}

/** A takeover found in a timeline: the claim entry of the new owner and its first committed step after it. */
export type Takeover = {
  /** The new owner's engine id. */
  engineId: string;
  /** `claim-acquired` (the old owner released it) or `claim-taken-over` (it expired or died). */
  claim: TimelineEntry;
  /** The first non-claim entry the new owner wrote after `claim`, or null if it has written none yet. */
  firstStep: TimelineEntry | null;
};

/**
 * Finds the first takeover of a workflow from `previousOwner`: the first claim entry by another engine after
 * `previousOwner`'s own entries began, and the first step that engine committed after it.
 */
export function findTakeover(entries: readonly TimelineEntry[], previousOwner: string): Takeover | null {
  const ordered = [...entries].sort((a, b) => a.seq - b.seq);
  const claimIndex = ordered.findIndex(
    (entry) =>
      entry.engineId !== previousOwner &&
      (entry.kind === 'claim-acquired' || entry.kind === 'claim-taken-over') &&
      ordered.some((earlier) => earlier.seq < entry.seq && earlier.engineId === previousOwner),
  );
  if (claimIndex < 0) return null;
  const claim = ordered[claimIndex]!;
  const firstStep =
    ordered
      .slice(claimIndex + 1)
      .find((entry) => entry.engineId === claim.engineId && !entry.kind.startsWith('claim-')) ?? null;
  return { engineId: claim.engineId, claim, firstStep };
}
