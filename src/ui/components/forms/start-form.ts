/**
 * The start dialog's form logic, without React: parsing the JSON input (with the line and column of a
 * mistake), checking the optional id and durations, measuring the payload against the engine's limit, and
 * remembering recent inputs per definition. The engine validates everything again; this only lets the
 * dialog say what is wrong before a round trip, in the same words. The workflow page's dialogs (signal,
 * update, query, an external activity's completion) parse their JSON with it too.
 */
import type { StartOptions } from '../../../public';
import { locateJsonError } from './json-errors';
import { defaultMaxPayloadBytes, maxIdLength } from '../../../public/browser';

/** The engine's payload limit (`limits.maxPayloadBytes`, default 256 KiB). */
export const payloadLimitBytes = defaultMaxPayloadBytes;
/** Longest workflow id the engine accepts. */
export { maxIdLength };

export type JsonParse =
  | { ok: true; value: unknown; empty: boolean }
  | { ok: false; message: string; line: number | null; column: number | null };

/** Parses the input textarea. Empty text means "no input". */
export function parseJsonInput(text: string): JsonParse {
  if (text.trim().length === 0) return { ok: true, value: undefined, empty: true };
  try {
    return { ok: true, value: JSON.parse(text) as unknown, empty: false };
  } catch (error) {
    const problem = locateJsonError(text);
    if (problem)
      return {
        ok: false,
        message: `expected ${problem.expected}`,
        line: problem.line,
        column: problem.column,
      };
    return {
      ok: false,
      message: error instanceof Error ? error.message : String(error),
      line: null,
      column: null,
    };
  }
}

/** UTF-8 size of a JSON value as the engine stores it (the engine's own measure). */
export { payloadBytes } from '../../../public/browser';

/** "12.4 KB", "1.2 MB", "312 B". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export type StartFields = {
  workflowId: string;
  /** Seconds, as typed; empty for none. */
  startDelaySeconds: string;
  executionTimeoutSeconds: string;
};

export type FieldProblem = { field: keyof StartFields; message: string };

/** The start options the fields describe, or what is wrong with them. */
export function buildStartOptions(
  fields: StartFields,
): { ok: true; options: StartOptions } | { ok: false; problem: FieldProblem } {
  const options: StartOptions = {};
  const id = fields.workflowId;
  if (id.length > 0) {
    if (id.trim().length === 0)
      return {
        ok: false,
        problem: {
          field: 'workflowId',
          message: 'The id cannot be only spaces; leave it empty for a random id.',
        },
      };
    if (id.length > maxIdLength)
      return {
        ok: false,
        problem: {
          field: 'workflowId',
          message: `The id has ${id.length} characters; the limit is ${maxIdLength}.`,
        },
      };
    options.id = id;
  }
  const seconds = (
    field: 'startDelaySeconds' | 'executionTimeoutSeconds',
    label: string,
    key: 'startDelayMs' | 'executionTimeoutMs',
  ) => {
    const text = fields[field].trim();
    if (!text) return null;
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0)
      return { field, message: `${label} must be a positive number of seconds.` } satisfies FieldProblem;
    options[key] = Math.round(value * 1000);
    return null;
  };
  const problem =
    seconds('startDelaySeconds', 'The start delay', 'startDelayMs') ??
    seconds('executionTimeoutSeconds', 'The execution timeout', 'executionTimeoutMs');
  return problem ? { ok: false, problem } : { ok: true, options };
}

/** JSON as the dialog shows it: two-space indented. */
export function formatJson(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

const recentLimit = 5;

/** `recent` with `input` first, without duplicates, at most five. */
export function rememberInput(recent: readonly string[], input: string): string[] {
  const normalised = input.trim();
  if (!normalised) return [...recent];
  return [normalised, ...recent.filter((item) => item !== normalised)].slice(0, recentLimit);
}

function recentKey(workflowType: string): string {
  return `shuttle.recent-inputs.${workflowType}`;
}

/** Recent inputs of a definition, newest first (from localStorage; empty when unavailable). */
export function loadRecentInputs(workflowType: string): string[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(recentKey(workflowType)) ?? '[]') as unknown;
    return Array.isArray(parsed)
      ? parsed.filter((item): item is string => typeof item === 'string').slice(0, recentLimit)
      : [];
  } catch {
    return [];
  }
}

/** Remembers a successful input of a definition. */
export function saveRecentInput(workflowType: string, input: string): void {
  try {
    localStorage.setItem(
      recentKey(workflowType),
      JSON.stringify(rememberInput(loadRecentInputs(workflowType), input)),
    );
  } catch {
    // storage full or unavailable: recent inputs are a convenience
  }
}
