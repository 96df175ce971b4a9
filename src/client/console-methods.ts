/**
 * The console API's methods (`window.shuttle`, README "Console API"), which the UI's data layer calls too:
 * positional arguments for people typing in devtools, each one line over `client.api` (api.ts), the facade
 * derived from the protocol's declarations. Grouped by the protocol's domains (src/protocol): workflows,
 * schedules, queues, definitions, inspection, fleet. `ShuttleClient` (client.ts) inherits them and adds what runs on
 * the page itself: `hello`, `waitFor`, `chaos`, restarting and freezing this tab's engine, the link's state.
 *
 * A method the console does not need positional arguments for is not written here: `client.api.<method>`
 * has every method of the wire contract.
 */
import type {
  ClaimHolder,
  ClaimInfo,
  EngineMetrics,
  FenceRejection,
  ListFilter,
  ListPage,
  OperationOutcome,
  PurgeReport,
  QueuePosition,
  QueueView,
  ReclaimOutcome,
  ResultWaiterInfo,
  RunSummary,
  ScheduleInfo,
  ScheduleSpecInput,
  ShutdownReport,
  StartOptions,
  TimelineEntry,
  WorkflowDescription,
} from '../engine';
import type {
  ActivityLimitView,
  CompileReport,
  DefinitionInfo,
  DeleteOutcome,
  EngineRecord,
  Result,
  SaveOutcome,
  SchedulePreview,
} from '../protocol';
import { optional, type ProtocolApi } from './api';

/** The console's methods over the protocol's facade; see `ShuttleClient`. */
export abstract class ConsoleMethods {
  /** Every method of the wire contract, one function each (`ShuttleClient.api`, built in api.ts). */
  abstract readonly api: ProtocolApi;

  // -------------------------------------------------------------------------------------------------------
  // Workflows

  /**
   * Starts a workflow of a registered type and resolves with its id. In a viewer tab the workflow is created
   * here and run by another tab's engine.
   *
   * @param workflowType A definition name, e.g. `'countdown'` (see `definitions()`).
   * @param input The workflow's input (plain JSON data).
   * @param options `{ id?, executionTimeoutMs?, startDelayMs?, idReuse?, idempotencyKey? }`. A finished id
   * may be started again (a new run; the earlier one stays readable with `describe(id, { run })`):
   * `idReuse` is `'same-type'` (default), `'any-type'` or `'never'`. A repeated `idempotencyKey` (within the
   * engine's window, 24 h by default) resolves with the id of the run it started, creating nothing
   * (`startRun` says which happened).
   * @example
   * const id = await shuttle.start('countdown', { from: 5, tickMs: 200 }, { id: 'demo-1' });
   */
  async start(workflowType: string, input?: unknown, options?: StartOptions): Promise<string> {
    return (await this.startRun(workflowType, input, options)).workflowId;
  }

  /**
   * Like `start`, but resolves with the id, the run number, and `started`: false when the `idempotencyKey`
   * had already started that run (nothing was created).
   * @example
   * const first = await shuttle.startRun('countdown', { from: 5 }, { idempotencyKey: 'order-42' });
   * const again = await shuttle.startRun('countdown', { from: 5 }, { idempotencyKey: 'order-42' });
   * // again.workflowId === first.workflowId, again.started === false
   */
  startRun(workflowType: string, input?: unknown, options?: StartOptions): Promise<Result<'start'>> {
    return this.api.start({ workflowType, ...optional({ input, options }) });
  }

  /**
   * Signals workflow `options.id` if it is running; otherwise starts it (a finished id: a new run) with the
   * signal already buffered, in one commit. Resolves with the run that got the signal.
   * @example
   * await shuttle.signalWithStart('approval', { order: 7 }, 'approve', { by: 'ana' }, { id: 'approval-7' });
   */
  signalWithStart(
    workflowType: string,
    input: unknown,
    signalName: string,
    payload: unknown,
    options: StartOptions & { id: string },
  ): Promise<Result<'signalWithStart'>> {
    return this.api.signalWithStart({ workflowType, signalName, options, ...optional({ input, payload }) });
  }

