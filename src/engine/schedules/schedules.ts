/**
 * Schedules: a cron that starts a workflow for each of its slots, on whichever engine gets there first.
 *
 * Storage: the schedule record `sched:<name>` (spec, state, last slots) and one due index entry
 * `sched-due:<15-digit ms>:<name>` at the time the schedule next needs a pass (its next slot, or a buffered
 * slot waiting for the previous run). The fire pass scans only entries due now, so its cost grows with the
 * slots due, never with the number of schedules.
 *
 * Exactly one start per slot, across engines: a slot's workflow id is deterministic (`<name>@<slot ISO>`),
 * and starting it and advancing the schedule record commit in ONE conditional batch — the create plan of
 * `Lifecycle.planStart` (the slot's record must not exist; under `workflow-lease` the claim is folded in)
 * plus "the schedule record is exactly what I read" — through the fenced writer. Two engines racing a slot
 * read the same record; one batch lands, the other's conditions fail, it re-reads, sees the slot taken and
 * counts a conflict (`metrics().scheduleSlotConflicts`); nothing is surfaced as an error.
 *
 * Decisions for the slots due at `now` (first undecided slot `nextSlot`, latest due slot `latest`):
 * - catch-up: with several slots due (engines were down, or the schedule paused), `all` decides them one by
 *   one (at most `maxStartsPerPass` starts per pass), `latest` records the older ones as missed and fires
 *   `latest`, `none` records them as missed and fires `latest` only if it is on time (found within
 *   `onTimeMs` of its time), else records it missed too.
 * - overlap, for a slot to fire while a run this schedule started has not finished: `skip` records it
 *   skipped; `buffer-one` keeps it waiting (one at most; a second is skipped) and starts it once the run
 *   finishes; `allow` starts it anyway.
 * - a workflow that already exists at the slot's id is never started again: the slot is recorded as
 *   `already-started`.
 *
 * Every write of a schedule (create, replace, pause, resume, trigger, delete, fire) is conditioned on the
 * record it read and keeps the due index in step with it in the same batch.
 */
import type { Condition, Operation, Storage } from '../../storage/types';
import type { Clock } from '../clock';
import { normalizePayload, type Json } from '../codec';
import {
  CorruptRecordError,
  EngineLeaseNotHeldError,
  InvalidOptionsError,
  InvalidScheduleError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  WorkflowAlreadyExistsError,
  WorkflowIdReuseError,
  WorkflowClaimUnavailableError,
  WorkflowNotRegisteredError,
} from '../errors';
import type { EngineWarning } from '../events';
import { assertWorkflowId } from '../ids';
import { keys, parseScheduleDueKey } from '../keys';
import type { CreatePlan, Lifecycle } from '../lifecycle';
import type { MetricsCounters } from '../metrics';
import type { FencedWriter } from '../ownership/fenced-write';
import { decodeRecord, isTerminal } from '../records';
import type { AnyWorkflowDefinition } from '../workflow';
import { CronCache, parseCron } from './cron';
import {
  decodeSchedule,
  dueOf,
  lastSlotsKept,
  scheduleCatchUps,
  scheduleOverlaps,
  type ScheduleCatchUp,
  type ScheduleInfo,
  type ScheduleOverlap,
  type ScheduleRecord,
  type ScheduleSpec,
  type ScheduleStartOptions,
  type SlotOutcome,
} from './records';

/** What `engine.schedule(name, spec)` takes. */
export type ScheduleSpecInput = {
  /** A cron expression (see cron.ts for the accepted form). */
  cron: string;
  /** IANA time zone the cron is read in. Default `'UTC'`. */
  timezone?: string;
  /** The workflow type to start (a registered definition, or its name). */
  workflow: string | AnyWorkflowDefinition;
  /** The input of every workflow it starts. */
  input?: unknown;
  /** A slot that falls due while the previous run has not finished. Default `'skip'`. */
  overlap?: ScheduleOverlap;
  /** Slots missed while no engine ran (or while paused). Default `'latest'`. */
  catchUp?: ScheduleCatchUp;
  /** Start options of every workflow it starts (`executionTimeoutMs`, `startDelayMs`; not the id). */
  startOptions?: ScheduleStartOptions;
};

