/**
 * Replay testing: does the code of today still replay the histories recorded by the code of yesterday?
 * `replay(definitions, history)` runs one recorded run's history against a definition the way an engine
 * does on a handoff (run/replay.ts: the same determinism check, patches included), without storage,
 * activities or time, and reports the first divergence: the position, what the history recorded there and
 * what the code yields now. A run that ended must also end where its history ends.
 *
 * Histories come from `engine.history(id, { run })` (a `RecordedHistory`: JSON, so a file of them is a test
 * fixture), the studio's export, or `shuttle replay`, which reads them from a store. Pure: no engine, no I/O.
 */
import { InvalidArgumentError, NonDeterminismError, serializeError, type SerializedError } from './errors';
import {
  isTerminal,
  type Checkpoint,
  type Frontier,
  type HistoryEntry,
  type WorkflowRecord,
} from './records';
import { createContext } from './run/context';
import { replay as replayInto } from './run/replay';
import { FrontierResults } from './run/run-state';
import type { Json } from './codec';
import type { WorkflowStatus } from './vocabulary';
import { describeCommand, type AnyWorkflowDefinition } from './workflow';

/** The format tag of a `RecordedHistory`. */
export const historyFormat = 'shuttle-history/1';

/** What replay needs of one run: its identity, its input, how far it got, and its history entries. */
export type RecordedHistory = {
  format: typeof historyFormat;
  workflowId: string;
  run: number;
  workflowType: string;
  version: number;
  status: WorkflowStatus;
  input?: Json;
  /** Operations it resolved. */
  position: number;
  /** What it waits on at `position` (unfinished runs), or null. */
  frontier: Frontier | null;
  /** Its history entries, in order (`HistoryEntry`: an operation's outcome, or an applied update). */
  entries: HistoryEntry[];
};

/** The history of a run, as `RecordedHistory`. */
export function recordedHistory(
  record: WorkflowRecord,
  checkpoint: Checkpoint,
  entries: HistoryEntry[],
): RecordedHistory {
  return {
    format: historyFormat,
    workflowId: record.id,
    run: record.run,
    workflowType: record.type,
    version: record.version,
    status: record.status,
    ...(record.input === undefined ? {} : { input: record.input }),
    position: checkpoint.position,
    frontier: checkpoint.frontier,
    entries,
  };
}

/**
 * The recorded histories in a parsed JSON document: one `RecordedHistory`, an array of them, or a studio
 * export (its `history`). `InvalidArgumentError` naming `where` and what is wrong otherwise.
 */
export function historiesIn(document: unknown, where: string): RecordedHistory[] {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const check = (value: unknown, at: string): RecordedHistory => {
    const problem = !isObject(value)
      ? 'not an object'
      : value.format !== historyFormat
        ? `format is ${JSON.stringify(value.format)}, not '${historyFormat}'`
        : typeof value.workflowId !== 'string' || typeof value.workflowType !== 'string'
          ? 'workflowId and workflowType must be strings'
          : ![value.run, value.version, value.position].every(
                (n) => Number.isSafeInteger(n) && (n as number) >= 0,
              )
            ? 'run, version and position must be whole numbers'
            : !Array.isArray(value.entries) ||
                !value.entries.every((entry) => isObject(entry) && (entry.t === 'op' || entry.t === 'update'))
              ? 'entries must be an array of history entries ({ t: "op" | "update", pos, … })'
              : value.frontier !== null && !isObject(value.frontier)
                ? 'frontier must be an object or null'
                : null;
    if (problem) throw new InvalidArgumentError(`${at} is not a recorded history: ${problem}.`);
    return value as unknown as RecordedHistory;
  };
  if (Array.isArray(document)) return document.map((item, index) => check(item, `${where} [${index}]`));
  if (isObject(document) && document.format === 'shuttle.workflow-export') {
    if (document.history === undefined)
      throw new InvalidArgumentError(
        `${where} is a studio export without a history (exported before exports carried one): export it again, or save engine.history(id).`,
      );
    return [check(document.history, `${where} (its history)`)];
  }
  return [check(document, where)];
}

