/**
 * Ids from the injected random source, and validation of caller-chosen ids.
 */
import { InvalidArgumentError } from './errors';
import { maxIdLength } from './vocabulary';

/** A version-4 UUID built from `random` (so a seeded random gives reproducible ids). */
export function uuidFrom(random: () => number): string {
  const hex = '0123456789abcdef';
  let out = '';
  for (let i = 0; i < 36; i++) {
    if (i === 8 || i === 13 || i === 18 || i === 23) out += '-';
    else if (i === 14) out += '4';
    else if (i === 19) out += hex[(Math.floor(random() * 16) & 0x3) | 0x8];
    else out += hex[Math.floor(random() * 16)];
  }
  return out;
}

export { maxIdLength };

/** Workflow ids: 1–256 characters, no control characters. */
export function assertWorkflowId(id: unknown, what = 'Workflow id'): asserts id is string {
  if (typeof id !== 'string') throw new InvalidArgumentError(`${what} must be a string; got ${typeof id}.`);
  if (id.length === 0) throw new InvalidArgumentError(`${what} must not be empty.`);
  if (id.length > maxIdLength)
    throw new InvalidArgumentError(`${what} is ${id.length} characters long; the limit is ${maxIdLength}.`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(id))
    throw new InvalidArgumentError(`${what} ${JSON.stringify(id)} contains control characters.`);
}

/** Run numbers (run history): positive integers. */
export function assertRunNumber(run: unknown): asserts run is number {
  if (typeof run !== 'number' || !Number.isSafeInteger(run) || run < 1)
    throw new InvalidArgumentError(
      `A run number is a positive integer (1 for a first run); got ${JSON.stringify(run)}.`,
    );
}

/** Signal, update and query names: 1–200 characters. */
export function assertHandlerName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new InvalidArgumentError(
      `${what} name must be a non-empty string of at most 200 characters; got ${JSON.stringify(name)}.`,
    );
}