export type ScheduleDeps = {
  storage: Storage;
  writer: FencedWriter;
  lifecycle: Lifecycle;
  clock: Clock;
  engineId: string;
  maxPayloadBytes: number;
  metrics: MetricsCounters;
  /** The newest registered definition of `type`. */
  definition: (type: string) => AnyWorkflowDefinition | undefined;
  /** This engine may run workflows of `type` (it has the definition and is not an observer). */
  mayDrive: (type: string) => boolean;
  /** Automatic background mode: the scheduler wakes itself at the next due time. */
  automatic: boolean;
  /** The engine's maintenance interval: a slot found later than `onTimeMs` after its time counts as missed. */
  renewIntervalMs: number;
  warn: (warning: EngineWarning) => void;
};

/** Most workflows one fire pass starts (catch-up 'all' of a long outage goes on in the next passes). */
export const maxStartsPerPass = 100;
/** How many missed slots are counted for a `missed` entry (a longer range is reported without a count). */
const missedCountLimit = 200;
const pageSize = 100;
const maxNameLength = 200;
const specFields = ['cron', 'timezone', 'workflow', 'input', 'overlap', 'catchUp', 'startOptions'];

/** The workflow id of a slot: the schedule's name and the slot's time in ISO 8601 (UTC). */
export function slotWorkflowId(name: string, slot: number): string {
  return `${name}@${new Date(slot).toISOString()}`;
}

/** The workflow id of a schedule's `n`-th trigger. */
export function triggerWorkflowId(name: string, n: number): string {
  return `${name}@trigger-${n}`;
}

function assertScheduleName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > maxNameLength || name.trim() !== name)
    throw new InvalidScheduleError(
      'name',
      `A schedule name must be a non-empty string of at most ${maxNameLength} characters without leading or trailing spaces; got ${JSON.stringify(name) ?? String(name)}.`,
    );
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name))
    throw new InvalidScheduleError(
      'name',
      `Schedule name ${JSON.stringify(name)} contains control characters.`,
    );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  return value;
}

type StartPick = { slot: number; trigger?: true; bufferedMs?: number };

/** One decision about a schedule: its next record, the slots decided (oldest first), maybe a start. */
type Step = { next: ScheduleRecord; decided: SlotOutcome[]; start: StartPick | null };

type Budget = { starts: number };

export class Schedules {
  readonly #deps: ScheduleDeps;
  readonly #crons = new CronCache();
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  #handle: unknown = undefined;
  #scheduledFor = Number.POSITIVE_INFINITY;
  #unwatch: (() => void) | null = null;

  constructor(deps: ScheduleDeps) {
    this.#deps = deps;
  }

  /** A slot found later than this after its time was missed (catch-up 'none' does not fire it). */
  get onTimeMs(): number {
    return Math.max(15_000, 3 * this.#deps.renewIntervalMs);
  }

  /** Automatic mode: learn of schedules other engines create or advance, and wake for the next due one. */
  open(): void {
    const { storage, automatic } = this.#deps;
    if (!automatic) return;
    if (storage.capabilities.changeFeed && storage.watch)
      this.#unwatch = storage.watch(keys.scheduleDuePrefix, (changed) => {
        for (const key of changed) {
          const parsed = parseScheduleDueKey(key);
          if (parsed) this.notify(parsed.dueAt);
        }
      });
    void this.fireDue().catch((error: unknown) => this.#passFailed(error));
  }

