/**
 * Search attributes: typed values a workflow sets on itself (`ctx.setAttributes`) and lists are filtered by
 * (`engine.list({ attributes })`, `where` expressions). A pure module (its only runtime import is the error
 * class): the engine, the hosts and the studio decide values, keys and matches with the same code.
 *
 * - **Types** are declared per definition (`attributes: { customer: 'string', amount: 'number' }`): `string`,
 *   `number`, `boolean`, `time`. A time is stored as epoch milliseconds; `ctx.setAttributes` and filters take
 *   a `Date`, epoch ms or an ISO-8601 string for it.
 * - **Stored** on the workflow record (`attributes: { name: { type, value } }`, so a row or a description
 *   shows them) and as one index key per attribute, `wf-attr:<name>:<tag>:<encoded value>!<workflow id>`,
 *   written in the same batch as the record. Values are encoded so that key order is value order (numbers
 *   and times as order-preserving hex of their IEEE-754 bits, strings with an order-preserving escape), so
 *   equality is a prefix scan and a range is a bounded scan: a list by attribute reads the index range, never
 *   every workflow.
 */
import { InvalidSearchAttributeError } from './errors';

export type AttributeType = 'string' | 'number' | 'boolean' | 'time';
/** A definition's declared attributes: name → type. */
export type AttributeDeclarations = Readonly<Record<string, AttributeType>>;
/** One stored attribute. A `time`'s value is epoch milliseconds. */
export type SearchAttribute =
  | { type: 'string'; value: string }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'time'; value: number };
/** A workflow's attributes as stored on its record and shown in its rows. */
export type SearchAttributes = Record<string, SearchAttribute>;
/** What `ctx.setAttributes` takes per name: a value of the declared type, or `null` to remove it. */
export type AttributeInput = string | number | boolean | Date | null;

/** Bounds on attributes, each refused with `InvalidSearchAttributeError` before anything is written. */
export const attributeLimits = {
  /** Characters of a name: letters, digits and `_`, starting with a letter or `_`. */
  maxNameLength: 64,
  /** UTF-8 bytes of a string value. */
  maxStringBytes: 256,
  /** Attributes one workflow may hold at once. */
  maxCount: 32,
} as const;

export const attributeTypes: readonly AttributeType[] = ['string', 'number', 'boolean', 'time'];

const namePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function isAttributeType(value: unknown): value is AttributeType {
  return typeof value === 'string' && (attributeTypes as readonly string[]).includes(value);
}

/** Throws unless `name` is a valid attribute name. */
export function assertAttributeName(name: unknown, where: string): asserts name is string {
  if (typeof name !== 'string' || name.length > attributeLimits.maxNameLength || !namePattern.test(name))
    throw new InvalidSearchAttributeError(
      typeof name === 'string' ? name : String(name),
      `${where}: attribute name ${JSON.stringify(name)} is invalid: use 1–${attributeLimits.maxNameLength} letters, digits or '_', starting with a letter or '_'.`,
    );
}

