/**
 * The operations of a workflow, derived from its timeline for the detail screen: spans to draw on the time
 * axis (activity attempts with their durations, retry back-offs, timers, child workflows), points (signals,
 * updates, cancel requests, lifecycle), and the groups of the event list — one group per operation position,
 * so an activity's attempts, failures and retries read together. Spans and groups share a `groupKey`, which
 * is how selecting one highlights the other.
 */
import type { TimelineEntry, TimelineKind } from '../../../engine';
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

const terminalKinds: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed-out',
]);
const ownershipKinds: ReadonlySet<string> = new Set(['claim-acquired', 'claim-taken-over', 'claim-released']);

type Detail = Record<string, unknown>;

function str(detail: Detail, key: string): string | null {
  const value = detail[key];
  return typeof value === 'string' ? value : null;
}

function num(detail: Detail, key: string): number | null {
  const value = detail[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The group an entry belongs to: its operation position, or itself. */
function groupKeyOf(entry: TimelineEntry): string {
  const pos = num(entry.detail as Detail, 'pos');
  return pos === null ? `entry:${entry.seq}` : `op:${pos}`;
}

/** One entry in words, for the event list and tooltips. `engineName` turns an engine id into a label. */
export function describeEntry(
  entry: TimelineEntry,
  engineName: (engineId: string) => string = (id) => id.slice(0, 8),
): string {
  const d = entry.detail as Detail;
  const name = str(d, 'name');
  switch (entry.kind) {
    case 'started':
      return d.delayed ? 'started after its delay' : 'started';
    case 'scheduled':
      return 'scheduled (start delayed)';
    case 'claim-acquired':
      return `claimed by ${engineName(str(d, 'engineId') ?? entry.engineId)} at epoch ${num(d, 'epoch') ?? entry.epoch} (${str(d, 'how') ?? 'acquire'})`;
    case 'claim-taken-over': {
      const from = str(d, 'fromEngineId');
      return `taken over from ${from ? engineName(from) : 'an unknown holder'} (epoch ${num(d, 'fromEpoch') ?? '?'} → ${num(d, 'toEpoch') ?? entry.epoch}, ${str(d, 'reason') ?? 'expired'})`;
    }
    case 'claim-released':
      return `released by ${engineName(str(d, 'engineId') ?? entry.engineId)} (epoch ${num(d, 'epoch') ?? entry.epoch})`;
    case 'activity-started':
      return `attempt ${num(d, 'attempt') ?? 1} started${d.rerun ? ' (re-run: the previous attempt was interrupted)' : ''}`;
    case 'activity-completed':
      return `attempt ${num(d, 'attempt') ?? 1} completed in ${formatDuration(num(d, 'durationMs') ?? 0)}`;
    case 'activity-failed': {
      const error = d.error as Detail | undefined;
      const message = error ? `${str(error, 'name') ?? 'Error'}: ${str(error, 'message') ?? ''}` : 'failed';
      return `attempt ${num(d, 'attempt') ?? 1} failed — ${message}`;
    }
    case 'activity-retry-scheduled':
      return `retry as attempt ${num(d, 'nextAttempt') ?? '?'} in ${formatDuration(num(d, 'waitMs') ?? 0)}`;
    case 'timer-armed':
      return `timer armed for ${formatDuration(num(d, 'durationMs') ?? 0)}`;
    case 'timer-fired':
      return 'timer fired';
    case 'signal-received':
      return `signal '${name ?? '?'}' received${str(d, 'sentBy') ? ` from ${engineName(str(d, 'sentBy')!)}` : ''}`;
    case 'signal-consumed':
      return `signal '${name ?? '?'}' consumed`;
    case 'wait-completed':
      return d.satisfied === false ? 'wait timed out' : 'wait condition met';
    case 'update-applied':
      return `update '${name ?? '?'}' applied`;
    case 'update-rejected': {
      const error = d.error as Detail | undefined;
      return `update '${name ?? '?'}' rejected${error ? ` — ${str(error, 'message') ?? ''}` : ''}`;
    }
    case 'child-started':
      return `child ${str(d, 'workflowType') ?? ''} '${str(d, 'childId') ?? '?'}' started`;
    case 'child-completed':
      return `child '${str(d, 'childId') ?? '?'}' ended ${str(d, 'status') ?? ''}`;
    case 'cancel-requested':
      return `cancel requested${str(d, 'reason') ? `: ${str(d, 'reason')}` : ''}`;
    case 'suspended':
      return `suspended${num(d, 'newEpoch') !== null ? ` (epoch → ${num(d, 'newEpoch')})` : ''}`;
    case 'resumed':
      return 'resumed';
    case 'completed':
      return 'completed';
    case 'failed': {
      const error = d.error as Detail | undefined;
      return `failed${error ? ` — ${str(error, 'name') ?? 'Error'}: ${str(error, 'message') ?? ''}` : ''}`;
    }
    case 'cancelled':
      return `cancelled${str(d, 'reason') ? `: ${str(d, 'reason')}` : ''}`;
    case 'terminated':
      return `terminated${str(d, 'reason') ? `: ${str(d, 'reason')}` : ''}${num(d, 'newEpoch') !== null ? ` (epoch → ${num(d, 'newEpoch')})` : ''}`;
    case 'timed-out':
      return 'timed out';
    default:
      return entry.kind;
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
    const name = str(entry.detail as Detail, 'name');
    const next = timeline
      .slice(index + 1, index + 4)
      .find(
        (candidate) =>
          candidate.kind === 'signal-consumed' && str(candidate.detail as Detail, 'name') === name,
      );
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
    const d = entry.detail as Detail;
    const pos = num(d, 'pos');
    const member = num(d, 'member') ?? 0;
    const leaf = `${pos}.${member}`;
    switch (entry.kind) {
      case 'activity-started': {
        const attempt = num(d, 'attempt') ?? 1;
        const name = str(d, 'name') ?? 'activity';
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
        const dueAt = num(d, 'dueAt') ?? entry.at;
        const span: Span = {
          id: `b:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'activities',
          label: `${names.get(leaf) ?? str(d, 'name') ?? 'activity'} back-off`,
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
        const dueAt = num(d, 'dueAt') ?? entry.at;
        const span: Span = {
          id: `t:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'timers',
          label: `sleep ${formatDuration(num(d, 'durationMs') ?? dueAt - entry.at)}`,
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
        const childId = str(d, 'childId') ?? '?';
        const span: Span = {
          id: `c:${leaf}:${entry.seq}`,
          groupKey: group.key,
          track: 'children',
          label: `${str(d, 'workflowType') ?? 'child'} ${childId}`,
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
          span.status = str(d, 'status') === 'completed' ? 'ok' : 'failed';
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
    if (terminalKinds.has(entry.kind) || entry.kind === 'suspended') {
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
  const d = first.detail as Detail;
  const mine = spans.filter((span) => span.groupKey === group.key);
  const kinds = new Set(group.entries.map((entry) => entry.kind));
  if (kinds.has('activity-started')) {
    const attemptSpans = mine.filter((span) => span.attempt !== undefined);
    const activityNames = [
      ...new Set(
        group.entries
          .map((entry) => str(entry.detail as Detail, 'name'))
          .filter((name): name is string => !!name),
      ),
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
  if (kinds.has('timer-armed')) {
    group.title = `sleep ${formatDuration(num(d, 'durationMs') ?? 0)}`;
    group.summary = kinds.has('timer-fired') ? 'fired' : 'waiting';
    group.tone = kinds.has('timer-fired') ? 'neutral' : 'info';
    return;
  }
  if (kinds.has('child-started')) {
    group.title = `child ${str(d, 'workflowType') ?? ''}`.trim();
    const done = group.entries.find((entry) => entry.kind === 'child-completed');
    group.summary = `${str(d, 'childId') ?? ''}${done ? ` · ${str(done.detail as Detail, 'status') ?? 'ended'}` : ' · running'}`;
    return;
  }
  if (kinds.has('signal-consumed')) {
    group.title = `signal '${str(group.entries.find((entry) => entry.kind === 'signal-consumed')!.detail as Detail, 'name') ?? '?'}'`;
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
