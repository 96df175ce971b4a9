/**
 * Shuttle's vocabulary, defined once: the workflow statuses, which of them are terminal, the kinds of
 * timeline entries, and the limits a caller must know before it asks (the longest id, the default payload
 * limit). A pure module with no imports, so that every layer — the studio's UI included, at
 * runtime — reads the same words instead of keeping a copy.
 */
import type { TimelineEntry } from './records';

/** The longest workflow id the engine accepts, in characters. */
export const maxIdLength = 256;

/** The default of `limits.maxPayloadBytes`: the largest input, result, payload or state, in bytes of JSON. */
export const defaultMaxPayloadBytes = 256 * 1024;

/** Statuses a workflow never leaves (its run is over). */
export const terminalStatuses = [
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed-out',
  'continued-as-new',
] as const;

/**
 * Every status a workflow can have. `continued-as-new` is the status of an earlier run only (run history): a
 * run that called `ctx.continueAsNew` ended as it in the same commit that started the next run, so the
 * workflow itself — its current run — never has it.
 */
export const workflowStatuses = ['pending', 'running', 'suspended', ...terminalStatuses] as const;

export type WorkflowStatus = (typeof workflowStatuses)[number];

export type TerminalStatus = (typeof terminalStatuses)[number];

const terminal: ReadonlySet<string> = new Set(terminalStatuses);

/** Whether `status` is terminal. Accepts any string, so timeline kinds can be asked too. */
export function isTerminal(status: string): status is TerminalStatus {
  return terminal.has(status);
}

export function isWorkflowStatus(value: unknown): value is WorkflowStatus {
  return typeof value === 'string' && (workflowStatuses as readonly string[]).includes(value);
}

/** Every kind of timeline entry, in roughly the order a workflow meets them. */
export const timelineKinds = [
  'scheduled',
  'started',
  'claim-acquired',
  'claim-taken-over',
  'claim-released',
  'activity-started',
  'activity-completed',
  'activity-failed',
  'activity-retry-scheduled',
  'timer-armed',
  'timer-fired',
  'signal-received',
  'signal-consumed',
  'message-sent',
  'wait-completed',
  'update-applied',
  'update-rejected',
  'child-started',
  'child-completed',
  'cancel-requested',
  'suspended',
  'resumed',
  ...terminalStatuses,
] as const;

export type TimelineKind = (typeof timelineKinds)[number];

/** The timeline kinds that give a workflow a new owner or a new epoch. */
export const ownershipKinds = ['claim-acquired', 'claim-taken-over', 'claim-released'] as const;

/** Why a claim was taken over: its holder's claim expired, its engine died or stopped, or it was unreadable. */
export type TakeoverReason = 'expired' | 'holder-dead' | 'holder-stopped' | 'orphaned' | 'undecodable-holder';

/**
 * How an engine came to hold a workflow, as a `claim-acquired` entry says. `continue-as-new`: the claim the
 * run before held, carried into the run it started (the first entries of the new run's timeline).
 */
export type AcquireHow =
  'start' | 'child' | 'acquire' | 'resume' | 'delayed-start' | 'queue' | 'continue-as-new';

/** The entries of one kind of a timeline, typed by that kind. */
export function entriesOf<K extends TimelineKind>(
  timeline: readonly TimelineEntry[],
  kind: K,
): Extract<TimelineEntry, { kind: K }>[] {
  return timeline.filter((entry): entry is Extract<TimelineEntry, { kind: K }> => entry.kind === kind);
}

/** Where a value is not plain JSON data, and why (see `findNotPlainData`). */
export type NotPlainData = { path: string; reason: string };

function describeNotPlain(value: unknown): string {
  if (value === undefined) return 'is undefined';
  if (typeof value === 'function') return 'is a function';
  if (typeof value === 'symbol') return 'is a symbol';
  if (typeof value === 'bigint') return 'is a BigInt';
  if (typeof value === 'number') return `is the number ${String(value)}`;
  const ctor = (value as { constructor?: { name?: string } }).constructor?.name;
  return `is a ${ctor ?? 'non-plain object'}`;
}

/**
 * The first place where `value` is not plain JSON data, or null when it is: the one rule for what a payload
 * may be (the engine's codec refuses what this finds; a studio connected to a server checks it before JSON
 * would silently change the value on the wire). Plain data is objects with a plain (or null) prototype,
 * arrays, strings, finite numbers, booleans and null; `undefined` inside an object is dropped and inside an
 * array becomes null, as JSON does. Functions, symbols, BigInt, NaN and ±Infinity, cycles and class instances
 * (Date, Map, …) are not. `path` names the value in the answer (`input.items[2]`); empty means the value
 * itself.
 */
export function findNotPlainData(value: unknown, path = ''): NotPlainData | null {
  const seen = new Set<object>();
  const walk = (item: unknown, at: string): NotPlainData | null => {
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return null;
      case 'number':
        return Number.isFinite(item) ? null : { path: at, reason: describeNotPlain(item) };
      case 'object': {
        if (item === null) return null;
        if (seen.has(item)) return { path: at, reason: 'refers to itself (a cycle)' };
        const proto = Object.getPrototypeOf(item) as unknown;
        if (!Array.isArray(item) && proto !== Object.prototype && proto !== null)
          return { path: at, reason: describeNotPlain(item) };
        seen.add(item);
        const entries = Array.isArray(item)
          ? item.map((member, index) => [`${at}[${index}]`, member] as const)
          : Object.entries(item).map(([key, member]) => [at ? `${at}.${key}` : key, member] as const);
        for (const [where, member] of entries) {
          if (member === undefined) continue; // dropped, or null in an array, as JSON does
          const found = walk(member, where);
          if (found) return found;
        }
        seen.delete(item);
        return null;
      }
      default:
        return { path: at, reason: describeNotPlain(item) };
    }
  };
  return walk(value, path);
}