/** Throws a `TypeError` naming what is wrong with a definition's `attributes` declaration. */
export function assertDeclarations(workflow: string, declarations: unknown): void {
  if (typeof declarations !== 'object' || declarations === null || Array.isArray(declarations))
    throw new TypeError(
      `Workflow '${workflow}': attributes must be an object of name → type, e.g. { customer: 'string', amount: 'number' }.`,
    );
  const entries = Object.entries(declarations);
  if (entries.length > attributeLimits.maxCount)
    throw new TypeError(
      `Workflow '${workflow}' declares ${entries.length} attributes; at most ${attributeLimits.maxCount}.`,
    );
  for (const [name, type] of entries) {
    if (name.length > attributeLimits.maxNameLength || !namePattern.test(name))
      throw new TypeError(
        `Workflow '${workflow}': attribute name ${JSON.stringify(name)} is invalid: use 1–${attributeLimits.maxNameLength} letters, digits or '_', starting with a letter or '_'.`,
      );
    if (!isAttributeType(type))
      throw new TypeError(
        `Workflow '${workflow}': attribute '${name}' has type ${JSON.stringify(type)}; use 'string', 'number', 'boolean' or 'time'.`,
      );
  }
}

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const isoPattern = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A time given as a `Date`, epoch ms or an ISO-8601 string, as epoch ms; null when it is none of them. */
export function timeOf(value: unknown): number | null {
  if (value instanceof Date) return Number.isFinite(value.getTime()) ? value.getTime() : null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && isoPattern.test(value.trim())) {
    const text = value.trim();
    // A date alone, or a date-time without a zone, is UTC (never the reader's local time zone).
    const withZone = /T|\s/.test(text)
      ? /Z|[+-]\d{2}:?\d{2}$/.test(text)
        ? text
        : `${text}Z`
      : `${text}T00:00:00Z`;
    const ms = new Date(withZone.replace(' ', 'T')).getTime();
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

function describe(value: unknown): string {
  if (value instanceof Date)
    return `Date ${Number.isFinite(value.getTime()) ? value.toISOString() : 'Invalid Date'}`;
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (value === undefined) return 'undefined';
  return Array.isArray(value) ? 'an array' : typeof value;
}

function expectation(type: AttributeType): string {
  switch (type) {
    case 'string':
      return `a string of at most ${attributeLimits.maxStringBytes} UTF-8 bytes`;
    case 'number':
      return 'a finite number';
    case 'boolean':
      return 'true or false';
    case 'time':
      return 'a time (a Date, epoch milliseconds or an ISO-8601 string)';
  }
}

/** `value` as an attribute of `type`, or throws naming the attribute, the type and the value. */
export function attributeValue(
  name: string,
  type: AttributeType,
  value: unknown,
  where: string,
): SearchAttribute {
  switch (type) {
    case 'string':
      if (typeof value === 'string' && utf8Length(value) <= attributeLimits.maxStringBytes)
        return { type, value };
      break;
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value))
        return { type, value: value === 0 ? 0 : value };
      break;
    case 'boolean':
      if (typeof value === 'boolean') return { type, value };
      break;
    case 'time': {
      const ms = timeOf(value);
      if (ms !== null) return { type, value: ms };
      break;
    }
  }
  throw new InvalidSearchAttributeError(
    name,
    `${where}: attribute '${name}' is declared '${type}' and takes ${expectation(type)}; got ${describe(value)}.`,
    type,
  );
}

/**
 * The changes `ctx.setAttributes(changes)` asks of a workflow of type `workflowType` that declares
 * `declarations`: each name's new attribute, or null to remove it. Throws `InvalidSearchAttributeError` for
 * an undeclared name or a value of the wrong type.
 */
export function attributeChanges(
  workflowType: string,
  declarations: AttributeDeclarations | undefined,
  changes: unknown,
  /** Who sets them, for messages: `ctx.setAttributes` (default) or a start's option. */
  by = 'ctx.setAttributes',
): Record<string, SearchAttribute | null> {
  const where = `${by} in workflow type '${workflowType}'`;
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes) || changes instanceof Date)
    throw new InvalidSearchAttributeError(
      '',
      `${where}: takes an object of name → value (null removes a name), e.g. { customer: 'acme' }; got ${describe(changes)}.`,
    );
  const result: Record<string, SearchAttribute | null> = {};
  for (const [name, value] of Object.entries(changes)) {
    assertAttributeName(name, where);
    const type = declarations?.[name];
    if (!type)
      throw new InvalidSearchAttributeError(
        name,
        `${where}: attribute '${name}' is not declared. Declare it on the definition: attributes: { ${name}: 'string' | 'number' | 'boolean' | 'time' }${
          declarations && Object.keys(declarations).length > 0
            ? ` (declared: ${Object.keys(declarations).join(', ')})`
            : ''
        }.`,
      );
    result[name] = value === null ? null : attributeValue(name, type, value, where);
  }
  return result;
}

/**
 * `current` with `changes` applied (null removes), or undefined when none is left. Throws
 * `InvalidSearchAttributeError` past the count limit.
 */
