/**
 * What the queue keys hold (keys.ts names them). Decoding is lenient: an unreadable value reads as absent and
 * is only ever replaced under a condition on its exact text, so a corrupt key can cost a slot's reuse, never
 * an admission beyond a limit.
 */
import type { WorkflowRecord } from '../records';

/** `queue-wait:`: a workflow waiting in its queue (mirrors `record.queue`, for a cheap in-order scan). */
export type WaitEntry = { id: string; type: string; version: number; key?: string; notBefore?: number };

/** `queue-slot:` / `queue-kslot:`: the workflow that holds the slot, since when, admitted by which engine. */
export type SlotRecord = { id: string; at: number; by: string };

/** `queue-rate:`: a rate token, last used at `at` (usable again once `at + periodMs` has passed). */
export type RateToken = { at: number; id: string };

/** `start-key:`: the workflow (and run) a singleton or debounce key belongs to. */
export type StartKeyRecord = { id: string; run: number };

export function encodeWaitEntry(record: WorkflowRecord): string {
  const queue = record.queue!;
  const entry: WaitEntry = {
    id: record.id,
    type: record.type,
    version: record.version,
    ...(queue.key === undefined ? {} : { key: queue.key }),
    ...(queue.notBefore === undefined ? {} : { notBefore: queue.notBefore }),
  };
  return JSON.stringify(entry);
}

function parse(raw: string | null | undefined): Record<string, unknown> | null {
  if (raw === null || raw === undefined) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function decodeWaitEntry(raw: string | null | undefined): WaitEntry | null {
  const value = parse(raw);
  if (!value || typeof value.id !== 'string' || typeof value.type !== 'string') return null;
  if (typeof value.version !== 'number') return null;
  if (value.key !== undefined && typeof value.key !== 'string') return null;
  if (value.notBefore !== undefined && typeof value.notBefore !== 'number') return null;
  return value as WaitEntry;
}

export function decodeSlot(raw: string | null | undefined): SlotRecord | null {
  const value = parse(raw);
  return value && typeof value.id === 'string' && typeof value.at === 'number' && typeof value.by === 'string'
    ? (value as SlotRecord)
    : null;
}

export function decodeRateToken(raw: string | null | undefined): RateToken | null {
  const value = parse(raw);
  return value && typeof value.at === 'number' ? (value as RateToken) : null;
}

export function decodeStartKey(raw: string | null | undefined): StartKeyRecord | null {
  const value = parse(raw);
  return value && typeof value.id === 'string' && typeof value.run === 'number'
    ? (value as StartKeyRecord)
    : null;
}
