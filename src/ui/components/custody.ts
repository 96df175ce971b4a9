/**
 * Custody of a workflow: which engine owned it when, derived from its durable timeline and the writes of
 * deposed engines that storage refused. The detail screen draws it as lanes — one per engine that ever owned
 * the workflow — on the same time axis as the timeline; the Claims screen lists its epochs (`epochHistory`).
 *
 * How the timeline reads (docs/ownership.md):
 * - `claim-acquired {engineId, epoch, how}` opens a bar (start, acquire after a release, resume, child…);
 * - `claim-taken-over {fromEngineId, fromEpoch, toEngineId, toEpoch, reason}` closes the old owner's bar and
 *   opens the new one's, behind a fence at the new epoch (`reason`: `expired` — the old claim ran out;
 *   `holder-dead` — its engine's Web Lock vanished; `holder-stopped` — its engine shut down gracefully and
 *   ended its session; `orphaned` — a claim its own engine had forgotten; `undecodable-holder`);
 * - `claim-released` closes the bar (graceful shutdown, handoff);
 * - a terminal entry (completed, failed, cancelled, terminated, timed-out) or `suspended` closes it too —
 *   the release is folded into that commit; `terminated` / `suspended` / `timed-out` written by a rotation
 *   carry `newEpoch`, which is a fence as well;
 * - every entry carries the `engineId` and `epoch` it was written under, which tells how long a bar was
 *   demonstrably active (its last write).
 *
 * Between bars nobody owned the workflow: those are gaps (unowned, suspended, waiting for a delayed
 * start, or waiting in a queue to be admitted). A bar whose claim expired before it was taken over ends with a stretch in which it was not renewed
 * (from its last write, or TTL + grace before the takeover if that is later), drawn hatched: the engine was
 * frozen, stalled or dead.
 */
import type { FenceRejection, TimelineEntry, WorkflowStatus } from '../../public';
import { isTerminal } from '../../public/browser';

export type CustodyBarEnd =
  /** Released its claim (graceful shutdown, handoff). */
  | 'released'
  /** The workflow finished under this owner. */
  | 'finished'
  /** Another engine took it over. */
  | 'taken-over'
  /** Terminated, timed out or suspended by a rotation, from any engine. */
  | 'rotated'
  /** Suspended. */
  | 'suspended'
  /** Still owned, now. */
  | 'live'
  /** The claim lapsed and nobody has taken over yet. */
  | 'lapsed';

export type CustodyBar = {
  engineId: string;
  epoch: number;
  start: number;
  end: number;
  endReason: CustodyBarEnd;
  /** How the claim was taken: `start`, `acquire`, `resume`, `child`, `delayed-start`, or a takeover reason. */
  how: string;
  /** The last timeline entry this engine wrote under this epoch. */
  lastWriteAt: number;
  /** For a claim that expired before its takeover: from when it was (at the latest) no longer renewed. */
  silentFrom: number | null;
  /** For a live bar: when the claim expires unless renewed. */
  expiresAt: number | null;
};

export type FenceMarker = {
  at: number;
  /** The new epoch; every write under an older one is refused from here on. */
  epoch: number;
  kind: 'takeover' | 'handoff' | 'rotation';
  fromEngineId: string | null;
  toEngineId: string | null;
  /** e.g. `expired`, `holder-dead`, `released`, `terminated`. */
  reason: string;
};

/**
 * A stretch nobody owned the workflow: `unowned` (between owners), `suspended`, `scheduled` (waiting for its
 * delayed start) or `queued` (waiting in its queue, `queue`, to be admitted: from its `scheduled` entry's
 * `detail.queue` until the admission's claim).
 */
export type CustodyGap = {
  start: number;
  end: number;
  kind: 'unowned' | 'suspended' | 'scheduled' | 'queued';
  /** The queue it waited in (`queued` only). */
  queue?: string;
};

export type RejectedWrite = {
  at: number;
  engineId: string;
  heldEpoch: number;
  currentEpoch: number | null;
  what: string;
};

export type CustodyLane = {
  engineId: string;
  bars: CustodyBar[];
  rejections: RejectedWrite[];
};

export type Custody = {
  /** The axis: from the workflow's first entry to its end (or now, while it runs). */
  start: number;
  end: number;
  lanes: CustodyLane[];
  fences: FenceMarker[];
  gaps: CustodyGap[];
  /** Whether the workflow still runs (the axis ends at `now`). */
  live: boolean;
};

