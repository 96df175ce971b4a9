/**
 * The five ownership invariants, written once: the studio's chaos drills check them when a drill ends, and
 * the randomised simulation checks them at the end of every schedule. They are computed from what is durable
 * — each workflow's timeline and status, and the writes storage refused — never from what the engines say
 * about themselves. A pure module (no storage, no engine state), so the studio imports it at runtime:
 *
 * - **epochs only rose**: along a timeline, the epoch entries were written under never went down; each new
 *   claim (acquire, takeover, rotation) minted a higher epoch than the one before; and every refused write
 *   held an epoch older than the current one.
 * - **one writer per epoch**: all entries written under one epoch came from one engine (the fence works).
 * - **no recorded operation ran twice**: each activity attempt started once; no attempt started after the
 *   activity completed; an activity, a timer, a signal wait, a child start and a message to another
 *   workflow each resolved once.
 * - **every workflow finished**: each ended in a terminal status.
 * - **no terminal state was overwritten**: one terminal entry per workflow, nothing written after it, and
 *   the stored status is the one it recorded.
 */
import type { FenceRejection, TimelineEntry } from './records';
import { isTerminal, type WorkflowStatus } from './vocabulary';

export type WorkflowEvidence = {
  workflowId: string;
  status: WorkflowStatus;
  timeline: readonly TimelineEntry[];
};

export type InvariantName =
  | 'epochs-only-rose'
  | 'one-writer-per-epoch'
  | 'no-operation-ran-twice'
  | 'every-workflow-finished'
  | 'no-terminal-overwritten';

export type InvariantResult = {
  name: InvariantName;
  title: string;
  ok: boolean;
  /** One line: what was checked, or the first violation. */
  summary: string;
  violations: string[];
};

const titles: Record<InvariantName, string> = {
  'epochs-only-rose': 'Epochs only rose',
  'one-writer-per-epoch': 'One writer per epoch',
  'no-operation-ran-twice': 'No recorded operation ran twice',
  'every-workflow-finished': 'Every workflow finished',
  'no-terminal-overwritten': 'No terminal state was overwritten',
};

/** The epoch a timeline entry minted: a claim's, a takeover's, or a rotation's (terminate, suspend). */
function mintedEpoch(entry: TimelineEntry): number | null {
  switch (entry.kind) {
    case 'claim-acquired':
      return entry.detail.epoch;
    case 'claim-taken-over':
      return entry.detail.toEpoch;
    default:
      return 'newEpoch' in entry.detail ? (entry.detail.newEpoch ?? null) : null;
  }
}

/** The operation position and member an entry is about (`?.0` when none). */
function leafOf(entry: TimelineEntry): string {
  if (!('pos' in entry.detail)) return '?.0';
  return `${entry.detail.pos ?? '?'}.${entry.detail.member ?? 0}`;
}

function short(id: string): string {
  return id.length > 24 ? `${id.slice(0, 24)}…` : id;
}

function epochsOnlyRose(
  evidence: readonly WorkflowEvidence[],
  rejections: readonly FenceRejection[],
): string[] {
  const violations: string[] = [];
  for (const { workflowId, timeline } of evidence) {
    let highest = 0;
    let lastMinted = 0;
    for (const entry of timeline) {
      if (entry.epoch > 0 && entry.epoch < highest)
        violations.push(
          `${short(workflowId)}: entry #${entry.seq} (${entry.kind}) written at epoch ${entry.epoch} after epoch ${highest}`,
        );
      highest = Math.max(highest, entry.epoch);
      const minted = mintedEpoch(entry);
      if (minted !== null) {
        if (minted <= lastMinted)
          violations.push(
            `${short(workflowId)}: entry #${entry.seq} (${entry.kind}) minted epoch ${minted}, not above ${lastMinted}`,
          );
        lastMinted = Math.max(lastMinted, minted);
      }
    }
  }
  for (const rejection of rejections)
    if (rejection.currentEpoch !== null && rejection.heldEpoch >= rejection.currentEpoch)
      violations.push(
        `${short(rejection.workflowId)}: a write at epoch ${rejection.heldEpoch} was refused although the current epoch is ${rejection.currentEpoch}`,
      );
  return violations;
}

function oneWriterPerEpoch(evidence: readonly WorkflowEvidence[]): string[] {
  const violations: string[] = [];
  for (const { workflowId, timeline } of evidence) {
    const writers = new Map<number, string>();
    for (const entry of timeline) {
      if (entry.epoch <= 0 || entry.kind === 'started' || entry.kind === 'scheduled') continue;
      const writer = writers.get(entry.epoch);
      if (writer === undefined) writers.set(entry.epoch, entry.engineId);
      else if (writer !== entry.engineId)
        violations.push(
          `${short(workflowId)}: epoch ${entry.epoch} has writes from ${writer.slice(0, 8)} and ${entry.engineId.slice(0, 8)} (entry #${entry.seq}, ${entry.kind})`,
        );
    }
  }
  return violations;
}