  /**
   * Completes an external activity (`completion: 'external'`) with `result`, exactly once; its token is in
   * `describe(id).pending.leaves[i].completionToken`.
   * @example
   * await shuttle.completeActivity(token, { approved: true });
   */
  async completeActivity(token: string, result?: unknown): Promise<void> {
    await this.api.completeActivity({ token, ...optional({ result }) });
  }

  /** Fails an external activity; its retry policy applies. */
  async failActivity(token: string, error: { name?: string; message: string } | string): Promise<void> {
    await this.api.failActivity({ token, error: typeof error === 'string' ? { message: error } : error });
  }

  /** Sends a signal; it is stored durably and consumed by the workflow's owner, in whichever tab. */
  async signal(workflowId: string, name: string, payload?: unknown): Promise<void> {
    await this.api.signal({ workflowId, name, ...optional({ payload }) });
  }

  /** Runs a query handler over the workflow's last committed state. */
  query<T = unknown>(workflowId: string, name: string, arg?: unknown): Promise<T> {
    return this.api.query({ workflowId, name, ...optional({ arg }) }) as Promise<T>;
  }

  /**
   * Sends an update: validated here, applied once by the owner; resolves with the handler's return value.
   *
   * @param options `{ timeoutMs }`: how long to wait for the owner to apply it. Default 60,000.
   */
  update<T = unknown>(
    workflowId: string,
    name: string,
    arg?: unknown,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    return this.api.update({
      workflowId,
      name,
      ...optional({ arg, timeoutMs: options.timeoutMs }),
    }) as Promise<T>;
  }

  /** Asks the workflow to cancel (cooperatively: it may run cleanup and ends `cancelled`). */
  async cancel(workflowId: string, reason?: string): Promise<void> {
    await this.api.cancel({ workflowId, ...optional({ reason }) });
  }

  /** Ends the workflow at once as `terminated`, whichever tab owns it; no more of its code runs. */
  async terminate(workflowId: string, reason?: string): Promise<void> {
    await this.api.terminate({ workflowId, ...optional({ reason }) });
  }

  /** Parks the workflow durably and releases its claim, until `resume`. */
  async suspend(workflowId: string): Promise<void> {
    await this.api.suspend({ workflowId });
  }

  /** Resumes a suspended workflow; this tab's engine claims it and continues from its checkpoint. */
  async resume(workflowId: string): Promise<void> {
    await this.api.resume({ workflowId });
  }

  /**
   * Waits for the workflow to finish and resolves with its result, or rejects with its error
   * (`WorkflowFailedError`, `WorkflowCancelledError`, …). Registers a result waiter on this tab's engine.
   * No time limit: it waits as long as the worker lives.
   */
  result<T = unknown>(workflowId: string, options: { run?: number } = {}): Promise<T> {
    return this.api.result({ workflowId, ...options }) as Promise<T>;
  }

  /**
   * Status, type, version, owner and epoch, what it waits on, state, input, result or error — of the latest
   * run, or of `{ run }`, an earlier run kept by run history.
   */
  describe(workflowId: string, options: { run?: number } = {}): Promise<WorkflowDescription> {
    return this.api.describe({ workflowId, ...options });
  }

  /** Every stored run of a workflow id, latest first: `{ run, status, workflowType, createdAt, latest, … }`. */
  runs(workflowId: string): Promise<RunSummary[]> {
    return this.api.runs({ workflowId });
  }

  /**
   * A page of workflow summaries.
   *
   * @param filter `{ status?, workflowType?, ownerEngineId?, idPrefix?, limit? (1–1000, default 100), cursor?,
   * allRuns?, createdFrom?, createdTo?, endedFrom?, endedTo? }`; `allRuns: true` lists earlier runs too, each
   * after its workflow's latest run; the time bounds are epoch ms (`from` ≤ t < `to`).
   */
  list(filter?: ListFilter): Promise<ListPage> {
    return this.api.list(optional({ filter }));
  }

  /** The workflow's durable timeline: `{ seq, at, engineId, epoch, kind, detail }` entries in order. */
  timeline(
    workflowId: string,
    options: { run?: number; after?: number; limit?: number } = {},
  ): Promise<TimelineEntry[]> {
    return this.api.timeline({ workflowId, ...options });
  }