export type ReplayReport = {
  workflowId: string;
  run: number;
  workflowType: string;
  version: number;
} & (
  | { ok: true; /** Operations replayed. */ operations: number }
  | {
      ok: false;
      /** `diverged`: the code yields other operations; `no-definition`: the type and version are not given. */
      problem: 'diverged' | 'no-definition';
      /** Where it diverged, and what the history recorded there and what the code yields now. */
      position?: number;
      recorded?: string;
      replayed?: string;
      error: SerializedError;
    }
);

/**
 * Replays `history` against the definition of its type and version among `definitions` and reports the
 * first divergence, or `ok`. Never throws for a bad history or code: that is the report.
 */
export function replay(
  definitions: readonly AnyWorkflowDefinition[],
  history: RecordedHistory,
): ReplayReport {
  const { workflowId, run, workflowType, version } = history;
  const who = { workflowId, run, workflowType, version };
  const definition = definitions.find(
    (candidate) => candidate.name === workflowType && candidate.version === version,
  );
  if (!definition) {
    const have = definitions.filter((candidate) => candidate.name === workflowType).map((d) => d.version);
    const message = `No definition of '${workflowType}' version ${version} was given${have.length > 0 ? ` (only version ${have.join(', ')})` : ''}: a run of it cannot be replayed.`;
    return {
      ...who,
      ok: false,
      problem: 'no-definition',
      error: { name: 'WorkflowNotRegisteredError', message },
    };
  }
  const record = {
    v: 1,
    id: workflowId,
    type: workflowType,
    version,
    run,
    status: history.status,
    ...(history.input === undefined ? {} : { input: history.input }),
    createdAt: 0,
    createdBy: 'replay',
  } satisfies WorkflowRecord;
  const state = {
    id: workflowId,
    // An engine's workflow interceptors are its own: this check replays the workflow's code alone.
    host: { workflowInterceptors: [] },
    definition,
    record,
    checkpoint: {
      v: 1,
      run,
      historyLength: history.entries.length,
      timelineLength: 0,
      position: history.position,
      state: {},
      frontier: history.frontier,
      cancel: null,
      linkedChildren: [],
      updatedAt: 0,
    } satisfies Checkpoint,
    state: {},
    replaying: false,
    generator: null as Generator | null,
    command: null,
    results: new FrontierResults(),
  };
  const ctx = createContext({
    workflowId,
    workflowType,
    version,
    ...(definition.attributes ? { attributes: definition.attributes } : {}),
    get state() {
      return state.state;
    },
    get isReplaying() {
      return state.replaying;
    },
  });
  const replayed = replayInto(state as Parameters<typeof replayInto>[0], ctx, history.entries);
  let failure = replayed.failure;
  // A run that ended must end where its history ends, and as it ended: by ctx.continueAsNew where it
  // continued as new, by returning or throwing otherwise. Code that goes on from there diverged.
  const continued = history.status === 'continued-as-new';
  const next = replayed.pendingLiveCommand;
  if (!failure && isTerminal(history.status)) {
    if (next && !(continued && next.kind === 'continue-as-new'))
      failure = new NonDeterminismError(
        workflowId,
        history.position,
        continued ? 'continue-as-new' : 'the end of the workflow',
        describeCommand(next),
      );
    else if (continued && replayed.end)
      failure = new NonDeterminismError(
        workflowId,
        history.position,
        'continue-as-new',
        'the end of the workflow',
      );
  }
  if (!failure) return { ...who, ok: true, operations: history.position };
  return {
    ...who,
    ok: false,
    problem: 'diverged',
    ...(failure instanceof NonDeterminismError
      ? { position: failure.position, recorded: failure.recorded, replayed: failure.replayed }
      : {}),
    error: serializeError(failure),
  };
}
