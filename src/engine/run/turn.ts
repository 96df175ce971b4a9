/**
 * One turn of a run: everything it learnt, gathered as one batch (history entries, timeline notes, storage
 * operations and conditions, effects to run after the commit lands), and the small pure helpers that turn
 * recorded history into what the generator sees (outcomes, materialised errors, state restored in place)
 * and step the generator (`stepGenerator`, `resumeGenerator`).
 */
import type { Condition, Operation as StorageOperation } from '../../storage/types';
import {
  ActivityFailedError,
  CancelledError,
  ChildWorkflowFailedError,
  deserializeError,
  type SerializedError,
} from '../errors';
import type { HistoryEntry, TimelineDetails, TimelineKind, TimelineNote } from '../records';
import { describeCommand, type Command, type LeafCommand } from '../workflow';
import type { ActivityAttempt } from './activity-attempt';

/**
 * Most characters of failure stacks one turn records (each stack is bounded by `boundStack` already): a turn
 * that settles many failed attempts at once (a large `all`) keeps its commit record well under the storage
 * value limit. Past it, failures are recorded without their stacks.
 */
export const turnStackBudget = 65_536;

/** Everything one turn learnt, committed as one batch. */
export class Turn {
  readonly history: HistoryEntry[] = [];
  readonly timeline: TimelineNote[] = [];
  readonly operations: StorageOperation[] = [];
  readonly conditions: Condition[] = [];
  readonly afterCommit: (() => void)[] = [];
  readonly kinds: string[] = [];
  /** `ctx.signalWorkflow`: the next signal number this turn takes, per target (run/messages.ts). */
  readonly signalCounters = new Map<string, number>();
  /** `ctx.setAttributes` changed the run's record (run/attributes.ts): the commit rewrites it. */
  recordChanged = false;
  /** Set when the checkpoint changed in a way that must be committed even without history. */
  dirty = false;
  /** Characters of failure stacks this turn may still record (`keepStack`). */
  #stackBudget = turnStackBudget;

  /** `failure`, or a copy without its stack once this turn's budget is spent (`copies`: times it is stored). */
  keepStack(failure: SerializedError, copies = 1): SerializedError {
    if (failure.stack === undefined) return failure;
    const cost = failure.stack.length * copies;
    if (cost > this.#stackBudget) return stripStack(failure);
    this.#stackBudget -= cost;
    return failure;
  }

  put(key: string, value: string): void {
    this.operations.push({ type: 'put', key, value });
    this.dirty = true;
  }

  delete(key: string): void {
    this.operations.push({ type: 'delete', key });
    this.dirty = true;
  }

  note<K extends TimelineKind>(kind: K, detail: TimelineDetails[K], at?: number): void {
    const note = { kind, detail, ...(at === undefined ? {} : { at }) } as TimelineNote;
    this.timeline.push(note);
    this.dirty = true;
  }

  get isEmpty(): boolean {
    return !this.dirty && this.history.length === 0 && this.timeline.length === 0;
  }
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export type RunningActivity = ActivityAttempt;

export function isOperationEntry(entry: HistoryEntry): entry is Extract<HistoryEntry, { t: 'op' }> {
  return entry.t === 'op';
}

/** Rebuilds the error a recorded failure throws into the workflow, with its class where the engine owns it. */
export function materializeError(error: SerializedError): Error {
  const details = error.details ?? {};
  switch (error.name) {
    case 'CancelledError':
      return new CancelledError(typeof details.reason === 'string' ? details.reason : undefined);
    case 'ActivityFailedError':
      return new ActivityFailedError(
        String(details.activityName),
        Number(details.attempts),
        details.failure as SerializedError,
      );
    case 'ChildWorkflowFailedError':
      return new ChildWorkflowFailedError(
        String(details.childId),
        String(details.childStatus),
        (details.failure as SerializedError | null) ?? null,
      );
    default:
      return deserializeError(error);
  }
}

/** Mutates `target` in place to equal `source`, keeping object identity where shapes match. */
export function reconcileInPlace(
  target: Record<string, unknown> | unknown[],
  source: Record<string, unknown> | unknown[],
): void {
  if (Array.isArray(target) && Array.isArray(source)) {
    target.length = source.length;
    source.forEach((value, index) => {
      const current = target[index];
      if (isContainer(current) && isContainer(value) && Array.isArray(current) === Array.isArray(value))
        reconcileInPlace(current, value);
      else target[index] = value;
    });
    return;
  }
  const t = target as Record<string, unknown>;
  const s = source as Record<string, unknown>;
  for (const key of Object.keys(t)) if (!(key in s)) delete t[key];
  for (const [key, value] of Object.entries(s)) {
    const current = t[key];
    if (isContainer(current) && isContainer(value) && Array.isArray(current) === Array.isArray(value))
      reconcileInPlace(current, value);
    else t[key] = value;
  }
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

export function leafCommands(command: Command): LeafCommand[] {
  return command.kind === 'all' || command.kind === 'race' ? command.members : [command as LeafCommand];
}

export type Step =
  | { kind: 'yield'; command: Command }
  | { kind: 'return'; value: unknown }
  | { kind: 'throw'; error: unknown };

/** Advances the generator once: what it yielded, returned or threw. */
export function stepGenerator(advance: () => IteratorResult<Command, unknown>): Step {
  try {
    const result = advance();
    if (result.done) return { kind: 'return', value: result.value };
    return { kind: 'yield', command: result.value };
  } catch (error) {
    return { kind: 'throw', error };
  }
}

/** Resumes the generator with an operation's outcome: its value, or its error thrown into the workflow. */
export function resumeGenerator(generator: Generator<Command, unknown, unknown>, outcome: Outcome): Step {
  return outcome.ok
    ? stepGenerator(() => generator.next(outcome.value))
    : stepGenerator(() => generator.throw(outcome.error));
}

export function entryOutcome(entry: Extract<HistoryEntry, { t: 'op' }>): Outcome {
  return entry.ok ? { ok: true, value: entry.value } : { ok: false, error: materializeError(entry.error) };
}

export function describeRecorded(entries: HistoryEntry[] | undefined): string {
  const entry = entries?.find(isOperationEntry);
  return entry ? describeCommand(entry) : 'nothing';
}

export function stripStack(error: SerializedError): SerializedError {
  const copy = { ...error };
  delete copy.stack;
  return copy;
}

export function isCommand(value: unknown): value is Command {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    typeof (value as { name?: unknown }).name === 'string'
  );
}