  /**
   * What the run's history recorded for one operation — the result or error of the operation at `pos`
   * (`member` inside all / race, default 0): an activity's or child's result, a signal's payload, a
   * `waitUntil`'s true or false — or, with `{ updateId }`, the workflow's state right after that update. Of
   * the latest run, or `{ run }`. Null while nothing is recorded (the operation has not finished). Timeline
   * entries name the operation in `detail.pos` / `detail.member` and carry no values.
   * @example
   * const done = (await shuttle.timeline(id)).find((entry) => entry.kind === 'activity-completed');
   * await shuttle.operationOutcome(id, { pos: done.detail.pos, member: done.detail.member })
   * // → { kind: 'activity', name: 'charge', pos: 1, ok: true, value: { chargeId: 'ch_A-1' } }
   */
  operationOutcome(
    workflowId: string,
    of: ({ pos: number; member?: number } | { updateId: string }) & { run?: number },
  ): Promise<OperationOutcome | null> {
    return this.api.operationOutcome({ workflowId, ...of });
  }

  /**
   * The recorded history of the latest run (or `run`), as replay testing takes it: save it as a fixture and
   * check code against it with `replay(definitions, history)` (package `shuttle`) or `shuttle replay --file`.
   */
  history(workflowId: string, options: { run?: number } = {}): Promise<Result<'history'>> {
    return this.api.history({ workflowId, ...options });
  }

  /**
   * Replays the latest run (or `run`) against the definitions this tab's engine has now: `{ ok: true }`, or
   * the first divergence (position, what was recorded, what the code yields now).
   */
  checkReplay(workflowId: string, options: { run?: number } = {}): Promise<Result<'checkReplay'>> {
    return this.api.checkReplay({ workflowId, ...options });
  }

  /**
   * Runs a workflow again from one of its operations (`fromPosition`: a timeline entry's `detail.pos`): the
   * outcomes before it are replayed, it and what follows run anew — as the next run of the same id (which
   * must have ended) or as `newId`. Without `fromPosition`, a run that failed, was cancelled, terminated or
   * timed out is forked from where it stopped. Resolves with the fork's id and run.
   * @example
   * await shuttle.fork('order-7', { fromPosition: 2 }) // → { workflowId: 'order-7', run: 2 }
   */
  fork(
    workflowId: string,
    options: { fromPosition?: number; run?: number; newId?: string; version?: number } = {},
  ): Promise<Result<'fork'>> {
    return this.api.fork({ workflowId, ...options });
  }

  /**
   * Deletes every run of a finished workflow (its id may be started again as run 1), or only the earlier
   * run `{ run }`. Refused for a workflow that is not finished.
   */
  purge(workflowId: string, options: { run?: number } = {}): Promise<PurgeReport> {
    return this.api.purge({ workflowId, ...options });
  }

  /**
   * Purges every finished workflow a list filter matches (`{ status?, workflowType?, idPrefix? }`; status
   * may name finished statuses only). `{ dryRun: true }` only counts them.
   * @example
   * await shuttle.purgeFinished({ workflowType: 'countdown' }, { dryRun: true }) // → { matched: 12, … }
   */
  purgeFinished(
    filter: ListFilter = {},
    options: { dryRun?: boolean } = {},
  ): Promise<Result<'purgeFinished'>> {
    return this.api.purgeFinished({ filter, ...options });
  }

  // -------------------------------------------------------------------------------------------------------
  // Schedules

  /**
   * Creates a schedule: `spec.workflow` starts once per cron slot, on whichever engine gets there first (one
   * workflow per slot, id `<name>@<slot ISO time>`). The same spec again changes nothing; a different one is
   * refused unless `{ replace: true }`.
   *
   * @param spec `{ cron, workflow, input?, timezone? ('UTC'), overlap? ('skip' | 'buffer-one' | 'allow'),
   * catchUp? ('latest' | 'all' | 'none'), startOptions? }`.
   * @example
   * await shuttle.schedule('tick-every-minute', { cron: '* * * * *', workflow: 'countdown', input: { from: 3 } });
   */
  schedule(
    name: string,
    spec: ScheduleSpecInput,
    options: { replace?: boolean } = {},
  ): Promise<ScheduleInfo> {
    return this.api.createSchedule({ name, spec, ...options });
  }

  /** Every schedule, with its next fire times and its last slots. */
  schedules(): Promise<ScheduleInfo[]> {
    return this.api.schedules({});
  }

