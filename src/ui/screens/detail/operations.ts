/**
 * The operations of a workflow, derived from its timeline for the detail screen: spans to draw on the time
 * axis (activity attempts with their durations, retry back-offs, timers, child workflows), points (signals,
 * updates, cancel requests, lifecycle), and the groups of the event list — one group per operation position,
 * so an activity's attempts, failures and retries read together. Spans and groups share a `groupKey`, which
 * is how selecting one highlights the other.
 */
import type { TimelineEntry, TimelineKind } from '../../../public';
import { entriesOf, isTerminal } from '../../../public/browser';
import { formatDuration } from '../../components/time-format';

export type Track = 'activities' | 'timers' | 'children' | 'messages' | 'lifecycle';

export const trackLabels: Record<Track, string> = {
  activities: 'Activities',
  timers: 'Timers',
  children: 'Children',
  messages: 'Signals · updates',
  lifecycle: 'Lifecycle',
};

export type SpanStatus = 'ok' | 'failed' | 'interrupted' | 'running' | 'waiting' | 'backoff';

export type Span = {
  id: string;
  groupKey: string;
  track: Track;
  label: string;
  start: number;
  end: number;
  status: SpanStatus;
  /** The engine that ran it (the writer of its first entry). */
  engineId: string;
  attempt?: number;
};

export type Point = {
  id: string;
  groupKey: string;
  track: Track;
  at: number;
  kind: TimelineKind;
  label: string;
  tone: 'neutral' | 'info' | 'success' | 'danger' | 'warning';
};

export type EventGroup = {
  key: string;
  /** e.g. `activity 'charge'`, `sleep 2 s`, `signal 'approve'`. */
  title: string;
  /** e.g. `3 attempts · 1.4 s · completed`. */
  summary: string;
  category: 'operation' | 'ownership' | 'lifecycle' | 'message';
  entries: TimelineEntry[];
  start: number;
  end: number;
  tone: Point['tone'];
};

export type Operations = { spans: Span[]; points: Point[]; groups: EventGroup[] };

const ownershipKinds: ReadonlySet<string> = new Set(['claim-acquired', 'claim-taken-over', 'claim-released']);

/** The operation position (and member) an entry is about, when it is about one. */
function leafOf(entry: TimelineEntry): { pos: number; member: number } | null {
  return 'pos' in entry.detail ? { pos: entry.detail.pos, member: entry.detail.member ?? 0 } : null;
}

/** The group an entry belongs to: its operation position, or itself. */
function groupKeyOf(entry: TimelineEntry): string {
  const leaf = leafOf(entry);
  return leaf === null ? `entry:${entry.seq}` : `op:${leaf.pos}`;
}

