/**
 * The workflows domain of the wire contract: start, message, steer and read workflows.
 */
import type {
  ListFilter,
  ListPage,
  OperationOutcome,
  PurgeReport,
  RecordedHistory,
  ReplayReport,
  RunSummary,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
} from '../engine';
import { method } from './declare';

/** What a start answers: the id and run it started, and whether it started one (idempotency). */
export type StartedRun = { workflowId: string; run: number; started: boolean };

export const workflowMethods = {
  /**
   * Starts a workflow of a registered type. The result is the id and the run it started (1, or the next run
   * of a finished id started again); `started: false` when `options.idempotencyKey` had already started a
   * run within the engine's window: that run is returned and nothing was created.
   */
  start: method<{ workflowType: string; input?: unknown; options?: StartOptions }, StartedRun>({
    workflowType: 'string',
    input: 'unknown?',
    options: 'object?',
  }),
  /** Signals workflow `options.id` if it runs, else starts it with the signal in the same commit. */
  signalWithStart: method<
    {
      workflowType: string;
      input?: unknown;
      signalName: string;
      payload?: unknown;
      options: StartOptions & { id: string };
    },
    StartedRun
  >({
    workflowType: 'string',
    input: 'unknown?',
    signalName: 'string',
    payload: 'unknown?',
    options: 'object',
  }),
  signal: method<{ workflowId: string; name: string; payload?: unknown }, null>({
    workflowId: 'string',
    name: 'string',
    payload: 'unknown?',
  }),
  /** Completes an external activity (its token: `describe(id).pending.leaves[i].completionToken`). */
  completeActivity: method<{ token: string; result?: unknown }, null>({
    token: 'string',
    result: 'unknown?',
  }),
  /** Fails an external activity with `{ name?, message }`. */
  failActivity: method<{ token: string; error: { name?: string; message: string } }, null>({
    token: 'string',
    error: 'object',
  }),
  query: method<{ workflowId: string; name: string; arg?: unknown }, unknown>({
    workflowId: 'string',
    name: 'string',
    arg: 'unknown?',
  }),
  update: method<{ workflowId: string; name: string; arg?: unknown; timeoutMs?: number }, unknown>({
    workflowId: 'string',
    name: 'string',
    arg: 'unknown?',
    timeoutMs: 'number?',
  }),
  cancel: method<{ workflowId: string; reason?: string }, null>({ workflowId: 'string', reason: 'string?' }),
  terminate: method<{ workflowId: string; reason?: string }, null>({
    workflowId: 'string',
    reason: 'string?',
  }),
  suspend: method<{ workflowId: string }, null>({ workflowId: 'string' }),
  resume: method<{ workflowId: string }, null>({ workflowId: 'string' }),
  /** Waits for the workflow (its latest run, or `run`) to finish (as a result waiter of this engine). */
  result: method<{ workflowId: string; run?: number }, unknown>({ workflowId: 'string', run: 'integer?' }),
  /**
   * The latest run, or `run`: an earlier run kept by run history. A running workflow's description lists the
   * signals buffered for it, sent but not consumed yet (`bufferedSignals`, at most 100, oldest first).
   */
  describe: method<{ workflowId: string; run?: number }, WorkflowDescription>({
    workflowId: 'string',
    run: 'integer?',
  }),
  /** Every stored run of a workflow id, latest first. */
  runs: method<{ workflowId: string }, RunSummary[]>({ workflowId: 'string' }),
  list: method<{ filter?: ListFilter }, ListPage>({ filter: 'object?' }),
  timeline: method<{ workflowId: string; run?: number; after?: number; limit?: number }, TimelineEntry[]>({
    workflowId: 'string',
    run: 'integer?',
    after: 'integer?',
    limit: 'integer?',
  }),
  /**
   * The recorded history of the latest run (or `run`), as replay testing takes it (`replay(definitions,
   * history)`, `shuttle replay --file`): the run's identity, input, position and history entries.
   */
  history: method<{ workflowId: string; run?: number }, RecordedHistory>({
    workflowId: 'string',
    run: 'integer?',
  }),
  /**
   * Replays the latest run (or `run`) against the definitions this engine has registered now, as a handoff
   * would, and reports the first divergence (`replay(definitions, history)`), or `ok`.
   */
  checkReplay: method<{ workflowId: string; run?: number }, ReplayReport>({
    workflowId: 'string',
    run: 'integer?',
  }),
  /**
   * What the history of the latest run (or `run`) recorded for one operation: the result or error of the
   * operation at `pos` (`member` inside all / race, default 0) — an activity's or child's result, a signal's
   * payload — or, given `updateId` instead, the state right after that update; null while nothing is
   * recorded. Timeline entries name the operation (`detail.pos`, `detail.member`) but carry no value.
   */
  operationOutcome: method<
    { workflowId: string; run?: number; pos?: number; member?: number; updateId?: string },
    OperationOutcome | null
  >({
    workflowId: 'string',
    run: 'integer?',
    pos: 'integer?',
    member: 'integer?',
    updateId: 'string?',
  }),
  /**
   * Runs a workflow again from operation `fromPosition` of run `run` (default the latest): the outcomes before
   * it are replayed, it and what follows run anew — as the next run of the same id (which must have ended) or
   * as `newId`; on definition `version` (default the source's). Without `fromPosition`, a run that ended badly
   * is forked from where it stopped. The result is the id and run of the fork.
   */
  fork: method<
    { workflowId: string; fromPosition?: number; run?: number; newId?: string; version?: number },
    { workflowId: string; run: number }
  >({
    workflowId: 'string',
    fromPosition: 'integer?',
    run: 'integer?',
    newId: 'string?',
    version: 'integer?',
  }),
  /** Deletes every run of a finished workflow, or only the earlier run `run`. */
  purge: method<{ workflowId: string; run?: number }, PurgeReport>({ workflowId: 'string', run: 'integer?' }),
  /**
   * Purges every finished workflow `filter` matches (its status, if given, must be finished ones; default
   * every finished status), all of its runs; `dryRun` only counts them. `failed` names any it could not
   * purge (e.g. started again meanwhile).
   */
  purgeFinished: method<
    { filter?: ListFilter; dryRun?: boolean },
    { matched: number; purged: number; failed: { workflowId: string; message: string }[] }
  >({ filter: 'object?', dryRun: 'boolean?' }),
} as const;
