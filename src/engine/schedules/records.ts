/**
 * What a schedule stores (`sched:<name>`) and what the API reports about it. Decoding is strict: a record
 * of another shape raises `CorruptRecordError` naming its key, and the schedule is left untouched.
 */
import type { Json } from '../codec';
import { CorruptRecordError } from '../errors';

export type ScheduleOverlap = 'skip' | 'buffer-one' | 'allow';
export type ScheduleCatchUp = 'none' | 'latest' | 'all';
export const scheduleOverlaps: readonly ScheduleOverlap[] = ['skip', 'buffer-one', 'allow'];
export const scheduleCatchUps: readonly ScheduleCatchUp[] = ['none', 'latest', 'all'];

/** Start options a schedule passes to every workflow it starts (the id is the slot's). */
export type ScheduleStartOptions = { executionTimeoutMs?: number; startDelayMs?: number };

/** A schedule's spec as stored: every default filled in. */
export type ScheduleSpec = {
  cron: string;
  /** IANA time zone the cron is read in. */
  timezone: string;
  /** The workflow type it starts. */
  workflow: string;
  input?: Json;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  startOptions?: ScheduleStartOptions;
};

/** What happened to one slot (or one trigger), newest first in `lastSlots`. */
export type SlotOutcome =
  | {
      /** The slot's time (the trigger's time for a trigger), epoch ms. */
      slot: number;
      outcome: 'started';
      workflowId: string;
      /** When it was started, and by which engine. */
      at: number;
      engineId: string;
      /** Started by `triggerSchedule`, outside the slot sequence. */
      trigger?: true;
      /** It waited this long for the previous run to finish (overlap 'buffer-one'). */
      bufferedMs?: number;
    }
  | {
      slot: number;
      outcome: 'skipped';
      /**
       * `overlap`: the previous run had not finished (overlap 'skip'); `buffer-full`: one slot already waited
       * (overlap 'buffer-one'); `missed`: it fell due while no engine ran or the schedule was paused, and
       * catch-up did not fire it (`through` is the last slot of the range, `count` how many when known);
       * `already-started`: a workflow with the slot's id already exists.
       */
      reason: 'overlap' | 'buffer-full' | 'missed' | 'already-started';
      at: number;
      /** The run it overlapped, or the existing workflow. */
      workflowId?: string;
      through?: number;
      count?: number;
    }
  | {
      slot: number;
      outcome: 'buffered';
      /** The run it waits for (overlap 'buffer-one'). */
      waitingFor: string;
      at: number;
    };

export type ScheduleRecord = {
  v: 1;
  name: string;
  spec: ScheduleSpec;
  paused: boolean;
  pausedAt?: number;
  createdAt: number;
  updatedAt: number;
  createdBy: string;
  /** The first slot not decided yet (epoch ms), or null when the cron has no further slot. */
  nextSlot: number | null;
  /** A slot waiting for the previous run to finish (overlap 'buffer-one'). */
  buffered: number | null;
  /** Unfinished workflows this schedule started, as last seen (not tracked with overlap 'allow'). */
  running: string[];
  /** How many triggers it has had: the next trigger's id is `<name>@trigger-<triggers + 1>`. */
  triggers: number;
  /** The last slots, newest first (at most `lastSlotsKept`). */
  lastSlots: SlotOutcome[];
};

export const lastSlotsKept = 10;

/** A schedule as the API reports it. */
export type ScheduleInfo = {
  name: string;
  spec: ScheduleSpec;
  paused: boolean;
  pausedAt?: number;
  /** The next fire times (epoch ms, at most 5); empty while paused or when the cron has no further slot. */
  nextFireAt: number[];
  /** The last slots, newest first: started (with the workflow id), skipped (and why) or buffered. */
  lastSlots: SlotOutcome[];
  /** A slot waiting for the previous run to finish, or null. */
  buffered: number | null;
  /** Unfinished workflows it started, as last seen. */
  running: string[];
  createdAt: number;
  updatedAt: number;
};

/** The time the schedule next needs a pass (its due index entry), or null when it needs none. */
export function dueOf(record: ScheduleRecord): number | null {
  if (record.paused) return null;
  if (record.buffered !== null) return record.buffered;
  return record.nextSlot;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isTime = (value: unknown) => typeof value === 'number' && Number.isFinite(value);
const isTimeOrNull = (value: unknown) => value === null || isTime(value);

export function decodeSchedule(key: string, raw: string): ScheduleRecord {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new CorruptRecordError(key, 'not valid JSON');
  }
  const need = (condition: boolean, reason: string) => {
    if (!condition) throw new CorruptRecordError(key, reason);
  };
  need(isObject(value), 'not an object');
  const record = value as Record<string, unknown>;
  need(record.v === 1, `unknown schedule record version ${JSON.stringify(record.v)}`);
  need(typeof record.name === 'string' && record.name.length > 0, 'missing name');
  need(isObject(record.spec), 'missing spec');
  const spec = record.spec as Record<string, unknown>;
  need(typeof spec.cron === 'string' && typeof spec.timezone === 'string', 'bad cron or timezone');
  need(typeof spec.workflow === 'string', 'bad workflow');
  need(scheduleOverlaps.includes(spec.overlap as ScheduleOverlap), 'bad overlap');
  need(scheduleCatchUps.includes(spec.catchUp as ScheduleCatchUp), 'bad catchUp');
  need(typeof record.paused === 'boolean', 'bad paused');
  need(isTime(record.createdAt) && isTime(record.updatedAt), 'bad timestamps');
  need(isTimeOrNull(record.nextSlot) && isTimeOrNull(record.buffered), 'bad nextSlot or buffered');
  need(Array.isArray(record.running) && Array.isArray(record.lastSlots), 'bad running or lastSlots');
  need(typeof record.triggers === 'number' && Number.isSafeInteger(record.triggers), 'bad triggers');
  return value as ScheduleRecord;
}
