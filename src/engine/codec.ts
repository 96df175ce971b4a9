/**
 * Payloads (inputs, results, signals, update arguments, state) are stored as JSON. This module checks that
 * a value is plain JSON data and within the size limit *before* anything is written, so bad input fails
 * with a typed error at the caller and nothing half-written is left behind.
 *
 * Top-level `undefined` means "no value" (a signal without payload, an activity that returns nothing) and
 * round-trips as `undefined`; inside objects it is dropped and inside arrays it becomes `null`, as JSON does.
 * Otherwise only plain data is accepted: objects with a plain prototype,
 * arrays, strings, finite numbers, booleans and null. Functions, symbols, BigInt, NaN/Infinity, cycles and
 * class instances (Date, Map, …) are rejected, naming the path to the offending value.
 */
import { utf8Bytes } from '../storage/utf8';
import { PayloadNotSerializableError, PayloadTooLargeError } from './errors';
import { findNotPlainData } from './vocabulary';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** How many bytes `text` takes in UTF-8: what every payload limit counts (the storage limits count the same). */
export { utf8Bytes };

/**
 * How many bytes `value` takes as stored (its JSON in UTF-8): what `maxPayloadBytes` counts, so a form can
 * say a payload is too large before it is sent. 0 for `undefined` (no value).
 */
export function payloadBytes(value: unknown): number {
  const text = value === undefined ? undefined : JSON.stringify(value);
  return text === undefined ? 0 : utf8Bytes(text);
}

/** Throws `PayloadNotSerializableError` naming the first place `value` is not plain JSON data. */
function checkPlain(value: unknown, what: string): void {
  const found = findNotPlainData(value);
  if (found) throw new PayloadNotSerializableError(what, found.path || 'the value', found.reason);
}

/** Throws `PayloadNotSerializableError` unless `value` is plain JSON data (no size check). */
export function assertPlainData(value: unknown, what: string): void {
  checkPlain(value, what);
}

/**
 * Encodes a payload for storage. Throws `PayloadNotSerializableError` or `PayloadTooLargeError`.
 * `what` names the payload in messages, e.g. "Input of workflow 'order-1'".
 */
export function encodePayload(value: unknown, what: string, maxBytes: number): string | undefined {
  if (value === undefined) return undefined;
  checkPlain(value, what);
  const text = JSON.stringify(value);
  const bytes = utf8Bytes(text);
  if (bytes > maxBytes) throw new PayloadTooLargeError(what, bytes, maxBytes);
  return text;
}

/** Validates a payload and returns a deep copy of it as stored (so callers never share mutable objects). */
export function normalizePayload<T>(value: T, what: string, maxBytes: number): T {
  const text = encodePayload(value, what, maxBytes);
  return (text === undefined ? undefined : JSON.parse(text)) as T;
}

export function decodePayload(text: string | undefined): unknown {
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}

/** Deep copy of plain JSON data. */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
