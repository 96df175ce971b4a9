/**
 * The facts of one timeline entry for the event detail: everything the entry records, under names people
 * read — the operation (position, member, name), the attempt, the engine and epoch it was written under,
 * the failure with its stack, timings — and the operation's other entries, so an attempt reads with its
 * retries; where its operation's recorded value is read (`outcomeTarget`) and how it is shown
 * (`outcomeView`); and the input the event carried in (a start's, a child's: `inputTarget`; an update's
 * argument: `OutcomeView.argument`), shown whole (`inputView`). Pure, so the detail never cuts what the list
 * had to shorten.
 */
import type {
  Json,
  OperationKind,
  OperationOutcome,
  OutcomeOf,
  SerializedError,
  TimelineEntry,
} from '../../../public';
import { payloadBytes } from '../../../public/browser';

export type EventFact = { label: string; value: string };

export type EventDetail = {
  seq: number;
  kind: TimelineEntry['kind'];
  at: number;
  engineId: string;
  epoch: number;
  facts: EventFact[];
  /** A failure the entry records (an activity attempt's, the workflow's), in full. */
  error: (Partial<SerializedError> & { name: string; message: string }) | null;
  /** The operation's position, when the entry is about one. */
  position: number | null;
  /** The entry's own fields, as recorded. */
  raw: Record<string, unknown>;
};

const labels: Record<string, string> = {
  pos: 'Operation position',
  member: 'Member (in all / race)',
  name: 'Name',
  attempt: 'Attempt',
  nextAttempt: 'Next attempt',
  durationMs: 'Duration (ms)',
  waitMs: 'Back-off (ms)',
  dueAt: 'Due at',
  startAt: 'Starts at',
  rerun: 'Re-run of an interrupted attempt',
  sentBy: 'Sent by engine',
  engineId: 'Engine',
  fromEngineId: 'From engine',
  toEngineId: 'To engine',
  fromEpoch: 'From epoch',
  toEpoch: 'To epoch',
  newEpoch: 'New epoch',
  reason: 'Reason',
  how: 'How',
  childId: 'Child workflow',
  workflowType: 'Type',
  version: 'Version',
  parentId: 'Parent',
  parentClosePolicy: 'Parent close policy',
  status: 'Status',
  satisfied: 'Condition met',
  updateId: 'Update id',
  requestedBy: 'Requested by engine',
  delayed: 'Started after a delay',
  hasResult: 'Returned a value',
  kind: 'Operation kind',
};

function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** The operation an entry is about: its position and member (0 outside `all` / `race`), or null. */
function operationOf(entry: TimelineEntry): { pos: number; member: number } | null {
  if (!('pos' in entry.detail) || typeof entry.detail.pos !== 'number') return null;
  return { pos: entry.detail.pos, member: typeof entry.detail.member === 'number' ? entry.detail.member : 0 };
}

/** The failure an entry records: an activity attempt's, a rejected update's, the workflow's. */
function failureOf(entry: TimelineEntry): EventDetail['error'] {
  if (entry.kind === 'update-rejected') return { name: 'Error', message: entry.detail.error };
  return 'error' in entry.detail && entry.detail.error ? entry.detail.error : null;
}

/** The detail of `entry`. `formatTime` renders epoch-ms fields (due times). */
export function eventDetail(entry: TimelineEntry, formatTime: (at: number) => string): EventDetail {
  const detail: Readonly<Record<string, unknown>> = entry.detail;
  const facts: EventFact[] = [];
  for (const [key, value] of Object.entries(detail)) {
    if (value === undefined || key === 'error') continue;
    const label = labels[key] ?? key;
    facts.push({
      label,
      value:
        (key === 'dueAt' || key === 'startAt') && typeof value === 'number' ? formatTime(value) : show(value),
    });
  }
  return {
    seq: entry.seq,
    kind: entry.kind,
    at: entry.at,
    engineId: entry.engineId,
    epoch: entry.epoch,
    facts,
    error: failureOf(entry),
    position: operationOf(entry)?.pos ?? null,
    raw: { ...detail },
  };
}

/** The entries of the same operation (same position), in order: an attempt with its retries. */
export function sameOperation(timeline: readonly TimelineEntry[], entry: TimelineEntry): TimelineEntry[] {
  const pos = operationOf(entry)?.pos;
  if (pos === undefined) return [entry];
  return timeline.filter((candidate) => operationOf(candidate)?.pos === pos);
}