  describeSchedule(name: string): Promise<ScheduleInfo> {
    return this.api.describeSchedule({ name });
  }

  /** Stops a schedule firing; slots missed while paused follow its catch-up when it resumes. */
  pauseSchedule(name: string): Promise<ScheduleInfo> {
    return this.api.pauseSchedule({ name });
  }

  resumeSchedule(name: string): Promise<ScheduleInfo> {
    return this.api.resumeSchedule({ name });
  }

  /** Starts one run now, outside the slots; resolves with its id and run. */
  triggerSchedule(name: string): Promise<{ workflowId: string; run: number }> {
    return this.api.triggerSchedule({ name });
  }

  /** Deletes a schedule; the workflows it started are left alone. */
  async deleteSchedule(name: string): Promise<void> {
    await this.api.deleteSchedule({ name });
  }

  /**
   * The next `count` (default 5) fire times of `cron` in `timezone` (default UTC), or the engine's reason for
   * refusing it (`{ ok: false, field, message }`). Writes nothing.
   */
  previewSchedule(
    cron: string,
    options: { timezone?: string; count?: number } = {},
  ): Promise<SchedulePreview> {
    return this.api.previewSchedule({ cron, ...options });
  }

  // -------------------------------------------------------------------------------------------------------
  // Queues

  /**
   * Every workflow queue declared on this engine or, by another engine, in the store: its limits, running of
   * its limit, who holds its slots, the next waiting, each key's counts.
   */
  queues(): Promise<QueueView[]> {
    return this.api.queues({});
  }

  /** One queue, as `queues()` shows it; `QueueNotFoundError` when no engine declared it. */
  describeQueue(name: string): Promise<QueueView> {
    return this.api.describeQueue({ name });
  }

  /**
   * Where a workflow stands in its queue: `{ status: 'waiting', position }` (1 = admitted next) or
   * `{ status: 'admitted', slot }`; null when it was not started onto a queue, or has ended.
   */
  queuePosition(workflowId: string): Promise<QueuePosition | null> {
    return this.api.queuePosition({ workflowId });
  }

  /**
   * The activity groups of `createEngine({ activityLimits })`: those this engine declares (limits, the attempts
   * holding their slots across the fleet, running and waiting here), then every other group with a slot held in
   * the store now (`declared: false`: its holders only — limits are declared in code, not stored).
   */
  activityLimits(): Promise<ActivityLimitView[]> {
    return this.api.activityLimits({});
  }

  // -------------------------------------------------------------------------------------------------------
  // Definitions

  /**
   * Every definition: the built-in demos (`builtIn: true`, with their source), then each saved version of the
   * definitions authored in the studio (source, `savedAt`, `savedBy`, and `loadProblems` when this tab's
   * engine could not load it). `registered` says whether this tab can start it.
   */
  definitions(): Promise<DefinitionInfo[]> {
    return this.api.definitions({});
  }

  /**
   * Compiles and loads a definition's TypeScript source without saving it: resolves with the name and version
   * it declares, or with its diagnostics (`{ kind, message, line, column }`).
   *
   * @example
   * await shuttle.compileDefinition("import { defineWorkflow } from 'shuttle';\nexport default 1;");
   * // { ok: false, diagnostics: [{ kind: 'export', message: 'The default export is not a workflow definition: …', line: 2, column: 1 }] }
   */
  compileDefinition(source: string): Promise<CompileReport> {
    return this.api.compileDefinition({ source });
  }

  /**
   * Saves a definition (`def:<name>:<version>`); every open tab's engine registers it at once. Resolves with
   * `{ ok: true, name, version, created }`, or a refusal with nothing written: `invalid` (with diagnostics),
   * `reserved` (a built-in's name), or `version-in-use` (unfinished workflows run this version and the body
   * changed: save it as `suggestedVersion`, or pass `{ force: true }` to save anyway).
   *
   * @example
   * const outcome = await shuttle.saveDefinition(source);
   * if (!outcome.ok && outcome.reason === 'version-in-use') console.log(outcome.message);
   */
  saveDefinition(source: string, options: { force?: boolean } = {}): Promise<SaveOutcome> {
    return this.api.saveDefinition(options.force ? { source, force: true } : { source });
  }