function noOperationRanTwice(evidence: readonly WorkflowEvidence[]): string[] {
  const violations: string[] = [];
  for (const { workflowId, timeline } of evidence) {
    const started = new Set<string>();
    const completed = new Set<string>();
    const once = new Map<string, number>();
    const countOnce = (key: string, what: string, seq: number) => {
      const previous = once.get(key);
      if (previous !== undefined)
        violations.push(`${short(workflowId)}: ${what} recorded twice (entries #${previous} and #${seq})`);
      else once.set(key, seq);
    };
    for (const entry of timeline) {
      const leaf = leafOf(entry);
      const name = 'name' in entry.detail ? `'${entry.detail.name}'` : `#${leaf}`;
      switch (entry.kind) {
        case 'activity-started': {
          const attempt = entry.detail.attempt;
          const key = `${leaf}@${attempt}`;
          if (started.has(key))
            violations.push(`${short(workflowId)}: activity ${name} attempt ${attempt} started twice`);
          if (completed.has(leaf))
            violations.push(
              `${short(workflowId)}: activity ${name} started again (attempt ${attempt}) after it completed`,
            );
          started.add(key);
          break;
        }
        case 'activity-completed':
          countOnce(`done:${leaf}`, `completion of activity ${name}`, entry.seq);
          completed.add(leaf);
          break;
        case 'timer-fired':
          if (entry.detail.kind !== 'activity') countOnce(`timer:${leaf}`, `timer at #${leaf}`, entry.seq);
          break;
        case 'signal-consumed':
          countOnce(`signal:${leaf}`, `signal ${name} at #${leaf}`, entry.seq);
          break;
        case 'child-started':
          countOnce(`child:${leaf}`, `child start at #${leaf}`, entry.seq);
          break;
        case 'message-sent':
          countOnce(`message:${leaf}`, `message to ${entry.detail.to} at #${leaf}`, entry.seq);
          break;
        case 'update-applied':
          countOnce(`update:${entry.detail.updateId}`, `update ${name}`, entry.seq);
          break;
      }
    }
  }
  return violations;
}

function everyWorkflowFinished(evidence: readonly WorkflowEvidence[]): string[] {
  return evidence
    .filter(({ status }) => !isTerminal(status))
    .map(({ workflowId, status }) => `${short(workflowId)} is still ${status}`);
}

function noTerminalOverwritten(evidence: readonly WorkflowEvidence[]): string[] {
  const violations: string[] = [];
  for (const { workflowId, status, timeline } of evidence) {
    const terminal = timeline.filter((entry) => isTerminal(entry.kind));
    if (terminal.length > 1)
      violations.push(
        `${short(workflowId)}: ${terminal.length} terminal entries (${terminal.map((entry) => entry.kind).join(', ')})`,
      );
    const first = terminal[0];
    if (!first) continue;
    const after = timeline.filter((entry) => entry.seq > first.seq && entry.kind !== 'claim-released');
    if (after.length > 0)
      violations.push(
        `${short(workflowId)}: ${after.length} entr${after.length === 1 ? 'y' : 'ies'} written after it ${first.kind} (first: ${after[0]!.kind})`,
      );
    if (status !== first.kind)
      violations.push(
        `${short(workflowId)}: stored status is ${status}, but its timeline ended ${first.kind}`,
      );
  }
  return violations;
}

function result(name: InvariantName, violations: string[], okSummary: string): InvariantResult {
  return {
    name,
    title: titles[name],
    ok: violations.length === 0,
    summary:
      violations.length === 0
        ? okSummary
        : `${violations[0]}${violations.length > 1 ? ` (+${violations.length - 1} more)` : ''}`,
    violations,
  };
}

/** Checks every ownership invariant over the workflows of a drill (or a simulation) and the writes refused. */
export function checkOwnershipInvariants(
  evidence: readonly WorkflowEvidence[],
  rejections: readonly FenceRejection[],
): InvariantResult[] {
  const n = evidence.length;
  const workflows = `${n} workflow${n === 1 ? '' : 's'}`;
  const entries = evidence.reduce((sum, item) => sum + item.timeline.length, 0);
  return [
    result(
      'epochs-only-rose',
      epochsOnlyRose(evidence, rejections),
      `${entries} timeline entries of ${workflows}; ${rejections.length} refused write${rejections.length === 1 ? '' : 's'} held an older epoch`,
    ),
    result(
      'one-writer-per-epoch',
      oneWriterPerEpoch(evidence),
      `every epoch of ${workflows} was written by one engine`,
    ),
    result(
      'no-operation-ran-twice',
      noOperationRanTwice(evidence),
      `each activity attempt, timer, signal and child of ${workflows} recorded once`,
    ),
    result(
      'every-workflow-finished',
      everyWorkflowFinished(evidence),
      `${workflows} ended in a terminal status`,
    ),
    result(
      'no-terminal-overwritten',
      noTerminalOverwritten(evidence),
      `one terminal entry each, nothing after it`,
    ),
  ];
}