/**
 * Where the event detail reads the value an entry's operation recorded: the operation at the entry's `pos`
 * and `member` (every entry of an operation leads to its outcome), or the update an `update-applied` entry
 * names. A `signal-received` entry names no operation, but the commit that took the signal in wrote its
 * `signal-consumed` entry right after it (the next sequence number): the payload is that operation's. Null
 * for entries about no operation (ownership, lifecycle), and for a rejected update, which recorded nothing.
 */
export type OutcomeTarget =
  | {
      of: OutcomeOf;
      /** What the section is called before the outcome is read (a signal's value is its payload). */
      heading: 'Result' | 'Payload';
      /** For `signal-received`: the sequence number of the entry that consumed it. */
      consumedBy?: number;
      /**
       * For an entry of an activity attempt that is not the one that settled the operation (an attempt that
       * failed and was retried, or was interrupted): which attempt recorded the operation's outcome, and its
       * entry. The event then names that attempt instead of showing its result as if it were this one's.
       */
      settledBy?: AttemptOutcome;
    }
  | { of: null; heading: 'Payload'; note: string };

/** The attempt whose entry settled an activity (`seq`): completed (`ok`), or failed for good. */
export type AttemptOutcome = { attempt: number; seq: number; ok: boolean; ownAttempt: number };

/** The attempt an activity entry is about (a retry's schedule is about the attempt that failed). */
function attemptOf(entry: TimelineEntry): number | null {
  if (entry.kind === 'activity-retry-scheduled') return entry.detail.nextAttempt - 1;
  if (
    entry.kind === 'activity-started' ||
    entry.kind === 'activity-failed' ||
    entry.kind === 'activity-completed'
  )
    return entry.detail.attempt;
  return null;
}

/**
 * For an activity attempt's entry: the entry that settled its operation when that was another attempt's —
 * its `activity-completed`, or its last `activity-failed` that no retry followed. Null for the settling
 * attempt's own entries, for an operation not settled yet, and for entries of other kinds.
 */
export function otherAttemptOutcome(
  entry: TimelineEntry,
  timeline: readonly TimelineEntry[],
): AttemptOutcome | null {
  const own = attemptOf(entry);
  const operation = operationOf(entry);
  if (own === null || !operation) return null;
  const same = timeline.filter((candidate) => {
    const other = operationOf(candidate);
    return other?.pos === operation.pos && other.member === operation.member;
  });
  let settled: AttemptOutcome | null = null;
  for (const candidate of same) {
    if (candidate.kind === 'activity-completed')
      settled = { attempt: candidate.detail.attempt, seq: candidate.seq, ok: true, ownAttempt: own };
    else if (candidate.kind === 'activity-failed') {
      const attempt = candidate.detail.attempt;
      const retried = same.some(
        (later) => later.kind === 'activity-retry-scheduled' && later.detail.nextAttempt === attempt + 1,
      );
      if (!retried) settled = { attempt, seq: candidate.seq, ok: false, ownAttempt: own };
    }
  }
  return settled && settled.attempt !== own ? settled : null;
}

export function outcomeTarget(
  entry: TimelineEntry,
  timeline: readonly TimelineEntry[],
): OutcomeTarget | null {
  const operation = operationOf(entry);
  if (operation) {
    const settledBy = otherAttemptOutcome(entry, timeline);
    return {
      of: operation,
      heading:
        entry.kind === 'signal-consumed' || (entry.kind === 'timer-fired' && entry.detail.kind === 'signal')
          ? 'Payload'
          : 'Result',
      ...(settledBy ? { settledBy } : {}),
    };
  }
  if (entry.kind === 'update-applied') return { of: { updateId: entry.detail.updateId }, heading: 'Result' };
  if (entry.kind === 'signal-received') {
    const consumed = timeline.find((candidate) => candidate.seq === entry.seq + 1);
    if (consumed?.kind === 'signal-consumed' && consumed.detail.name === entry.detail.name)
      return {
        of: { pos: consumed.detail.pos, member: consumed.detail.member },
        heading: 'Payload',
        consumedBy: consumed.seq,
      };
    return {
      of: null,
      heading: 'Payload',
      note: 'Its payload is shown on the event where the signal is consumed (signal-consumed).',
    };
  }
  return null;
}

/**
 * Where the event detail reads the input an event carried, beside its outcome: a start's (`scheduled`,
 * `started`) is the run's input, a child's (`child-started`) the input the child was started with. (An
 * update's argument comes with its outcome: `OutcomeView.argument`.) Null for other entries.
 */
export type InputTarget = { of: 'run' } | { of: 'child'; childId: string };

export function inputTarget(entry: TimelineEntry): InputTarget | null {
  switch (entry.kind) {
    case 'scheduled':
    case 'started':
      return { of: 'run' };
    case 'child-started':
      return { of: 'child', childId: entry.detail.childId };
    default:
      return null;
  }
}