export type CustodyInput = {
  timeline: readonly TimelineEntry[];
  rejections: readonly FenceRejection[];
  /** What `describe` says now; null while it loads. */
  workflow: {
    status: WorkflowStatus;
    createdAt: number;
    endedAt?: number;
    owner: { engineId: string; epoch: number; expiresAt: number } | null;
  } | null;
  now: number;
  /** The claim TTL, in ms (for the not-renewed stretch before an expiry takeover). */
  claimTtlMs: number;
  /** How long after expiry a live holder's claim may be taken over, in ms. Default 0. */
  graceMs?: number;
};

/** Derives the custody lanes of one workflow. Pure: the same input always gives the same lanes. */
export function deriveCustody(input: CustodyInput): Custody {
  const { timeline, rejections, workflow, now, claimTtlMs } = input;
  const silenceMs = claimTtlMs + (input.graceMs ?? 0);
  const bars: CustodyBar[] = [];
  const fences: FenceMarker[] = [];
  const gaps: CustodyGap[] = [];
  let current: CustodyBar | null = null;
  /** When nobody owned it since, and why. */
  let vacantSince: { at: number; kind: CustodyGap['kind']; queue?: string } | null = null;
  let lastReleasedBy: string | null = null;

  const open = (engineId: string, epoch: number, at: number, how: string) => {
    if (vacantSince && at > vacantSince.at) gaps.push(gapOf(vacantSince, at));
    vacantSince = null;
    current = {
      engineId,
      epoch,
      start: at,
      end: at,
      endReason: 'live',
      how,
      lastWriteAt: at,
      silentFrom: null,
      expiresAt: null,
    };
    bars.push(current);
  };
  const close = (at: number, reason: CustodyBarEnd, vacancy: CustodyGap['kind'] | null) => {
    if (current) {
      current.end = Math.max(current.start, at);
      current.endReason = reason;
      lastReleasedBy = current.engineId;
    }
    current = null;
    vacantSince = vacancy ? { at, kind: vacancy } : null;
  };

  const first = timeline[0];
  if (first) {
    const queue = first.kind === 'scheduled' ? first.detail.queue?.name : undefined;
    vacantSince =
      queue !== undefined
        ? { at: first.at, kind: 'queued', queue }
        : { at: first.at, kind: first.kind === 'scheduled' ? 'scheduled' : 'unowned' };
  }

  for (const entry of timeline) {
    const bar = current as CustodyBar | null;
    switch (entry.kind) {
      case 'claim-acquired': {
        // Fallbacks: the studio reads whatever a timeline holds, also what older builds wrote.
        const engineId = entry.detail.engineId || entry.engineId;
        const epoch = entry.detail.epoch ?? entry.epoch;
        const how = entry.detail.how ?? 'acquire';
        if (bar) close(entry.at, bar.engineId === engineId ? 'released' : 'taken-over', null);
        if (bars.length > 0 || epoch > 1)
          fences.push({
            at: entry.at,
            epoch,
            kind: 'handoff',
            fromEngineId: bar?.engineId ?? lastReleasedBy,
            toEngineId: engineId,
            reason: how === 'resume' ? 'resumed' : 'released',
          });
        open(engineId, epoch, entry.at, how);
        break;
      }
      case 'claim-taken-over': {
        const toEngineId = entry.detail.toEngineId || entry.engineId;
        const toEpoch = entry.detail.toEpoch ?? entry.epoch;
        const fromEngineId = entry.detail.fromEngineId || null;
        const reason = entry.detail.reason ?? 'expired';
        if (bar) {
          // Taken over once the claim expired (TTL after its last renewal) and the grace passed: it was last
          // renewed no later than that, and no earlier than its last write.
          if (reason === 'expired')
            bar.silentFrom = Math.max(bar.start, bar.lastWriteAt, entry.at - silenceMs);
          close(entry.at, 'taken-over', null);
        }
        fences.push({
          at: entry.at,
          epoch: toEpoch,
          kind: 'takeover',
          fromEngineId: fromEngineId ?? bar?.engineId ?? null,
          toEngineId,
          reason,
        });
        open(
          toEngineId,
          toEpoch,
          entry.at,
          reason === 'holder-dead'
            ? 'takeover (holder dead)'
            : reason === 'holder-stopped'
              ? 'takeover (holder stopped)'
              : 'takeover',
        );
        break;
      }
      case 'claim-released':
        if (bar) bar.lastWriteAt = entry.at;
        close(entry.at, 'released', 'unowned');
        break;
      case 'suspended': {
        const newEpoch = entry.detail.newEpoch ?? null;
        if (bar && bar.engineId === entry.engineId && newEpoch === null) bar.lastWriteAt = entry.at;
        close(entry.at, newEpoch !== null ? 'rotated' : 'suspended', 'suspended');
        if (newEpoch !== null)
          fences.push({
            at: entry.at,
            epoch: newEpoch,
            kind: 'rotation',
            fromEngineId: bar?.engineId ?? null,
            toEngineId: null,
            reason: 'suspended',
          });
        break;
      }
      default: {
        if (isTerminal(entry.kind)) {
          const newEpoch = 'newEpoch' in entry.detail ? (entry.detail.newEpoch ?? null) : null;
          const rotated = newEpoch !== null;
          if (bar && !rotated) bar.lastWriteAt = entry.at;
          close(entry.at, rotated ? 'rotated' : 'finished', null);
          if (rotated)
            fences.push({
              at: entry.at,
              epoch: newEpoch,
              kind: 'rotation',
              fromEngineId: bar?.engineId ?? null,
              toEngineId: null,
              reason: entry.kind,
            });
          break;
        }
        if (bar && entry.engineId === bar.engineId && entry.epoch === bar.epoch) bar.lastWriteAt = entry.at;
      }
    }
  }

  const terminal = workflow ? isTerminal(workflow.status) : timeline.some((entry) => isTerminal(entry.kind));
  const lastAt = timeline.at(-1)?.at ?? workflow?.createdAt ?? now;
  const end = terminal ? Math.max(workflow?.endedAt ?? lastAt, lastAt) : Math.max(now, lastAt);
  const open_ = current as CustodyBar | null;
  if (open_) {
    open_.end = end;
    if (terminal) open_.endReason = 'finished';
    else if (
      workflow?.owner &&
      workflow.owner.engineId === open_.engineId &&
      workflow.owner.epoch === open_.epoch
    ) {
      open_.endReason = 'live';
      open_.expiresAt = workflow.owner.expiresAt;
    } else if (workflow) {
      open_.endReason = 'lapsed';
      open_.silentFrom = Math.max(open_.start, Math.min(open_.lastWriteAt, end));
    }
  } else if (vacantSince && end > (vacantSince as { at: number }).at) {
    const vacancy = vacantSince as { at: number; kind: CustodyGap['kind']; queue?: string };
    if (!terminal) gaps.push(gapOf(vacancy, end));
  }

  const lanes = new Map<string, CustodyLane>();
  const laneOf = (engineId: string) => {
    let lane = lanes.get(engineId);
    if (!lane) {
      lane = { engineId, bars: [], rejections: [] };
      lanes.set(engineId, lane);
    }
    return lane;
  };
  for (const bar of bars) laneOf(bar.engineId).bars.push(bar);
  for (const rejection of [...rejections].sort((a, b) => a.at - b.at))
    laneOf(rejection.engineId).rejections.push({
      at: rejection.at,
      engineId: rejection.engineId,
      heldEpoch: rejection.heldEpoch,
      currentEpoch: rejection.currentEpoch,
      what: rejection.what,
    });

  const start = Math.min(first?.at ?? workflow?.createdAt ?? now, workflow?.createdAt ?? Infinity);
  const rejectionEnd = Math.max(...rejections.map((rejection) => rejection.at), -Infinity);
  return {
    start,
    end: Math.max(end, rejectionEnd, start + 1),
    lanes: [...lanes.values()],
    fences,
    gaps,
    live: !terminal,
  };
}