  /**
   * Deletes a saved version of a definition. Resolves with `{ ok: true }`, or `{ ok: false, reason: 'in-use'
   * | 'missing', message }` — a version stays while unfinished workflows use it.
   */
  deleteDefinition(name: string, version: number): Promise<DeleteOutcome> {
    return this.api.deleteDefinition({ name, version });
  }

  // -------------------------------------------------------------------------------------------------------
  // Inspection

  /** How much room the store takes: the browser's estimate for this origin, or PostgreSQL table sizes. */
  storageUsage(): Promise<Result<'storageUsage'>> {
    return this.api.storageUsage({});
  }

  /** Every claim holder record in the database: workflow, engine, epoch, claimed at, expires at. */
  claims(): Promise<ClaimInfo[]> {
    return this.api.claims({});
  }

  /**
   * Who holds the workflow's claim — `{ engineId, epoch, claimedAt, expiresAt, live }` — or null when nobody
   * does (finished, suspended, pending, or between owners). `live: false` means its holder is expired (its
   * session lapsed past the grace), stopped, or dead (its Web Lock is gone): any engine may take it over.
   * Rejects with `WorkflowNotFoundError` for an unknown id.
   * @example
   * const holder = await shuttle.claimHolder('demo-1');
   * // { engineId: '…', epoch: 1, claimedAt: …, expiresAt: …, live: true }
   */
  claimHolder(workflowId: string): Promise<ClaimHolder | null> {
    return this.api.claimHolder({ workflowId });
  }

  /**
   * Takes one workflow over on this tab's engine now — when, and only when, its holder is expired or dead
   * (or it has none). Resolves with the engine's outcome: `{ outcome: 'taken-over' | 'acquired', epoch }`,
   * `{ outcome: 'already-held', epoch }` (this engine holds it), `{ outcome: 'held-live', holder }` (refused:
   * its holder is live), or `not-running` / `ineligible` / `lost-race` / `corrupt`. A viewer tab (or the
   * studio server) claims nothing: it rejects with `ObserverCannotClaimError`; `WorkflowNotFoundError` for
   * an unknown id.
   * @example
   * const outcome = await shuttle.reclaim('demo-1');
   * if (outcome.outcome === 'held-live') console.log('still held by', outcome.holder.engineId);
   */
  reclaim(workflowId: string): Promise<ReclaimOutcome> {
    return this.api.reclaim({ workflowId });
  }

  /** Writes of deposed engines that storage refused (for one workflow, or all). */
  fenceRejections(workflowId?: string): Promise<FenceRejection[]> {
    return this.api.fenceRejections(optional({ workflowId }));
  }

  /**
   * This tab's `result()` waiters: pending first, then recently settled, with how and how fast. (Every
   * engine's waiters are in `engines()`.)
   */
  resultWaiters(): Promise<ResultWaiterInfo[]> {
    return this.api.resultWaiters({});
  }

  /** Counters and gauges of this tab's engine (claims by outcome, renewals, wakes discarded, …). */
  metrics(): Promise<EngineMetrics> {
    return this.api.metrics({});
  }

  /** Ids of the workflows this tab's engine holds claims on. */
  ownedWorkflows(): Promise<string[]> {
    return this.api.ownedWorkflows({});
  }

  // -------------------------------------------------------------------------------------------------------
  // Fleet: the engines of the database, this tab's engine, a studio server's worker processes

  /**
   * Every engine of this database, live or dead within the last 10 minutes, oldest first: identity, status
   * (`starting`, `running`, `frozen`, `stopped`, `crashed`, or `dead` when its tab vanished without a word),
   * whether its Web Lock is held (`alive`), claims held, its result waiters, its counters and its protocol
   * version.
   */
  engines(): Promise<EngineRecord[]> {
    return this.api.engines({});
  }

  /**
   * Stops this tab's engine gracefully: releases every claim (other tabs take its workflows over at once)
   * and marks it stopped. The page does this by itself when the tab is closed or reloaded.
   */
  shutdown(): Promise<ShutdownReport> {
    return this.api.shutdown({});
  }

  /**
   * The worker processes of the fleet the studio server controls (`shuttle dev`); `controlled: false` in a
   * tab, or on a server that controls none.
   */
  fleet(): Promise<Result<'fleet'>> {
    return this.api.fleet({});
  }