  #passFailed(error: unknown): void {
    this.#deps.warn({
      name: 'StorageWarning',
      message: `Schedule pass failed (will run again): ${error instanceof Error ? error.message : String(error)}`,
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#unwatch?.();
    this.#unwatch = null;
    if (this.#handle !== undefined) this.#deps.clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }

  // -------------------------------------------------------------------------------------------------------
  // The API

  /** Validates a spec, filling in defaults; throws before anything is read or written. */
  #normalize(name: unknown, input: ScheduleSpecInput): ScheduleSpec {
    assertScheduleName(name);
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new InvalidScheduleError(
        'spec',
        "A schedule's spec must be an object like { cron: '0 9 * * *', workflow: 'report' }.",
      );
    for (const key of Object.keys(input))
      if (!specFields.includes(key))
        throw new InvalidScheduleError(
          'spec',
          `Unknown schedule option '${key}'; use ${specFields.join(', ')}${key === 'replace' ? ' (replace goes in the third argument: { replace: true })' : ''}.`,
        );
    const workflow = typeof input.workflow === 'string' ? input.workflow : input.workflow?.name;
    if (typeof workflow !== 'string' || workflow.length === 0)
      throw new InvalidScheduleError(
        'workflow',
        "A schedule's workflow must be a registered workflow type name (or its definition).",
      );
    const timezone = input.timezone ?? 'UTC';
    const cron = parseCron(input.cron, timezone);
    if (cron.next(this.#deps.clock.now()) === null)
      throw new InvalidScheduleError(
        'cron',
        `Cron ${JSON.stringify(input.cron)} never fires after now (in ${timezone}); a schedule needs a future slot.`,
      );
    const overlap = input.overlap ?? 'skip';
    if (!scheduleOverlaps.includes(overlap))
      throw new InvalidScheduleError(
        'overlap',
        `Unknown overlap ${JSON.stringify(overlap)}; use ${scheduleOverlaps.map((o) => `'${o}'`).join(', ')}.`,
      );
    const catchUp = input.catchUp ?? 'latest';
    if (!scheduleCatchUps.includes(catchUp))
      throw new InvalidScheduleError(
        'catchUp',
        `Unknown catchUp ${JSON.stringify(catchUp)}; use ${scheduleCatchUps.map((c) => `'${c}'`).join(', ')}.`,
      );
    const startOptions = input.startOptions;
    if (startOptions !== undefined) {
      if (typeof startOptions !== 'object' || startOptions === null || Array.isArray(startOptions))
        throw new InvalidScheduleError(
          'startOptions',
          'startOptions must be an object like { executionTimeoutMs }.',
        );
      if ('id' in startOptions)
        throw new InvalidScheduleError(
          'startOptions',
          "startOptions.id is not allowed: a scheduled workflow's id is its slot's, '<name>@<slot ISO time>'.",
        );
    }
    // The definition, the start options and the input, exactly as a start checks them.
    let stored: Json | undefined;
    try {
      stored = this.#deps.lifecycle.validateStart(workflow, input.input, {
        ...(startOptions ?? {}),
        id: slotWorkflowId(name, 0),
      }).input;
    } catch (error) {
      if (error instanceof InvalidOptionsError) throw new InvalidScheduleError('startOptions', error.message);
      throw error;
    }
    if (stored !== undefined)
      stored = normalizePayload(stored, `Input of schedule '${name}'`, this.#deps.maxPayloadBytes);
    return {
      cron: input.cron,
      timezone,
      workflow,
      ...(stored === undefined ? {} : { input: stored }),
      overlap,
      catchUp,
      ...(startOptions && Object.keys(startOptions).length > 0 ? { startOptions: { ...startOptions } } : {}),
    };
  }

  /**
   * Creates a schedule, or returns it unchanged when it exists with the same spec. A different spec is
   * refused with `ScheduleExistsError` unless `replace`; replacing keeps the schedule's history and paused
   * state and starts its slot sequence afresh after now.
   */
  async create(
    name: string,
    input: ScheduleSpecInput,
    options: { replace?: boolean } = {},
  ): Promise<ScheduleInfo> {
    if (typeof options !== 'object' || options === null)
      throw new InvalidScheduleError('options', 'schedule options must be an object like { replace: true }.');
    for (const key of Object.keys(options))
      if (key !== 'replace')
        throw new InvalidScheduleError(
          'options',
          `Unknown schedule option '${key}'; the third argument takes { replace }.`,
        );
    const spec = this.#normalize(name, input);
    const key = keys.schedule(name);
    for (let attempt = 0; attempt < 10; attempt++) {
      const raw = await this.#deps.storage.get(key);
      const now = this.#deps.clock.now();
      const first = this.#crons.get(spec.cron, spec.timezone).next(now);
      let next: ScheduleRecord;
      if (raw !== null) {
        const existing = decodeSchedule(key, raw);
        if (sameJson(existing.spec, spec)) return this.#info(existing);
        if (options.replace !== true)
          throw new ScheduleExistsError(
            name,
            specFields.filter(
              (field) =>
                !sameJson(
                  (existing.spec as Record<string, unknown>)[field],
                  (spec as Record<string, unknown>)[field],
                ),
            ),
          );
        next = {
          ...existing,
          spec,
          updatedAt: now,
          nextSlot: first,
          buffered: spec.overlap === 'buffer-one' ? existing.buffered : null,
        };
      } else
        next = {
          v: 1,
          name,
          spec,
          paused: false,
          createdAt: now,
          updatedAt: now,
          createdBy: this.#deps.engineId,
          nextSlot: first,
          buffered: null,
          running: [],
          triggers: 0,
          lastSlots: [],
        };
      if (
        await this.#write(name, raw, raw === null ? null : decodeSchedule(key, raw), next, [], [], 'create')
      )
        return this.#info(next);
    }
    throw new ScheduleExistsError(name, ['record (it is changing too fast; try again)']);
  }

  async list(): Promise<ScheduleInfo[]> {
    const out: ScheduleInfo[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.#deps.storage.scan(keys.schedulesPrefix, {
        ...(after ? { after } : {}),
        limit: 500,
      });
      for (const { key, value } of page) {
        try {
          out.push(this.#info(decodeSchedule(key, value)));
        } catch (error) {
          if (!(error instanceof CorruptRecordError) && !(error instanceof InvalidScheduleError)) throw error;
          this.#deps.warn({ name: 'StorageWarning', message: error.message });
        }
      }
      if (page.length < 500) return out;
      after = page[page.length - 1]!.key;
    }
  }

