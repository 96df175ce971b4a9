/**
 * Fork: a new run that replays the recorded outcomes of another run's first operations and continues live
 * from a chosen one — "run again from here" after a bug is fixed or a downstream outage is over (DBOS's
 * `forkWorkflow`, Temporal's `workflow reset`).
 *
 * A fork is a start (lifecycle.ts) whose first log record carries history: the source run's entries for
 * operations `0 … fromPosition - 1` (and the updates applied before them), copied as they were recorded,
 * and whose checkpoint stands at `fromPosition`. Nothing else is special: the run that drives it loads it as
 * any run, replays those entries (run/replay.ts: the determinism check applies, so code that yields other
 * operations before `fromPosition` fails the fork with `NonDeterminismError` on its first turn) and arms
 * operation `fromPosition` live. Activities before it do not run again; it and everything after it do.
 *
 * The fork is the next run of the same id (the source's id must then be finished), or the first run of
 * `newId` (or its next, like any start of a finished id). The source may be any stored run, the latest or an
 * earlier one kept by run history, running or finished: outcomes before its position are final.
 */
import type { Storage } from '../storage/types';
import { InvalidOptionsError, WorkflowNotFoundError } from './errors';
import { assertRunNumber, assertWorkflowId } from './ids';
import { readHistoryBefore } from './inspect';
import { keys } from './keys';
import {
  decodePastRun,
  isTerminal,
  type Checkpoint,
  type HistoryEntry,
  type WorkflowRecord,
} from './records';

export type ForkOptions = {
  /**
   * The operation the fork runs anew (its position, as timeline entries name it: `detail.pos`); the outcomes
   * of every operation before it are replayed. 0 runs the whole workflow again on the same input; at most
   * the number of operations the source run resolved. Default, for a run that failed, was cancelled,
   * terminated or timed out: where it stopped — the operation whose failure (or cancellation) ended it, or
   * else the one it was waiting on. A completed or unfinished run needs it given.
   */
  fromPosition?: number;
  /** The run to copy: default the latest run of the id. */
  run?: number;
  /** Fork into this workflow id instead of a new run of the same one. */
  newId?: string;
  /**
   * The definition version the fork runs on: default the source run's. A newer version replays the copied
   * operations under the determinism check, so it must yield the same operations before `fromPosition`.
   */
  version?: number;
};

const forkOptionNames = ['fromPosition', 'run', 'newId', 'version'];

/** Checks `fork`'s arguments before anything is read. */
export function validateForkOptions(options: unknown): ForkOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidOptionsError(
      'fork options must be an object like { fromPosition: 3 } (the operation to run again).',
    );
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (!forkOptionNames.includes(key))
      throw new InvalidOptionsError(
        `Unknown fork option '${key}'; use ${forkOptionNames.slice(0, -1).join(', ')} or version.`,
      );
  const { fromPosition, run, newId, version } = given;
  if (
    fromPosition !== undefined &&
    (typeof fromPosition !== 'number' || !Number.isSafeInteger(fromPosition) || fromPosition < 0)
  )
    throw new InvalidOptionsError(
      `fork option fromPosition must be an operation's position, an integer from 0 (run everything again); got ${JSON.stringify(fromPosition)}.`,
    );
  if (run !== undefined) assertRunNumber(run);
  if (newId !== undefined) assertWorkflowId(newId, 'fork option newId');
  if (version !== undefined && (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1))
    throw new InvalidOptionsError(
      `fork option version must be a definition version, a positive integer; got ${JSON.stringify(version)}.`,
    );
  return given as ForkOptions;
}

/** The run a fork copies: its record and last checkpoint, and whether it is the id's latest run. */
export type ForkSource = { record: WorkflowRecord; checkpoint: Checkpoint; latest: boolean };

/**
 * The run `run` of `workflowId` (default: its latest), from `latest` — the id's current record and
 * checkpoint, as the caller read them — or from run history. `WorkflowNotFoundError` when it is not stored.
 */
export async function readForkSource(
  storage: Storage,
  workflowId: string,
  run: number | undefined,
  latest: { record: WorkflowRecord; checkpoint: Checkpoint } | null,
): Promise<ForkSource> {
  if (!latest) throw new WorkflowNotFoundError(workflowId);
  if (run === undefined || run === latest.record.run) return { ...latest, latest: true };
  const key = keys.pastRun(workflowId, run);
  const raw = run < latest.record.run ? await storage.get(key) : null;
  if (!raw) throw new WorkflowNotFoundError(workflowId, run);
  return { ...decodePastRun(key, raw), latest: false };
}

/**
 * Where the fork continues and what it copies of `source`: the history entries before `fromPosition`, after
 * checking that the run got that far (its checkpoint's position: the operations it resolved). Without
 * `fromPosition`, where a run that ended badly stopped (`ForkOptions.fromPosition`).
 */
export async function forkHistory(
  storage: Storage,
  source: ForkSource,
  fromPosition: number | undefined,
): Promise<{ position: number; history: HistoryEntry[] }> {
  const { record, checkpoint } = source;
  if (fromPosition === undefined) {
    if (!isTerminal(record.status) || record.status === 'completed' || record.status === 'continued-as-new')
      throw new InvalidOptionsError(
        `fork needs fromPosition for run ${record.run} of workflow '${record.id}': it is ${record.status}, and only a run that failed, was cancelled, terminated or timed out has a place it stopped at. Name the operation to run again (0 to ${checkpoint.position}).`,
      );
    const history = await readHistoryBefore(storage, record.id, record.run, checkpoint.position);
    // The operation whose failure or cancellation was delivered to the code is the last one it resolved.
    const stoppedBy = history.findLast((entry) => entry.t === 'op' && entry.pos === checkpoint.position - 1);
    const position = stoppedBy && stoppedBy.t === 'op' && !stoppedBy.ok ? stoppedBy.pos : checkpoint.position;
    return { position, history: history.filter((entry) => entry.pos < position) };
  }
  if (fromPosition > checkpoint.position)
    throw new InvalidOptionsError(
      `fork option fromPosition is ${fromPosition}, but run ${record.run} of workflow '${record.id}' resolved only ${checkpoint.position} operation(s): fork from 0 to ${checkpoint.position}.`,
    );
  return {
    position: fromPosition,
    history: await readHistoryBefore(storage, record.id, record.run, fromPosition),
  };
}