export function applyAttributeChanges(
  workflowId: string,
  current: SearchAttributes | undefined,
  changes: Readonly<Record<string, SearchAttribute | null>>,
): SearchAttributes | undefined {
  const next: SearchAttributes = { ...current };
  for (const [name, attribute] of Object.entries(changes)) {
    if (attribute === null) delete next[name];
    else next[name] = attribute;
  }
  const count = Object.keys(next).length;
  if (count > attributeLimits.maxCount)
    throw new InvalidSearchAttributeError(
      '',
      `Workflow '${workflowId}' would hold ${count} search attributes; at most ${attributeLimits.maxCount}. Remove some (set them to null) first.`,
    );
  return count === 0 ? undefined : next;
}

// ---------------------------------------------------------------------------------------------------------
// Index keys

export const attributeIndexPrefix = 'wf-attr:';

const tags: Record<AttributeType, string> = { string: 's', number: 'n', boolean: 'b', time: 't' };
const typeOfTag: Record<string, AttributeType> = { s: 'string', n: 'number', b: 'boolean', t: 'time' };

/** A number as 16 hex digits whose string order is numeric order (negatives and fractions included). */
export function encodeNumber(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value === 0 ? 0 : value); // -0 sorts as 0
  let high = view.getUint32(0);
  let low = view.getUint32(4);
  if (high & 0x80000000) {
    high = ~high >>> 0;
    low = ~low >>> 0;
  } else high = (high | 0x80000000) >>> 0;
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

/**
 * A string whose order is kept in key order and that never contains `!` (the key's terminator, which sorts
 * below every encoded character): characters up to `"` are written as `"` and the character 0x40 above.
 */
export function encodeString(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    out += code <= 0x22 ? `"${String.fromCharCode(code + 0x40)}` : value[i];
  }
  return out;
}

function encodeValue(attribute: SearchAttribute): string {
  switch (attribute.type) {
    case 'string':
      return encodeString(attribute.value);
    case 'boolean':
      return attribute.value ? '1' : '0';
    default:
      return encodeNumber(attribute.value);
  }
}

/** The index keys of attribute `name` of one type: `wf-attr:<name>:<tag>:`. */
export function attributeTypePrefix(name: string, type: AttributeType): string {
  return `${attributeIndexPrefix}${name}:${tags[type]}:`;
}

/** Every index key of attribute `name`, whatever its type. */
export function attributeNamePrefix(name: string): string {
  return `${attributeIndexPrefix}${name}:`;
}

/** The type of an index key under `attributeNamePrefix(name)`. */
export function attributeTypeOfKey(name: string, key: string): AttributeType | null {
  return typeOfTag[key.slice(attributeNamePrefix(name).length, attributeNamePrefix(name).length + 1)] ?? null;
}

/** The index key of one attribute of workflow `escapedId` (escaped as keys.ts escapes ids). */
export function attributeIndexKey(name: string, attribute: SearchAttribute, escapedId: string): string {
  return `${attributeTypePrefix(name, attribute.type)}${encodeValue(attribute)}!${escapedId}`;
}

/** The encoded value and escaped workflow id of an index key under `prefix` (a type prefix). */
export function parseAttributeIndexKey(
  prefix: string,
  key: string,
): { encoded: string; escapedId: string } | null {
  if (!key.startsWith(prefix)) return null;
  const bang = key.indexOf('!', prefix.length);
  if (bang < 0) return null;
  return { encoded: key.slice(prefix.length, bang), escapedId: key.slice(bang + 1) };
}

function sameAttribute(a: SearchAttribute | undefined, b: SearchAttribute | undefined): boolean {
  return a !== undefined && b !== undefined && a.type === b.type && a.value === b.value;
}

/**
 * The index writes that move a workflow's attributes from `before` to `after`: the keys of changed or
 * removed attributes deleted, those of new or changed ones put (the value is the workflow type).
 */
