/** Values of command-line flags, checked: every problem is a StartupError that names the flag. */
import { StartupError } from './store';

const durationUnits: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration from a flag (`30d`, `12h`, `90m`, `45s`, `500ms`, `1.5h`) in ms, or a StartupError naming the flag. */
export function durationFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value.trim());
  const ms = match ? Math.round(Number(match[1]) * durationUnits[match[2]!]!) : NaN;
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new StartupError(
      `--${name} must be a duration like 30d, 12h, 90m, 45s or 500ms (a number and a unit: ms, s, m, h or d); got '${value}'.`,
    );
  return ms;
}

/** A whole number ≥ `min` from a flag, or a StartupError naming the flag. */
export function integerFlag(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min)
    throw new StartupError(`--${name} must be a whole number of at least ${min}; got '${value}'.`);
  return parsed;
}

/**
 * A point in time from a flag, in epoch ms: a duration ago (`2h`: two hours before `now`) or an ISO 8601
 * time (`2026-12-07T09:00Z`, `2026-12-07`); or a StartupError naming the flag.
 */
export function timeFlag(name: string, value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?(ms|s|m|h|d)$/.test(text)) return now - durationFlag(name, text)!;
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(at))
    throw new StartupError(
      `--${name} must be a duration ago (2h, 30m, 7d) or an ISO 8601 time (2026-12-07T09:00Z); got '${value}'.`,
    );
  return at;
}
