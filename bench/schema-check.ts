/**
 * The checks every part's schema check of `results/latest.json` is made of (results.ts and each part's
 * `*-results.ts`): a problem is pushed as a line naming the path; nothing throws.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` is a finite number or null. */
export function checkNumber(where: string, value: unknown, problems: string[]): void {
  if (value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
    problems.push(`${where} must be a finite number or null`);
}

/** `value` is an object with exactly the `expected` keys (each missing and each extra one is a problem). */
export function checkExactKeys(
  where: string,
  value: unknown,
  expected: readonly string[],
  problems: string[],
): value is Record<string, unknown> {
  if (!isRecord(value)) {
    problems.push(`${where} must be an object`);
    return false;
  }
  for (const key of expected) if (!(key in value)) problems.push(`${where}.${key} is missing`);
  for (const key of Object.keys(value))
    if (!expected.includes(key)) problems.push(`${where}.${key} is not in the schema`);
  return true;
}