/** One entry in words, for the event list and tooltips. `engineName` turns an engine id into a label. */
export function describeEntry(
  entry: TimelineEntry,
  engineName: (engineId: string) => string = (id) => id.slice(0, 8),
): string {
  switch (entry.kind) {
    case 'started': {
      const { queue } = entry.detail;
      if (queue)
        return `admitted from queue ${queue.name} after ${formatDuration(queue.waitedMs)}${queue.slot !== undefined ? ` (slot ${queue.slot + 1})` : ''}`;
      return entry.detail.continuedFrom !== undefined
        ? `started by run ${entry.detail.continuedFrom} (continued as new)`
        : entry.detail.delayed
          ? 'started after its delay'
          : 'started';
    }
    case 'scheduled': {
      const { queue, debounced } = entry.detail;
      const moved = debounced ? ', its start moved back by a debounced start' : '';
      if (queue)
        return `enqueued in queue ${queue.name} (${queue.key !== undefined ? `key ${queue.key}, ` : ''}priority ${queue.priority})${moved}`;
      return `scheduled (start delayed)${moved}`;
    }
    case 'claim-acquired': {
      const { engineId, epoch, how } = entry.detail;
      return `claimed by ${engineName(engineId)} at epoch ${epoch} (${how})`;
    }
    case 'claim-taken-over': {
      const { fromEngineId, fromEpoch, toEpoch, reason } = entry.detail;
      return `taken over from ${fromEngineId ? engineName(fromEngineId) : 'an unknown holder'} (epoch ${fromEpoch} → ${toEpoch}, ${reason})`;
    }
    case 'claim-released':
      return `released by ${engineName(entry.detail.engineId)} (epoch ${entry.detail.epoch})`;
    case 'activity-started':
      return `attempt ${entry.detail.attempt} started${entry.detail.rerun ? ' (re-run: the previous attempt was interrupted)' : ''}`;
    case 'activity-completed':
      return `attempt ${entry.detail.attempt} completed in ${formatDuration(entry.detail.durationMs)}`;
    case 'activity-failed': {
      const { error, attempt } = entry.detail;
      return `attempt ${attempt} failed — ${error.name}: ${error.message}`;
    }
    case 'activity-retry-scheduled':
      return `retry as attempt ${entry.detail.nextAttempt} in ${formatDuration(entry.detail.waitMs)}`;
    case 'timer-armed':
      return `timer armed for ${formatDuration(entry.detail.durationMs)}`;
    case 'timer-fired':
      return 'timer fired';
    case 'signal-received':
      return `signal '${entry.detail.name}' received from ${engineName(entry.detail.sentBy)}`;
    case 'signal-consumed':
      return `signal '${entry.detail.name}' consumed`;
    case 'message-sent':
      return entry.detail.message === 'signal'
        ? `signal '${entry.detail.name ?? ''}' sent to ${entry.detail.to}`
        : `cancel sent to ${entry.detail.to}`;
    case 'wait-completed':
      return entry.detail.satisfied ? 'wait condition met' : 'wait timed out';
    case 'update-applied':
      return `update '${entry.detail.name}' applied`;
    case 'update-rejected':
      return `update '${entry.detail.name}' rejected — ${entry.detail.error}`;
    case 'child-started':
      return `child ${entry.detail.workflowType} '${entry.detail.childId}' started`;
    case 'child-completed':
      return `child '${entry.detail.childId}' ended ${entry.detail.status}`;
    case 'cancel-requested':
      return `cancel requested${entry.detail.reason ? `: ${entry.detail.reason}` : ''}`;
    case 'suspended':
      return `suspended${entry.detail.newEpoch !== undefined ? ` (epoch → ${entry.detail.newEpoch})` : ''}`;
    case 'resumed':
      return 'resumed';
    case 'completed':
      return 'completed';
    case 'failed': {
      const { error } = entry.detail;
      return `failed${error ? ` — ${error.name}: ${error.message}` : ''}`;
    }
    case 'cancelled':
      return `cancelled${entry.detail.reason ? `: ${entry.detail.reason}` : ''}`;
    case 'continued-as-new': {
      const { nextRun, version } = entry.detail;
      return `continued as new: run ${nextRun ?? '?'}${version !== undefined ? ` (version ${version})` : ''}`;
    }
    case 'terminated': {
      const { reason, newEpoch } = entry.detail;
      return `terminated${reason ? `: ${reason}` : ''}${newEpoch !== undefined ? ` (epoch → ${newEpoch})` : ''}`;
    }
    case 'timed-out':
      return 'timed out';
  }
}

function toneOf(kind: TimelineKind): Point['tone'] {
  switch (kind) {
    case 'completed':
    case 'activity-completed':
      return 'success';
    case 'failed':
    case 'timed-out':
    case 'activity-failed':
    case 'update-rejected':
    case 'terminated':
      return 'danger';
    case 'claim-taken-over':
    case 'cancel-requested':
    case 'cancelled':
    case 'suspended':
    case 'activity-retry-scheduled':
      return 'warning';
    case 'signal-received':
    case 'signal-consumed':
    case 'update-applied':
    case 'claim-acquired':
    case 'claim-released':
      return 'info';
    default:
      return 'neutral';
  }
}