  /** Starts one more worker process of the controlled fleet; resolves once its engine runs. */
  startWorker(): Promise<Result<'fleetAction'>> {
    return this.api.fleetAction({ action: 'start' });
  }

  /**
   * Thaws a worker process of the controlled fleet that a chaos freeze stopped (SIGCONT) before its freeze
   * ends; its next write at an epoch it lost is refused.
   */
  thawWorker(engineId: string): Promise<Result<'fleetAction'>> {
    return this.api.fleetAction({ engineId, action: 'thaw' });
  }

  // -------------------------------------------------------------------------------------------------------
  // Help

  /** Prints a summary of the console API. */
  help(): void {
    console.log(consoleHelp);
  }
}

/** What `shuttle.help()` prints: every method of the console API, `client.ts`'s included. */
const consoleHelp = [
  'shuttle — the console API of this tab’s Shuttle engine (every method returns a promise):',
  '  hello() · engines() · definitions() · ownedWorkflows() · metrics()',
  "  start(type, input?, { id?, executionTimeoutMs?, startDelayMs?, idReuse?, idempotencyKey? })   e.g. start('countdown', { from: 5, tickMs: 200 })",
  '      onto a queue: { queue?, concurrencyKey?, priority? (1–10), singleton?: { key, ifActive? }, debounce?: { key, windowMs, maxWaitMs? } }',
  '  signalWithStart(type, input, signalName, payload, { id, …startOptions })',
  '  completeActivity(token, result?) · failActivity(token, message | { name?, message })   tokens: describe(id).pending.leaves',
  '  signal(id, name, payload?) · query(id, name, arg?) · update(id, name, arg?, { timeoutMs? })',
  '  cancel(id, reason?) · terminate(id, reason?) · suspend(id) · resume(id) · result(id, { run? })',
  '  checkReplay(id, { run? })   does the code registered now replay this run? the first divergence, if not',
  '  history(id, { run? })   the recorded history, for replay testing: save it, check it with shuttle replay --file',
  '  fork(id, { fromPosition?, run?, newId?, version? })   run it again from an operation (default: where a failed run stopped)',
  '  describe(id, { run? }) · runs(id) · timeline(id, { run? }) · list({ status?, workflowType?, ownerEngineId?, idPrefix?, limit?, allRuns?, createdFrom?, createdTo?, endedFrom?, endedTo? })',
  '  operationOutcome(id, { pos, member?, run? } | { updateId, run? })   what history recorded for an operation: its result, payload or error',
  "  schedule(name, { cron, workflow, input?, timezone?, overlap?, catchUp? }, { replace? })   e.g. schedule('every-minute', { cron: '* * * * *', workflow: 'countdown' })",
  '  purge(id, { run? }) · purgeFinished({ status?, workflowType?, idPrefix? }, { dryRun? }) · storageUsage()',
  '  schedules() · describeSchedule(name) · pauseSchedule(name) · resumeSchedule(name) · triggerSchedule(name) · deleteSchedule(name)',
  '  queues() · describeQueue(name) · queuePosition(id)   workflow queues: limits, slot holders, who waits next',
  '  activityLimits()   activity groups: limits, the attempts holding their slots (engine, workflow), waiting here',
  '  claims() · fenceRejections(id?) · resultWaiters() · shutdown() · restartThisTab()',
  '  claimHolder(id)   who holds it: { engineId, epoch, expiresAt, live } or null',
  "  reclaim(id)   take it over here only if its holder is expired or dead, e.g. (await reclaim(id)).outcome === 'taken-over'",
  '  compileDefinition(source) · saveDefinition(source, { force? }) · deleteDefinition(name, version)',
  "      source: a TypeScript module, default export a defineWorkflow definition, imports from 'shuttle' only",
  "  waitFor(id, status | statuses, { timeoutMs? })   e.g. waitFor(id, 'completed')",
  '  chaos.freeze(engineId, seconds) · chaos.crash(engineId) · chaos.shutdown(engineId) · chaos.restart(engineId)',
  "      on any tab's engine, e.g. chaos.freeze((await engines())[1].engineId, 10)",
  '  chaos.start(engineId, type, { input?, options?, notBefore? })   have that tab’s engine start a workflow',
  '  subscribe(message => …) for pushed engine events and store changes · onEngineChange(hello => …)',
  '  engineId · connection · ready',
].join('\n');
