/**
 * The field rules of the wire contract: each method's params are declared as a rule per field (its
 * declaration, in this folder's domain files), and `checkField` says in words why a value breaks one. Pure.
 */

/** What one param must be. A `?` suffix: it may be absent. `mode`: `'engine'` or `'viewer'`. */
export type FieldRule =
  | 'string'
  | 'string?'
  | 'integer'
  | 'integer?'
  | 'number'
  | 'number?'
  | 'boolean?'
  | 'object'
  | 'object?'
  | 'unknown?'
  | 'mode';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** Why `value` breaks `rule`, or null when it is fine. */
export function checkField(rule: FieldRule, value: unknown): string | null {
  const optional = rule.endsWith('?');
  if (value === undefined) return optional ? null : 'is missing';
  switch (rule) {
    case 'string':
    case 'string?':
      return typeof value === 'string' ? null : `must be a string, not ${describeValue(value)}`;
    case 'integer':
    case 'integer?':
      return Number.isSafeInteger(value) ? null : `must be an integer, not ${describeValue(value)}`;
    case 'number':
    case 'number?':
      return typeof value === 'number' && Number.isFinite(value)
        ? null
        : `must be a finite number, not ${describeValue(value)}`;
    case 'boolean?':
      return typeof value === 'boolean' ? null : `must be true or false, not ${describeValue(value)}`;
    case 'object':
    case 'object?':
      return isPlainObject(value) ? null : `must be a plain object, not ${describeValue(value)}`;
    case 'mode':
      return value === 'engine' || value === 'viewer'
        ? null
        : `must be 'engine' or 'viewer', not ${describeValue(value)}`;
    case 'unknown?':
      return null;
  }
}