export function attributeIndexWrites(
  escapedId: string,
  workflowType: string,
  before: SearchAttributes | undefined,
  after: SearchAttributes | undefined,
): ({ type: 'put'; key: string; value: string } | { type: 'delete'; key: string })[] {
  const writes: ({ type: 'put'; key: string; value: string } | { type: 'delete'; key: string })[] = [];
  for (const [name, attribute] of Object.entries(before ?? {}))
    if (!sameAttribute(attribute, after?.[name]))
      writes.push({ type: 'delete', key: attributeIndexKey(name, attribute, escapedId) });
  for (const [name, attribute] of Object.entries(after ?? {}))
    if (!sameAttribute(attribute, before?.[name]))
      writes.push({ type: 'put', key: attributeIndexKey(name, attribute, escapedId), value: workflowType });
  return writes;
}

/** Checks an attribute's record field as stored (a corrupt one is left out of rows rather than trusted). */
export function isSearchAttributes(value: unknown): value is SearchAttributes {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value as Record<string, unknown>).every((entry) => {
    if (typeof entry !== 'object' || entry === null) return false;
    const { type, value: v } = entry as { type?: unknown; value?: unknown };
    return (
      (type === 'string' && typeof v === 'string') ||
      (type === 'boolean' && typeof v === 'boolean') ||
      ((type === 'number' || type === 'time') && typeof v === 'number' && Number.isFinite(v))
    );
  });
}

// ---------------------------------------------------------------------------------------------------------
// Filters

/** A range (or equality) on one attribute: every bound given must hold. */
export type AttributeRange = {
  eq?: AttributeFilterValue;
  gt?: AttributeFilterValue;
  gte?: AttributeFilterValue;
  lt?: AttributeFilterValue;
  lte?: AttributeFilterValue;
};
export type AttributeFilterValue = string | number | boolean | Date;
/** `list({ attributes })`: name → a value (equality) or a range. Every name must match. */
export type AttributeFilter = Readonly<Record<string, AttributeFilterValue | AttributeRange>>;

const operators = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
type Operator = (typeof operators)[number];
const symbols: Record<string, Operator> = {
  '=': 'eq',
  '==': 'eq',
  '>': 'gt',
  '>=': 'gte',
  '<': 'lt',
  '<=': 'lte',
};

/** One condition as the caller gave it, before its attribute's type is known. */
export type AttributeCondition = {
  name: string;
  op: Operator;
  /** A typed value (`attributes`), or the text of a `where` expression (`text: true`). */
  value: unknown;
  text?: true;
};

/** A condition with its value typed: what `list` scans by and each row is matched against. */
export type ResolvedCondition = { name: string; op: Operator; attribute: SearchAttribute };

/**
 * Parses a `where` expression: `name op value`, op one of `=` `>` `>=` `<` `<=`; the value is text, typed
 * by the attribute's type when the list runs (quotes around it are optional: `customer="acme corp"`).
 */