  async describe(name: string): Promise<ScheduleInfo> {
    assertScheduleName(name);
    const { record } = await this.#read(name);
    return this.#info(record);
  }

  /** Stops firing (idempotent). Slots that fall due while paused are missed; resume applies catch-up. */
  pause(name: string): Promise<ScheduleInfo> {
    return this.#change(name, 'pause', (record, now) =>
      record.paused ? null : { ...record, paused: true, pausedAt: now, updatedAt: now },
    );
  }

  /** Fires again (idempotent); the slots missed while paused follow the schedule's catch-up. */
  resume(name: string): Promise<ScheduleInfo> {
    return this.#change(name, 'resume', (record, now) => {
      if (!record.paused) return null;
      const next: ScheduleRecord = { ...record, paused: false, updatedAt: now };
      delete next.pausedAt;
      return next;
    });
  }

  /** Deletes the schedule. Workflows it started are left alone. */
  async delete(name: string): Promise<void> {
    assertScheduleName(name);
    for (let attempt = 0; attempt < 10; attempt++) {
      const { raw, record } = await this.#read(name);
      if (await this.#write(name, raw, record, null, [], [], 'delete')) return;
    }
    throw new ScheduleNotFoundError(name);
  }

  /**
   * Starts one run now, outside the slot sequence (paused or not, whatever the overlap), with its own id
   * `<name>@trigger-<n>`. Resolves with that id.
   */
  async trigger(name: string): Promise<string> {
    assertScheduleName(name);
    for (let attempt = 0; attempt < 10; attempt++) {
      const { raw, record } = await this.#read(name);
      const now = this.#deps.clock.now();
      const next: ScheduleRecord = { ...record };
      let n = record.triggers + 1;
      // A schedule deleted and made again counts from 1: skip ids its predecessor used.
      while (
        (await this.#deps.storage.get(keys.record(triggerWorkflowId(name, n)))) !== null &&
        n < record.triggers + 1000
      )
        n++;
      next.triggers = n;
      const id = triggerWorkflowId(name, n);
      const plan = await this.#plan(record, id, { schedule: name, slot: now, trigger: true });
      if (!plan.ok) throw plan.error;
      const outcome: SlotOutcome = {
        slot: now,
        outcome: 'started',
        workflowId: id,
        at: now,
        engineId: this.#deps.engineId,
        trigger: true,
      };
      if (record.spec.overlap !== 'allow') next.running = [...record.running, id].slice(-20);
      next.lastSlots = [outcome, ...record.lastSlots].slice(0, lastSlotsKept);
      if (await this.#write(name, raw, record, next, plan.conditions, plan.operations, 'trigger')) {
        plan.afterCommit();
        this.#deps.metrics.scheduleStarts++;
        this.#deps.metrics.workflowsStarted++;
        return id;
      }
    }
    throw new ScheduleExistsError(name, ['record (it is changing too fast; try again)']);
  }

  async #change(
    name: string,
    what: string,
    change: (record: ScheduleRecord, now: number) => ScheduleRecord | null,
  ): Promise<ScheduleInfo> {
    assertScheduleName(name);
    for (let attempt = 0; attempt < 10; attempt++) {
      const { raw, record } = await this.#read(name);
      const next = change(record, this.#deps.clock.now());
      if (!next) return this.#info(record);
      if (await this.#write(name, raw, record, next, [], [], what)) return this.#info(next);
    }
    throw new ScheduleExistsError(name, ['record (it is changing too fast; try again)']);
  }

  async #read(name: string): Promise<{ raw: string; record: ScheduleRecord }> {
    const key = keys.schedule(name);
    const raw = await this.#deps.storage.get(key);
    if (raw === null) throw new ScheduleNotFoundError(name);
    return { raw, record: decodeSchedule(key, raw) };
  }

  #info(record: ScheduleRecord): ScheduleInfo {
    const now = this.#deps.clock.now();
    let nextFireAt: number[] = [];
    if (!record.paused && record.nextSlot !== null)
      nextFireAt = this.#crons.get(record.spec.cron, record.spec.timezone).nextFew(5, now);
    return {
      name: record.name,
      spec: record.spec,
      paused: record.paused,
      ...(record.pausedAt !== undefined ? { pausedAt: record.pausedAt } : {}),
      nextFireAt,
      lastSlots: record.lastSlots,
      buffered: record.buffered,
      running: record.running,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
  }

  /**
   * Writes `next` in place of the record read as `raw` (null: absent; `next` null: delete), with the due
   * index kept in step and `conditions`/`operations` of a start folded in. False when the record changed
   * meanwhile (or a start's condition failed); throws when this engine may write no more.
   */
  async #write(
    name: string,
    raw: string | null,
    before: ScheduleRecord | null,
    next: ScheduleRecord | null,
    conditions: readonly Condition[],
    operations: readonly Operation[],
    what: string,
  ): Promise<boolean> {
    const key = keys.schedule(name);
    const ops: Operation[] = [...operations];
    ops.push(next ? { type: 'put', key, value: JSON.stringify(next) } : { type: 'delete', key });
    const oldDue = before ? dueOf(before) : null;
    const newDue = next ? dueOf(next) : null;
    const oldKey = oldDue === null ? null : keys.scheduleDue(oldDue, name);
    const newKey = newDue === null ? null : keys.scheduleDue(newDue, name);
    if (oldKey !== newKey) {
      if (oldKey) ops.push({ type: 'delete', key: oldKey });
      if (newKey) ops.push({ type: 'put', key: newKey, value: name });
    }
    const outcome = await this.#deps.writer.write(
      null,
      [{ key, expected: raw }, ...conditions],
      ops,
      `${what} schedule '${name}'`,
    );
    if (!outcome.ok && outcome.reason === 'deposed') throw new EngineLeaseNotHeldError(this.#deps.engineId);
    if (outcome.ok && newDue !== null) this.notify(newDue);
    return outcome.ok;
  }

  /** The create plan of a scheduled start (the caller checked that `id` is unused). */
  async #plan(
    record: ScheduleRecord,
    id: string,
    scheduledBy: { schedule: string; slot: number; trigger?: true },
  ): Promise<CreatePlan> {
    const definition = this.#deps.definition(record.spec.workflow);
    if (!definition) throw new WorkflowNotRegisteredError(record.spec.workflow);
    assertWorkflowId(id);
    return this.#deps.lifecycle.planStart(
      // A slot's id names its slot: it is never started again once it exists.
      {
        id,
        definition,
        input: record.spec.input,
        options: { ...(record.spec.startOptions ?? {}), idReuse: 'never' },
      },
      scheduledBy,
    );
  }

  // -------------------------------------------------------------------------------------------------------
  // Firing

  /** A schedule is due at `dueAt`: make sure the scheduler wakes by then (automatic mode). */
  notify(dueAt: number): void {
    if (!this.#deps.automatic || this.#stopped) return;
    if (dueAt >= this.#scheduledFor) return;
    this.#wakeAt(dueAt);
  }

  #wakeAt(dueAt: number): void {
    const { clock } = this.#deps;
    if (this.#handle !== undefined) clock.clearTimeout(this.#handle);
    this.#scheduledFor = dueAt;
    this.#handle = clock.setTimeout(
      () => {
        this.#handle = undefined;
        this.#scheduledFor = Number.POSITIVE_INFINITY;
        void this.fireDue().catch((error: unknown) => this.#passFailed(error));
      },
      Math.max(0, dueAt - clock.now()),
    );
  }

  /**
   * The fire pass: every schedule due at `now` that this engine may drive is advanced (at most
   * `maxStartsPerPass` starts). Overlapping calls share one pass (and run once more if asked).
   */
  fireDue(now?: number): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#pass(now ?? this.#deps.clock.now()).finally(() => {
      this.#running = null;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        void this.fireDue().catch(() => undefined);
      }
    });
    return this.#running;
  }

  async #pass(now: number): Promise<void> {
    const { storage } = this.#deps;
    const bound = keys.scheduleDueAfter(now);
    const budget: Budget = { starts: maxStartsPerPass };
    let after: string | undefined;
    for (;;) {
      const page = await storage.scan(keys.scheduleDuePrefix, {
        ...(after ? { after } : {}),
        limit: pageSize,
      });
      const due = page.filter(({ key }) => key < bound);
      for (const { key } of due) {
        if (this.#stopped || budget.starts <= 0) return;
        const parsed = parseScheduleDueKey(key);
        if (!parsed) continue;
        try {
          await this.#advance(parsed.name, key, now, budget);
        } catch (error) {
          if (error instanceof EngineLeaseNotHeldError) return;
          if (!(error instanceof CorruptRecordError)) throw error;
          this.#deps.warn({ name: 'StorageWarning', message: error.message });
        }
      }
      if (due.length < page.length || page.length < pageSize) break;
      after = page[page.length - 1]!.key;
    }
    if (this.#deps.automatic && !this.#stopped) {
      const [next] = await storage.scan(keys.scheduleDuePrefix, { after: bound, limit: 1 });
      const parsed = next ? parseScheduleDueKey(next.key) : null;
      this.#scheduledFor = Number.POSITIVE_INFINITY;
      if (parsed) this.#wakeAt(parsed.dueAt);
    }
  }

  /** Decides the due slots of one schedule, one conditional write per decision. */
  async #advance(name: string, dueKey: string, now: number, budget: Budget): Promise<void> {
    const key = keys.schedule(name);
    let conflicts = 0;
    for (let round = 0; round < maxStartsPerPass * 2 && budget.starts > 0 && !this.#stopped; round++) {
      const raw = await this.#deps.storage.get(key);
      const record = raw === null ? null : decodeSchedule(key, raw);
      const due = record ? dueOf(record) : null;
      if (!record || due === null || keys.scheduleDue(due, name) !== dueKey) {
        // A stale index entry (its schedule was deleted, paused or moved on by a write that raced ours).
        await this.#deps.writer.write(
          null,
          [{ key, expected: raw }],
          [{ type: 'delete', key: dueKey }],
          `collect due entry of schedule '${name}'`,
        );
        return;
      }
      if (due > now || !this.#deps.mayDrive(record.spec.workflow)) return;
      const step = await this.#decide(record, now);
      if (!step) return;
      let plan: CreatePlan | null = null;
      if (step.start) {
        const id = slotWorkflowId(name, step.start.slot);
        const taken = (await this.#deps.storage.get(keys.record(id))) !== null;
        if (!taken) {
          plan = await this.#plan(record, id, { schedule: name, slot: step.start.slot });
          if (!plan.ok) {
            if (
              !(plan.error instanceof WorkflowAlreadyExistsError) &&
              !(plan.error instanceof WorkflowIdReuseError) &&
              !(plan.error instanceof WorkflowClaimUnavailableError)
            )
              throw plan.error;
            plan = null;
          } else if (plan.conditions.find((c) => c.key === keys.record(id))?.expected !== null) plan = null;
        }
        const outcome: SlotOutcome = plan
          ? {
              slot: step.start.slot,
              outcome: 'started',
              workflowId: id,
              at: now,
              engineId: this.#deps.engineId,
              ...(step.start.bufferedMs !== undefined ? { bufferedMs: step.start.bufferedMs } : {}),
            }
          : { slot: step.start.slot, outcome: 'skipped', reason: 'already-started', workflowId: id, at: now };
        step.decided.push(outcome);
        if (plan && record.spec.overlap !== 'allow')
          step.next.running = [...step.next.running, id].slice(-20);
      }
      // The buffered entry of a slot now started is replaced by its outcome; the rest are prepended.
      const startedSlots = new Set(step.decided.map((d) => d.slot));
      const kept = record.lastSlots.filter(
        (entry) => !(entry.outcome === 'buffered' && startedSlots.has(entry.slot)),
      );
      step.next.lastSlots = [...step.decided.reverse(), ...kept].slice(0, lastSlotsKept);
      const landed = await this.#write(
        name,
        raw,
        record,
        step.next,
        plan?.ok ? plan.conditions : [],
        plan?.ok ? plan.operations : [],
        'fire',
      );
      if (!landed) {
        // Another engine decided this slot first (or the schedule changed): re-read and see.
        const current = await this.#deps.storage.get(key);
        if (current !== raw) this.#deps.metrics.scheduleSlotConflicts++;
        if (++conflicts >= 5) return;
        continue;
      }
      if (plan?.ok) {
        plan.afterCommit();
        budget.starts--;
        this.#deps.metrics.scheduleStarts++;
        this.#deps.metrics.workflowsStarted++;
      }
      const nextDue = dueOf(step.next);
      if (nextDue === null || nextDue > now) return;
      dueKey = keys.scheduleDue(nextDue, name);
    }
  }

  /** Unfinished workflows among `ids` (missing ones count as finished). */
  async #unfinished(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const raws = await this.#deps.storage.getMany(ids.map((id) => keys.record(id)));
    return ids.filter((id, i) => {
      const raw = raws[i];
      if (raw === null || raw === undefined) return false;
      try {
        return !isTerminal(decodeRecord(keys.record(id), raw).status);
      } catch {
        return false;
      }
    });
  }

  /** What to do about a schedule that is due at `now`, or null when nothing is to be done yet. */
  async #decide(record: ScheduleRecord, now: number): Promise<Step | null> {
    const { spec } = record;
    const running = spec.overlap === 'allow' ? [] : await this.#unfinished(record.running);
    const next: ScheduleRecord = { ...record, running };
    // A buffered slot whose predecessor has finished starts first.
    if (record.buffered !== null && running.length === 0)
      return {
        next: { ...next, buffered: null },
        decided: [],
        start: { slot: record.buffered, bufferedMs: now - record.buffered },
      };
    if (record.nextSlot === null || record.nextSlot > now) return null;
    const cron = this.#crons.get(spec.cron, spec.timezone);
    const first = record.nextSlot;
    const latest = Math.max(first, cron.latestAtOrBefore(now) ?? first);
    const decided: SlotOutcome[] = [];
    let fire: number | null = first;
    let missedThrough: number | null = null;
    if (latest > first && spec.catchUp !== 'all') {
      missedThrough = cron.latestAtOrBefore(latest - 1) ?? first;
      fire = latest;
    }
    if (fire !== null && spec.catchUp === 'none' && now - fire > this.onTimeMs) {
      missedThrough = fire;
      fire = null;
    }
    if (missedThrough !== null) {
      const counted = cron.nextFew(missedCountLimit + 1, first - 1).filter((slot) => slot <= missedThrough!);
      decided.push({
        slot: first,
        outcome: 'skipped',
        reason: 'missed',
        at: now,
        ...(missedThrough !== first ? { through: missedThrough } : {}),
        ...(counted.length <= missedCountLimit ? { count: counted.length } : {}),
      });
    }
    next.nextSlot = cron.next(fire ?? missedThrough!);
    let start: StartPick | null = null;
    if (fire !== null) {
      const previous = running[running.length - 1];
      if (previous === undefined) start = { slot: fire };
      else if (spec.overlap === 'skip')
        decided.push({ slot: fire, outcome: 'skipped', reason: 'overlap', workflowId: previous, at: now });
      else if (record.buffered === null) {
        next.buffered = fire;
        decided.push({ slot: fire, outcome: 'buffered', waitingFor: previous, at: now });
      } else
        decided.push({
          slot: fire,
          outcome: 'skipped',
          reason: 'buffer-full',
          workflowId: previous,
          at: now,
        });
    }
    return { next, decided, start };
  }
}