/** A value an event carried in, shown whole: pretty JSON with its stored size, or why there is none. */
export type InputView = {
  heading: 'Input' | 'Argument';
  /** The value as pretty JSON, or null when it carried none (`text` says so). */
  json: string | null;
  /** The size of the value as stored (compact JSON, UTF-8). */
  bytes: number;
  text?: string;
};

/** How the event detail shows an input (`heading` 'Input') or an update's argument ('Argument'). */
export function inputView(value: Json | undefined, heading: InputView['heading']): InputView {
  if (value === undefined)
    return {
      heading,
      json: null,
      bytes: 0,
      text:
        heading === 'Input'
          ? 'No input: it was started without one.'
          : 'No argument recorded: the update was sent without one.',
    };
  return { heading, ...sized(value) };
}

/** How the event detail shows a recorded outcome (or its absence), in words and pretty JSON. */
export type OutcomeView =
  | { state: 'not-recorded'; heading: 'Result' | 'Payload'; text: string }
  | {
      state: 'value';
      heading: 'Result' | 'Payload';
      /** The value as pretty JSON, or null when the operation recorded none (`text` says why). */
      json: string | null;
      /** The size of the value as stored (compact JSON, UTF-8). */
      bytes: number;
      text?: string;
      /** For an update: the argument it was sent with. */
      argument?: InputView;
    }
  | { state: 'error'; heading: 'Error'; error: SerializedError; text?: string };

const noValue: Partial<Record<OperationKind, string>> = {
  sleep: 'A timer returns nothing.',
  activity: 'No value: the activity returned nothing.',
  child: 'No value: the child workflow returned nothing.',
};

/**
 * What to show for `outcome`, read for `target` (`outcomeTarget`); `timeline`, the run's entries, tells a
 * signal sent without a payload from a wait that timed out.
 */
export function outcomeView(
  outcome: OperationOutcome | null,
  target: { heading: 'Result' | 'Payload' },
  timeline: readonly TimelineEntry[] = [],
): OutcomeView {
  if (outcome === null)
    return {
      state: 'not-recorded',
      heading: target.heading,
      text: 'Not recorded yet: the run’s history holds no outcome for this operation. It is still running or waiting, or the run ended before it finished.',
    };
  if (outcome.kind === 'update')
    return {
      ...valueOf(outcome.stateAfter, 'Result'),
      text: 'The workflow’s state right after the update. (The handler’s return value went to its caller and is not kept.)',
      argument: inputView(outcome.arg, 'Argument'),
    };
  if (!outcome.ok)
    return {
      state: 'error',
      heading: 'Error',
      error: outcome.error,
      ...(outcome.cancelled
        ? {
            text:
              outcome.member === undefined && (outcome.kind === 'all' || outcome.kind === 'race')
                ? `The workflow was cancelled while it waited on this ${outcome.kind}, before this member had an outcome.`
                : 'The workflow was cancelled while it waited on this operation.',
          }
        : {}),
    };
  const heading = outcome.kind === 'signal' ? 'Payload' : 'Result';
  if (outcome.value !== undefined) return valueOf(outcome.value, heading);
  let text = noValue[outcome.kind] ?? 'No value: the operation returned nothing.';
  if (outcome.kind === 'signal') {
    const consumed = timeline.some(
      (entry) =>
        entry.kind === 'signal-consumed' &&
        entry.detail.pos === outcome.pos &&
        entry.detail.member === (outcome.member ?? 0),
    );
    text = consumed
      ? 'No payload: the signal was sent without one.'
      : 'No payload: no signal came before the wait timed out.';
  }
  return { state: 'value', heading, json: null, bytes: 0, text };
}

function valueOf(value: Json, heading: 'Result' | 'Payload'): Extract<OutcomeView, { state: 'value' }> {
  return { state: 'value', heading, ...sized(value) };
}

/** A value as pretty JSON, and its size as stored (compact JSON, UTF-8). */
function sized(value: Json): { json: string; bytes: number } {
  return { json: JSON.stringify(value, null, 2), bytes: payloadBytes(value) };
}

/** What a fork of `run` from operation `position` replays and what it runs, in words. */
export function forkWords(run: number, position: number): string {
  const replayed =
    position === 0
      ? 'nothing is replayed: the whole workflow runs again'
      : `${position === 1 ? 'operation #0' : `operations #0 to #${position - 1}`} of run ${run} ${position === 1 ? 'is' : 'are'} replayed from its history (their activities do not run again), and operation #${position} and everything after it run anew`;
  return `A new run starts with the same input: ${replayed}, on the code registered now. This run stays as it is.`;
}