export function parseWhere(expression: unknown): AttributeCondition {
  if (typeof expression !== 'string')
    throw new InvalidSearchAttributeError(
      '',
      `A where expression is a string like "customer=acme" or "amount>=100"; got ${describe(expression)}.`,
    );
  const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|=|>=|<=|>|<)\s*(.*?)\s*$/s.exec(expression);
  if (!match)
    throw new InvalidSearchAttributeError(
      '',
      `Where expression ${JSON.stringify(expression)} is not 'name op value': use an attribute name, one of = > >= < <=, and a value, e.g. "customer=acme", "amount>=100", "due<2026-01-01".`,
    );
  const [, name, symbol, rawValue] = match as unknown as [string, string, string, string];
  assertAttributeName(name, `Where expression ${JSON.stringify(expression)}`);
  let value = rawValue;
  if (value.length >= 2 && /^(["']).*\1$/s.test(value)) value = value.slice(1, -1);
  else if (value === '')
    throw new InvalidSearchAttributeError(
      name,
      `Where expression ${JSON.stringify(expression)} has no value after '${symbol}' (write "" for the empty string).`,
    );
  return { name, op: symbols[symbol]!, value, text: true };
}

/** The conditions of `attributes` and `where`, checked for shape (operators, names), not yet typed. */
export function attributeConditions(
  attributes: AttributeFilter | undefined,
  where: readonly string[] | undefined,
): AttributeCondition[] {
  const conditions: AttributeCondition[] = [];
  if (attributes !== undefined) {
    if (typeof attributes !== 'object' || attributes === null || Array.isArray(attributes))
      throw new InvalidSearchAttributeError(
        '',
        `list: attributes is an object of name → value or range, e.g. { customer: 'acme', amount: { gte: 100 } }; got ${describe(attributes)}.`,
      );
    for (const [name, filter] of Object.entries(attributes)) {
      assertAttributeName(name, 'list: attributes');
      if (typeof filter === 'object' && filter !== null && !(filter instanceof Date)) {
        const entries = Object.entries(filter as Record<string, unknown>);
        if (entries.length === 0)
          throw new InvalidSearchAttributeError(
            name,
            `list: attribute '${name}' has an empty range; give eq, gt, gte, lt or lte.`,
          );
        for (const [op, value] of entries) {
          if (!(operators as readonly string[]).includes(op))
            throw new InvalidSearchAttributeError(
              name,
              `list: attribute '${name}' has unknown operator '${op}'; use eq, gt, gte, lt or lte.`,
            );
          conditions.push({ name, op: op as Operator, value });
        }
      } else conditions.push({ name, op: 'eq', value: filter });
    }
  }
  if (where !== undefined) {
    if (!Array.isArray(where))
      throw new InvalidSearchAttributeError(
        '',
        `list: where is an array of expressions like ["customer=acme", "amount>=100"]; got ${describe(where)}.`,
      );
    for (const expression of where) conditions.push(parseWhere(expression));
  }
  return conditions;
}

/** Text of a `where` expression as a value of `type`, or undefined when it is not one. */
function fromText(type: AttributeType, text: string): unknown {
  switch (type) {
    case 'string':
      return text;
    case 'number':
      return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'time':
      return /^-?\d+$/.test(text) ? Number(text) : text;
  }
}

/**
 * Attributes given as text, `name=value` each (a command line's `--attribute`), as values of the types
 * `declarations` declare (a name it does not declare keeps its text: the start refuses it by name). Throws
 * for text that is not `name=value`.
 */
export function attributesFromText(
  declarations: AttributeDeclarations | undefined,
  texts: readonly string[],
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const text of texts) {
    const equals = text.indexOf('=');
    if (equals <= 0)
      throw new InvalidSearchAttributeError(
        '',
        `An attribute is given as name=value (e.g. customer=acme, amount=120, due=2026-03-01); got ${JSON.stringify(text)}.`,
      );
    const name = text.slice(0, equals).trim();
    let value = text.slice(equals + 1).trim();
    if (value.length >= 2 && /^(["']).*\1$/s.test(value)) value = value.slice(1, -1);
    const type = declarations?.[name];
    values[name] = type ? fromText(type, value) : value;
  }
  return values;
}

/** `condition` with its value as an attribute of `type`; throws for a wrong value or a range on a boolean. */
export function resolveCondition(condition: AttributeCondition, type: AttributeType): ResolvedCondition {
  const { name, op } = condition;
  if (type === 'boolean' && op !== 'eq')
    throw new InvalidSearchAttributeError(
      name,
      `list: attribute '${name}' is a boolean; it takes equality only (${name}=true), not a range.`,
      type,
    );
  const value = condition.text ? fromText(type, String(condition.value)) : condition.value;
  return { name, op, attribute: attributeValue(name, type, value, 'list') };
}

function compare(a: SearchAttribute, b: SearchAttribute): number {
  if (a.type === 'string' || b.type === 'string') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  return Number(a.value) - Number(b.value);
}

/** Whether `attributes` (a row's) satisfy every resolved condition. */
export function matchesConditions(
  attributes: SearchAttributes | undefined,
  conditions: readonly ResolvedCondition[],
): boolean {
  return conditions.every(({ name, op, attribute }) => {
    const own = attributes?.[name];
    if (!own || own.type !== attribute.type) return false;
    const order = compare(own, attribute);
    switch (op) {
      case 'eq':
        return order === 0;
      case 'gt':
        return order > 0;
      case 'gte':
        return order >= 0;
      case 'lt':
        return order < 0;
      case 'lte':
        return order <= 0;
    }
  });
}

/**
 * Whether a row's attributes satisfy conditions not yet typed, each typed by the row's own attribute of that
 * name (the studio patching a row into an open list; a value that is not of the row's type does not match).
 */
export function matchesAttributeConditions(
  attributes: SearchAttributes | undefined,
  conditions: readonly AttributeCondition[],
): boolean {
  return conditions.every((condition) => {
    const own = attributes?.[condition.name];
    if (!own) return false;
    try {
      return matchesConditions(attributes, [resolveCondition(condition, own.type)]);
    } catch {
      return false;
    }
  });
}

/**
 * How `list` walks the index for one condition: the type prefix, the key to scan after, and the last
 * encoded value within range (with whether it is itself included).
 */
export function indexRange(condition: ResolvedCondition): {
  prefix: string;
  after: string | undefined;
  stop: (encoded: string) => boolean;
} {
  const prefix = attributeTypePrefix(condition.name, condition.attribute.type);
  const encoded = encodeValue(condition.attribute);
  switch (condition.op) {
    case 'eq':
      return { prefix: `${prefix}${encoded}!`, after: undefined, stop: () => false };
    case 'gte':
      return { prefix, after: `${prefix}${encoded}`, stop: () => false };
    case 'gt':
      return { prefix, after: `${prefix}${encoded}"`, stop: () => false };
    case 'lt':
      return { prefix, after: undefined, stop: (value) => value >= encoded };
    case 'lte':
      return { prefix, after: undefined, stop: (value) => value > encoded };
  }
}

/** The conditions on the attribute the walk is driven by: an equality first, else the first name's bounds. */
export function drivingRange(conditions: readonly ResolvedCondition[]): {
  prefix: string;
  after: string | undefined;
  stop: (encoded: string) => boolean;
  typePrefix: string;
} {
  const eq = conditions.find((condition) => condition.op === 'eq');
  if (eq) return { ...indexRange(eq), typePrefix: attributeTypePrefix(eq.name, eq.attribute.type) };
  const first = conditions[0]!;
  const same = conditions.filter(
    (condition) => condition.name === first.name && condition.attribute.type === first.attribute.type,
  );
  let after: string | undefined;
  const stops: ((encoded: string) => boolean)[] = [];
  for (const condition of same) {
    const range = indexRange(condition);
    if (range.after !== undefined && (after === undefined || range.after > after)) after = range.after;
    if (condition.op === 'lt' || condition.op === 'lte') stops.push(range.stop);
  }
  const prefix = attributeTypePrefix(first.name, first.attribute.type);
  return { prefix, after, stop: (encoded) => stops.some((stop) => stop(encoded)), typePrefix: prefix };
}

/**
 * The attributes a recorded history leaves a run with: its `set-attributes` entries' changes, applied in
 * order (`fork` gives them to the run it starts).
 */
export function attributesOfHistory(
  entries: readonly { t: string; kind?: string; ok?: boolean; value?: unknown }[],
): SearchAttributes | undefined {
  let attributes: SearchAttributes = {};
  for (const entry of entries) {
    if (entry.t !== 'op' || entry.kind !== 'set-attributes' || entry.ok !== true) continue;
    const changes = entry.value;
    if (typeof changes !== 'object' || changes === null) continue;
    const next: SearchAttributes = { ...attributes };
    for (const [name, attribute] of Object.entries(changes as Record<string, unknown>)) {
      if (attribute === null) delete next[name];
      else if (isSearchAttributes({ [name]: attribute })) next[name] = attribute as SearchAttribute;
    }
    attributes = next;
  }
  return Object.keys(attributes).length > 0 ? attributes : undefined;
}

/** An attribute's value as text: a time as ISO-8601 UTC, anything else as is (the CLI, the studio). */
export function formatAttribute(attribute: SearchAttribute): string {
  return attribute.type === 'time' ? new Date(attribute.value).toISOString() : String(attribute.value);
}

/** A workflow's attributes in one line, `name=value` each, in name order (`''` for none). */
export function formatAttributes(attributes: SearchAttributes | undefined): string {
  return Object.keys(attributes ?? {})
    .sort()
    .map((name) => `${name}=${formatAttribute(attributes![name]!)}`)
    .join(' ');
}