/** Derives spans, points and event groups from a timeline. `end` closes what is still open (now, or the end). */
export function deriveOperations(timeline: readonly TimelineEntry[], end: number, live: boolean): Operations {
  const spans: Span[] = [];
  const points: Point[] = [];
  const groups = new Map<string, EventGroup>();
  const openAttempts = new Map<string, Span>();
  const openTimers = new Map<string, Span>();
  const openChildren = new Map<string, Span>();
  const openBackoff = new Map<string, Span>();
  const names = new Map<string, string>();

  // Signals are received without a position, then consumed at one: file the receipt with its consumption.
  const receiptGroup = new Map<number, string>();
  for (let index = 0; index < timeline.length; index++) {
    const entry = timeline[index]!;
    if (entry.kind !== 'signal-received') continue;
    const name = entry.detail.name;
    const next = timeline
      .slice(index + 1, index + 4)
      .find((candidate) => candidate.kind === 'signal-consumed' && candidate.detail.name === name);
    if (next) receiptGroup.set(entry.seq, groupKeyOf(next));
  }

  const groupFor = (entry: TimelineEntry): EventGroup => {
    const key = receiptGroup.get(entry.seq) ?? groupKeyOf(entry);
    let group = groups.get(key);
    if (!group) {
      group = {
        key,
        title: entry.kind,
        summary: '',
        category: ownershipKinds.has(entry.kind)
          ? 'ownership'
          : key.startsWith('op:')
            ? 'operation'
            : entry.kind.startsWith('signal') ||
                entry.kind.startsWith('update') ||
                entry.kind === 'cancel-requested'
              ? 'message'
              : 'lifecycle',
        entries: [],
        start: entry.at,
        end: entry.at,
        tone: toneOf(entry.kind),
      };
      groups.set(key, group);
    }
    group.entries.push(entry);
    group.start = Math.min(group.start, entry.at);
    group.end = Math.max(group.end, entry.at);
    return group;
  };

  for (const entry of timeline) {
    const group = groupFor(entry);
    const at = leafOf(entry);
    const leaf = at ? `${at.pos}.${at.member}` : 'null.0';
    switch (entry.kind) {
      case 'activity-started': {
        const { attempt, name } = entry.detail;
        names.set(leaf, name);
        const previous = openAttempts.get(leaf);
        if (previous) {
          previous.end = entry.at;
          previous.status = 'interrupted';
        }
        const backoff = openBackoff.get(leaf);
        if (backoff) {
          backoff.end = Math.min(backoff.end, entry.at);
          openBackoff.delete(leaf);
        }
        const span: Span = {
          id: `a:${leaf}:${attempt}:${entry.seq}`,
          groupKey: group.key,
          track: 'activities',
          label: `${name} #${attempt}`,
          start: entry.at,
          end: entry.at,
          status: 'running',
          engineId: entry.engineId,
          attempt,
        };
        spans.push(span);
        openAttempts.set(leaf, span);
        break;
      }
      case 'activity-completed':
      case 'activity-failed': {
        const span = openAttempts.get(leaf);
        if (span) {
          span.end = entry.at;
          span.status = entry.kind === 'activity-completed' ? 'ok' : 'failed';
          openAttempts.delete(leaf);
        }
        break;
      }
      case 'activity-retry-scheduled': {
        const { dueAt } = entry.detail;
        const span: Span = {
          id: `b:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'activities',
          label: `${names.get(leaf) ?? entry.detail.name} back-off`,
          start: entry.at,
          end: dueAt,
          status: 'backoff',
          engineId: entry.engineId,
        };
        spans.push(span);
        openBackoff.set(leaf, span);
        break;
      }
      case 'timer-armed': {
        const { dueAt, durationMs } = entry.detail;
        const span: Span = {
          id: `t:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'timers',
          label: `sleep ${formatDuration(durationMs)}`,
          start: entry.at,
          end: dueAt,
          status: 'waiting',
          engineId: entry.engineId,
        };
        spans.push(span);
        openTimers.set(leaf, span);
        break;
      }
      case 'timer-fired': {
        const span = openTimers.get(leaf);
        if (span) {
          span.end = entry.at;
          span.status = 'ok';
          openTimers.delete(leaf);
        }
        break;
      }
      case 'child-started': {
        const { childId, workflowType } = entry.detail;
        const span: Span = {
          id: `c:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'children',
          label: `${workflowType} ${childId}`,
          start: entry.at,
          end: entry.at,
          status: 'running',
          engineId: entry.engineId,
        };
        spans.push(span);
        openChildren.set(leaf, span);
        break;
      }
      case 'child-completed': {
        const span = openChildren.get(leaf);
        if (span) {
          span.end = entry.at;
          span.status = entry.detail.status === 'completed' ? 'ok' : 'failed';
          openChildren.delete(leaf);
        }
        break;
      }
      case 'signal-received':
      case 'signal-consumed':
      case 'update-applied':
      case 'update-rejected':
      case 'cancel-requested':
      case 'wait-completed':
        points.push({
          id: `p:${entry.seq}`,
          groupKey: group.key,
          track: 'messages',
          at: entry.at,
          kind: entry.kind,
          label: describeEntry(entry),
          tone: toneOf(entry.kind),
        });
        break;
      default:
        if (!ownershipKinds.has(entry.kind))
          points.push({
            id: `p:${entry.seq}`,
            groupKey: group.key,
            track: 'lifecycle',
            at: entry.at,
            kind: entry.kind,
            label: describeEntry(entry),
            tone: toneOf(entry.kind),
          });
    }
    if (isTerminal(entry.kind) || entry.kind === 'suspended') {
      // The workflow stopped: whatever ran was cut off here (timers deleted, activities abandoned).
      for (const span of openAttempts.values()) {
        span.end = entry.at;
        span.status = 'interrupted';
      }
      openAttempts.clear();
      for (const span of openTimers.values()) span.end = Math.min(span.end, entry.at);
      openTimers.clear();
      for (const span of openChildren.values()) span.end = entry.at;
      openChildren.clear();
    }
  }
  for (const span of openAttempts.values()) {
    span.end = end;
    span.status = live ? 'running' : 'interrupted';
  }
  for (const span of openChildren.values()) span.end = end;
  for (const span of openTimers.values())
    span.end = live
      ? Math.min(Math.max(span.end, span.start), Math.max(end, span.start))
      : Math.min(span.end, end);

  for (const group of groups.values()) summarise(group, spans);
  return { spans, points, groups: [...groups.values()] };
}

/** Fills a group's title and summary from its entries and spans. */
function summarise(group: EventGroup, spans: readonly Span[]): void {
  const first = group.entries[0]!;
  const entries = group.entries;
  const mine = spans.filter((span) => span.groupKey === group.key);
  const kinds = new Set(group.entries.map((entry) => entry.kind));
  if (kinds.has('activity-started')) {
    const attemptSpans = mine.filter((span) => span.attempt !== undefined);
    const activityNames = [
      ...new Set(entriesOf(entries, 'activity-started').map((entry) => entry.detail.name)),
    ];
    group.title =
      activityNames.length > 1
        ? `${activityNames.length} activities (${activityNames.join(', ')})`
        : `activity '${activityNames[0] ?? '?'}'`;
    const outcome =
      kinds.has('activity-completed') && !attemptSpans.some((span) => span.status === 'running')
        ? 'completed'
        : attemptSpans.some((span) => span.status === 'running')
          ? 'running'
          : kinds.has('activity-retry-scheduled') && !kinds.has('activity-completed')
            ? 'retrying'
            : attemptSpans.at(-1)?.status === 'failed'
              ? 'failed'
              : (attemptSpans.at(-1)?.status ?? '');
    const attempts = attemptSpans.length;
    group.summary = [
      `${attempts} attempt${attempts === 1 ? '' : 's'}`,
      formatDuration(group.end - group.start),
      outcome,
    ]
      .filter(Boolean)
      .join(' · ');
    group.tone =
      outcome === 'completed'
        ? 'success'
        : outcome === 'failed'
          ? 'danger'
          : attempts > 1
            ? 'warning'
            : 'info';
    return;
  }
  const armed = entriesOf(entries, 'timer-armed')[0];
  if (armed) {
    group.title = `sleep ${formatDuration(armed.detail.durationMs)}`;
    group.summary = kinds.has('timer-fired') ? 'fired' : 'waiting';
    group.tone = kinds.has('timer-fired') ? 'neutral' : 'info';
    return;
  }
  const child = entriesOf(entries, 'child-started')[0];
  if (child) {
    group.title = `child ${child.detail.workflowType}`;
    const done = entriesOf(entries, 'child-completed')[0];
    group.summary = `${child.detail.childId}${done ? ` · ${done.detail.status}` : ' · running'}`;
    return;
  }
  const consumed = entriesOf(entries, 'signal-consumed')[0];
  if (consumed) {
    group.title = `signal '${consumed.detail.name}'`;
    group.summary = 'received · consumed';
    group.tone = 'info';
    return;
  }
  if (kinds.has('wait-completed')) {
    group.title = 'wait';
    group.summary = describeEntry(group.entries.find((entry) => entry.kind === 'wait-completed')!);
    return;
  }
  group.title = describeEntry(first);
  group.summary = group.entries.length > 1 ? `${group.entries.length} entries` : '';
}