/** The epochs a workflow went through, in order, with who held each and how it began. */
export type EpochStep = { epoch: number; at: number; engineId: string | null; how: string };

/** The epoch history of a workflow (for the Claims screen), from its timeline. */
export function epochHistory(timeline: readonly TimelineEntry[]): EpochStep[] {
  const steps: EpochStep[] = [];
  for (const entry of timeline) {
    if (entry.kind === 'claim-acquired')
      steps.push({
        epoch: entry.detail.epoch ?? entry.epoch,
        at: entry.at,
        engineId: entry.detail.engineId || entry.engineId,
        how: entry.detail.how ?? 'acquire',
      });
    else if (entry.kind === 'claim-taken-over')
      steps.push({
        epoch: entry.detail.toEpoch ?? entry.epoch,
        at: entry.at,
        engineId: entry.detail.toEngineId || entry.engineId,
        how: `takeover (${entry.detail.reason ?? 'expired'})`,
      });
    else if ('newEpoch' in entry.detail && entry.detail.newEpoch !== undefined)
      steps.push({ epoch: entry.detail.newEpoch, at: entry.at, engineId: null, how: entry.kind });
  }
  return steps;
}

function gapOf(vacancy: { at: number; kind: CustodyGap['kind']; queue?: string }, end: number): CustodyGap {
  return vacancy.queue === undefined
    ? { start: vacancy.at, end, kind: vacancy.kind }
    : { start: vacancy.at, end, kind: vacancy.kind, queue: vacancy.queue };
}
