/**
 * The storage conformance suite: one set of cases every adapter must pass, framework-free so that it runs in
 * Vitest (`describeStorageConformance` in conformance.test-support.ts) and in a real browser page (the
 * Playwright run against real IndexedDB).
 *
 * Each case opens a fresh, empty, isolated store through the factory, may open more instances ("peers") on
 * the SAME store, and closes everything it opened when it ends. Every case asserts something that an adapter
 * getting that part of the contract wrong would fail; conformance.test.ts runs deliberately broken adapters
 * to show that the key cases do fail.
 *
 * Cases that need an optional capability (`groupCommit`, `changeFeed`, `durable`) report `skipped` on an
 * adapter that declares it does not have it; a separate case checks that the declared capabilities match the
 * methods present.
 */

import { isStorageError, type StorageError } from './errors';
import {
  storageLimits,
  type Condition,
  type Entry,
  type Operation,
  type Storage,
  type StorageCapabilities,
} from './types';

/** A fresh store opened for one case. */
export interface ConformanceStore {
  /** The first instance, on a fresh, empty store that no other case uses. */
  readonly storage: Storage;
  /**
   * Opens another instance on the same store, as another tab or worker would (for `MemoryStorage`, the same
   * instance). The case closes it when it ends.
   */
  openPeer(): Promise<Storage>;
  /** The value size limit the store was opened with. Default `storageLimits.defaultMaxValueBytes`. */
  readonly maxValueBytes?: number;
  /** How long to wait for a change to be reported before failing, in milliseconds. Default 5000. */
  readonly changeFeedTimeoutMs?: number;
  /** Called after the case has closed every instance, e.g. to delete the database. */
  dispose?(): Promise<void>;
}

/** Opens a fresh, empty, isolated store for one case. */
export type StorageConformanceFactory = () => Promise<ConformanceStore>;

export type ConformanceOutcome = 'passed' | 'skipped';

export interface StorageConformanceCase {
  /** A sentence about the behaviour checked. */
  readonly name: string;
  /** The capability the case needs; without it the case is skipped. */
  readonly requires?: keyof StorageCapabilities;
  /** Resolves when the case passed or was skipped; rejects with a `ConformanceFailure` (or the error met). */
  run(): Promise<ConformanceOutcome>;
}

export type ConformanceResult = {
  name: string;
  outcome: ConformanceOutcome | 'failed';
  /** Present when failed: the failure's message. */
  error?: string;
  durationMs: number;
};

/** An assertion of the suite did not hold. */
export class ConformanceFailure extends Error {
  override readonly name = 'ConformanceFailure';
}

type CaseContext = {
  storage: Storage;
  openPeer(): Promise<Storage>;
  maxValueBytes: number;
  /** Waits for a change feed report (see `waitFor`), up to the store's `changeFeedTimeoutMs`. */
  waitForReport(condition: () => boolean, what: string): Promise<void>;
};

type CaseBody = (context: CaseContext) => Promise<void>;

// ---------------------------------------------------------------------------------------------------------
// Assertions

function fail(message: string): never {
  throw new ConformanceFailure(message);
}

function show(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 300 ? `${text.slice(0, 300)}… (${text.length} characters)` : text;
}

function isDeepEqual(left: unknown, right: unknown): boolean {
  if (Object.is(left, right)) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left) !== Array.isArray(right)) return false;
  const leftKeys = Object.keys(left);
  const rightKeys = Object.keys(right);
  if (leftKeys.length !== rightKeys.length) return false;
  return leftKeys.every(
    (key) =>
      Object.prototype.hasOwnProperty.call(right, key) &&
      isDeepEqual((left as Record<string, unknown>)[key], (right as Record<string, unknown>)[key]),
  );
}

function assertEqual(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepEqual(actual, expected)) fail(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

function assert(condition: boolean, message: string): void {
  if (!condition) fail(message);
}

/** Awaits `call`, which must reject with a `StorageError` of `code` naming `operation`; returns the error. */
async function expectStorageError(
  call: () => Promise<unknown>,
  expected: { code: StorageError['code']; operation: string },
  what: string,
): Promise<StorageError> {
  let outcome: unknown;
  try {
    outcome = await call();
  } catch (error) {
    if (!isStorageError(error)) fail(`${what}: expected a StorageError, got ${String(error)}`);
    assertEqual(error.code, expected.code, `${what}: error code`);
    assertEqual(error.operation, expected.operation, `${what}: error operation`);
    return error;
  }
  return fail(
    `${what}: expected a StorageError (${expected.code}), but the call resolved with ${show(outcome)}`,
  );
}

/** Polls `condition` until it holds; fails after `timeoutMs`. For change feeds, which are asynchronous. */
async function waitFor(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

const put = (key: string, value: string): Operation => ({ type: 'put', key, value });
const remove = (key: string): Operation => ({ type: 'delete', key });
const expecting = (key: string, expected: string | null): Condition => ({ key, expected });

async function putAll(storage: Storage, entries: Record<string, string>): Promise<void> {
  await storage.batch(Object.entries(entries).map(([key, value]) => put(key, value)));
}

/** Every entry of the store, in key order. */
function readAll(storage: Storage): Promise<Entry[]> {
  return storage.scan('');
}

async function scanKeys(storage: Storage, prefix: string, options?: Parameters<Storage['scan']>[1]) {
  return (await storage.scan(prefix, options)).map((entry) => entry.key);
}

/** A deterministic shuffle, so insertion order never happens to be key order. */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  let state = 12345;
  for (let index = copy.length - 1; index > 0; index--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const other = state % (index + 1);
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
}

function sortedByCodeUnits(keys: readonly string[]): string[] {
  return [...keys].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
}

/** Lets other pending work run, `count` microtask turns. */
async function yieldTurns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await Promise.resolve();
}

// ---------------------------------------------------------------------------------------------------------
// Cases

type CaseDefinition = { name: string; requires?: keyof StorageCapabilities; body: CaseBody };

/** Every case, built on demand so that importing this module has no side effects (bundles can drop it). */
function defineCases(): CaseDefinition[] {
  const cases: CaseDefinition[] = [];
  const defineCase = (name: string, body: CaseBody, requires?: keyof StorageCapabilities): void => {
    cases.push({ name, body, ...(requires ? { requires } : {}) });
  };

  defineCase('get returns null for an absent key and the latest value after puts', async ({ storage }) => {
    assertEqual(await storage.get('absent'), null, 'get of an absent key');
    await storage.batch([put('a', '1')]);
    assertEqual(await storage.get('a'), '1', 'get after a put');
    await storage.batch([put('a', '2')]);
    assertEqual(await storage.get('a'), '2', 'get after an overwriting put');
    assertEqual(await storage.get('b'), null, 'get of another absent key');
  });

  defineCase(
    'values round-trip exactly, including the empty string and non-ASCII text',
    async ({ storage }) => {
      const values: Record<string, string> = {
        empty: '',
        space: ' ',
        json: '{"a":1,"b":[true,null]}',
        unicode: 'é€日本😀',
        controls: 'line\nbreak\ttab\u0000nul',
      };
      await putAll(storage, values);
      for (const [key, value] of Object.entries(values)) {
        assertEqual(await storage.get(key), value, `value of ${key}`);
      }
      assertEqual(
        await storage.getMany(Object.keys(values)),
        Object.values(values),
        'getMany of the same keys',
      );
    },
  );

  defineCase('a delete removes the key, and deleting an absent key is harmless', async ({ storage }) => {
    await putAll(storage, { a: '1', b: '2' });
    await storage.batch([remove('a')]);
    assertEqual(await storage.get('a'), null, 'deleted key');
    assertEqual(await storage.get('b'), '2', 'untouched key');
    await storage.batch([remove('never-written')]);
    assertEqual(await readAll(storage), [{ key: 'b', value: '2' }], 'store after deleting an absent key');
  });

  defineCase('getMany returns values in the order asked, with null for absent keys', async ({ storage }) => {
    await putAll(storage, { a: '1', b: '2', c: '3' });
    assertEqual(
      await storage.getMany(['c', 'missing', 'a', 'b', 'c']),
      ['3', null, '1', '2', '3'],
      'getMany',
    );
    assertEqual(await storage.getMany([]), [], 'getMany of no keys');
  });

  defineCase(
    'a write through one instance is read through another instance of the same store',
    async (context) => {
      const peer = await context.openPeer();
      await context.storage.batch([put('shared', 'from-first')]);
      assertEqual(await peer.get('shared'), 'from-first', 'peer reads the first instance’s write');
      await peer.batch([put('shared', 'from-peer')]);
      assertEqual(await context.storage.get('shared'), 'from-peer', 'first instance reads the peer’s write');
    },
  );

  defineCase('scan returns exactly the keys under the prefix, in key order', async ({ storage }) => {
    const keys = [
      'w',
      'wf',
      'wf:',
      'wf:a',
      'wf:a:1',
      'wf:ab',
      'wf:b',
      'wf;',
      'wf;x',
      'wf-idx:a',
      'wfa',
      'x',
      'wf:a;',
    ];
    for (const key of shuffled(keys)) await storage.batch([put(key, `value of ${key}`)]);
    assertEqual(
      await storage.scan('wf:'),
      ['wf:', 'wf:a', 'wf:a:1', 'wf:a;', 'wf:ab', 'wf:b'].map((key) => ({ key, value: `value of ${key}` })),
      "scan('wf:') entries",
    );
    assertEqual(
      await scanKeys(storage, 'wf:a'),
      ['wf:a', 'wf:a:1', 'wf:a;', 'wf:ab'],
      'a prefix that is itself a key',
    );
    assertEqual(
      await scanKeys(storage, 'wf'),
      sortedByCodeUnits(keys.filter((key) => key.startsWith('wf'))),
      "scan('wf') includes longer prefixes and excludes 'w' and 'x'",
    );
    assertEqual(await scanKeys(storage, ''), sortedByCodeUnits(keys), 'the empty prefix scans everything');
    assertEqual(await scanKeys(storage, 'wf:a:1'), ['wf:a:1'], 'a prefix matching one key');
  });

  defineCase('scan honours after (exclusive), limit and reverse', async ({ storage }) => {
    const inside = ['p:01', 'p:02', 'p:03', 'p:04', 'p:05', 'p:06', 'p:07', 'p:08', 'p:09'];
    for (const key of shuffled([...inside, 'o:1', 'p', 'p;', 'q:1'])) await storage.batch([put(key, key)]);
    const descending = [...inside].reverse();
    const checks: [Parameters<Storage['scan']>[1], string[], string][] = [
      [{ after: 'p:03' }, inside.slice(3), 'after an existing key'],
      [{ after: 'p:035' }, inside.slice(3), 'after a key that does not exist'],
      [{ after: 'a' }, inside, 'after a key before the range'],
      [{ after: 'p:' }, inside, 'after the prefix itself'],
      [{ after: 'p:09' }, [], 'after the last key'],
      [{ after: 'z' }, [], 'after a key beyond the range'],
      [{ limit: 3 }, inside.slice(0, 3), 'limit'],
      [{ limit: 0 }, [], 'limit 0'],
      [{ limit: 100 }, inside, 'limit above the number of keys'],
      [{ after: 'p:02', limit: 2 }, ['p:03', 'p:04'], 'after with limit'],
      [{ reverse: true }, descending, 'reverse'],
      [{ reverse: true, limit: 2 }, ['p:09', 'p:08'], 'reverse with limit takes the last keys'],
      [{ reverse: true, after: 'p:05' }, ['p:04', 'p:03', 'p:02', 'p:01'], 'reverse after a key (below it)'],
      [
        { reverse: true, after: 'p:055', limit: 2 },
        ['p:05', 'p:04'],
        'reverse after a missing key, with limit',
      ],
      [{ reverse: true, after: 'z' }, descending, 'reverse after a key beyond the range'],
      [{ reverse: true, after: 'p:01' }, [], 'reverse after the first key'],
      [{ reverse: true, after: 'a' }, [], 'reverse after a key before the range'],
    ];
    for (const [options, expected, what] of checks) {
      assertEqual(await scanKeys(storage, 'p:', options), expected, `scan('p:', ${show(options)}): ${what}`);
    }
  });

  defineCase(
    'scan pages through a range with after and limit, without gaps or repeats',
    async ({ storage }) => {
      const keys = Array.from({ length: 25 }, (_, index) => `page:${String(index).padStart(3, '0')}`);
      await storage.batch([
        ...shuffled(keys).map((key) => put(key, key)),
        put('pagf', 'outside'),
        put('pag', 'outside'),
      ]);
      for (const reverse of [false, true]) {
        const seen: string[] = [];
        let after: string | undefined;
        for (let page = 0; page < 20; page++) {
          const entries = await storage.scan('page:', {
            limit: 4,
            reverse,
            ...(after === undefined ? {} : { after }),
          });
          assert(entries.length <= 4, `a page holds at most the limit, got ${entries.length}`);
          if (entries.length === 0) break;
          seen.push(...entries.map((entry) => entry.key));
          after = entries[entries.length - 1]?.key;
        }
        assertEqual(
          seen,
          reverse ? [...keys].reverse() : keys,
          `paging ${reverse ? 'backwards' : 'forwards'}`,
        );
      }
    },
  );

  defineCase(
    'scan handles keys with unusual characters, ordered by UTF-16 code units',
    async ({ storage }) => {
      const keys = [
        'u:',
        'u:a:b',
        'u:a/b',
        'u:a%2Fb',
        'u:a b',
        'u:é',
        'u:日本',
        'u:😀',
        'u:\uff5a',
        'u:\uffff',
        'u:\uffff\uffff',
        'u:\uffffz',
        'u:\u0000',
        'u;',
        'u\uffff',
        '%',
        '%25',
        '\uffff\uffff',
      ];
      for (const key of shuffled(keys)) await storage.batch([put(key, `v${key}`)]);
      const under = (prefix: string) => sortedByCodeUnits(keys.filter((key) => key.startsWith(prefix)));
      for (const prefix of ['u:', 'u:a', 'u:\uffff', 'u:日', 'u:😀', '%', '\uffff', 'u:\ud83d', 'u']) {
        assertEqual(await scanKeys(storage, prefix), under(prefix), `scan(${show(prefix)})`);
        assertEqual(
          await scanKeys(storage, prefix, { reverse: true }),
          under(prefix).reverse(),
          `reverse scan(${show(prefix)})`,
        );
      }
      const order = await scanKeys(storage, 'u:');
      assert(
        order.indexOf('u:😀') < order.indexOf('u:\uff5a'),
        'keys order by UTF-16 code units: U+1F600 (a surrogate pair, 0xD83D…) sorts before U+FF5A',
      );
      assertEqual(
        (await storage.scan('u:a%')).map((entry) => entry.value),
        ['vu:a%2Fb'],
        "scan('u:a%') values",
      );
      assertEqual(
        await scanKeys(storage, 'u:\uffff', { after: 'u:\uffff' }),
        ['u:\uffffz', 'u:\uffff\uffff'],
        'after within keys made of U+FFFF',
      );
    },
  );

  defineCase('scan returns an empty page when nothing matches', async ({ storage }) => {
    assertEqual(await storage.scan('anything'), [], 'scan of an empty store');
    assertEqual(await storage.scan(''), [], 'scan of everything in an empty store');
    await putAll(storage, { a: '1', c: '3' });
    assertEqual(await storage.scan('b'), [], 'a prefix between existing keys');
    assertEqual(await storage.scan('b', { reverse: true }), [], 'the same, reversed');
    assertEqual(await storage.scan('ab'), [], 'a prefix longer than an existing key');
  });

  defineCase(
    'batch applies puts and deletes together, and the last operation on a key wins',
    async ({ storage }) => {
      await putAll(storage, { old: 'x' });
      await storage.batch([
        put('a', '1'),
        put('b', '1'),
        remove('a'),
        put('c', '1'),
        put('c', '2'),
        remove('old'),
        remove('never-written'),
      ]);
      assertEqual(
        await readAll(storage),
        [
          { key: 'b', value: '1' },
          { key: 'c', value: '2' },
        ],
        'store after the batch',
      );
      await storage.batch([remove('b'), put('b', '3')]);
      assertEqual(await storage.get('b'), '3', 'a put after a delete of the same key');
      await storage.batch([]);
      assertEqual(await storage.get('b'), '3', 'an empty batch changes nothing');
    },
  );

  defineCase('a batch that fails validation writes nothing', async ({ storage, maxValueBytes }) => {
    await putAll(storage, { keep: 'original' });
    const before = await readAll(storage);
    const longKey = 'k'.repeat(storageLimits.maxKeyBytes + 1);
    const invalidLast: [string, Operation[]][] = [
      ['a key over the limit last', [put('new', '1'), put('keep', 'changed'), put(longKey, 'v')]],
      [
        'a value over the limit last',
        [put('new', '1'), remove('keep'), put('big', 'x'.repeat(maxValueBytes + 1))],
      ],
      ['an empty key last', [put('new', '1'), put('keep', 'changed'), put('', 'v')]],
      [
        'a non-string value in the middle',
        [put('new', '1'), { type: 'put', key: 'bad', value: 7 as unknown as string }, put('keep', 'changed')],
      ],
    ];
    for (const [what, operations] of invalidLast) {
      await expectStorageError(
        () => storage.batch(operations),
        { code: 'invalid-input', operation: 'batch' },
        what,
      );
      assertEqual(await readAll(storage), before, `store after a rejected batch with ${what}`);
    }
    await expectStorageError(
      () => storage.conditionalBatch([expecting('keep', 'original')], [put('new', '1'), put(longKey, 'v')]),
      { code: 'invalid-input', operation: 'conditionalBatch' },
      'a conditional batch whose condition holds but whose last operation is invalid',
    );
    assertEqual(await readAll(storage), before, 'store after the rejected conditional batch');
  });

  defineCase(
    'invalid input is rejected with a StorageError naming the operation and limit',
    async (context) => {
      const { storage, maxValueBytes } = context;
      await putAll(storage, { k: 'v' });
      const before = await readAll(storage);
      const untyped = (value: unknown) => value as string;
      const tooManyOperations = Array.from({ length: storageLimits.maxOperationsPerBatch + 1 }, (_, index) =>
        put(`many:${index}`, 'v'),
      );
      const tooManyConditions = Array.from({ length: storageLimits.maxConditionsPerBatch + 1 }, (_, index) =>
        expecting(`many:${index}`, null),
      );
      // 342 euro signs are 342 UTF-16 code units but 1026 UTF-8 bytes.
      const multiByteKey = '€'.repeat(342);
      const multiByteValue = 'é'.repeat(Math.floor(maxValueBytes / 2) + 1);
      const calls: [string, string, () => Promise<unknown>, string?][] = [
        ['an empty key', 'batch', () => storage.batch([put('', 'v')])],
        ['a numeric key', 'batch', () => storage.batch([{ type: 'put', key: untyped(42), value: 'v' }])],
        ['a numeric value', 'batch', () => storage.batch([put('k', untyped(42))])],
        ['an undefined value', 'batch', () => storage.batch([put('k', untyped(undefined))])],
        ['a null value', 'batch', () => storage.batch([put('k', untyped(null))])],
        ['an object value', 'batch', () => storage.batch([put('k', untyped({ a: 1 }))])],
        [
          'an unknown operation type',
          'batch',
          () => storage.batch([{ type: 'upsert', key: 'k', value: 'v' } as unknown as Operation]),
        ],
        ['1001 operations', 'batch', () => storage.batch(tooManyOperations), '1000'],
        [
          '1001 conditions',
          'conditionalBatch',
          () => storage.conditionalBatch(tooManyConditions, []),
          '1000',
        ],
        [
          'a numeric expected value',
          'conditionalBatch',
          () => storage.conditionalBatch([{ key: 'k', expected: untyped(1) }], [put('k', 'changed')]),
        ],
        [
          'a condition without expected',
          'conditionalBatch',
          () => storage.conditionalBatch([{ key: 'k' } as Condition], [put('k', 'changed')]),
        ],
        [
          'a condition with an empty key',
          'conditionalBatch',
          () => storage.conditionalBatch([expecting('', null)], []),
        ],
        ['a key of 1026 UTF-8 bytes', 'batch', () => storage.batch([put(multiByteKey, 'v')]), '1024'],
        [
          'a value over the limit',
          'batch',
          () => storage.batch([put('k', 'x'.repeat(maxValueBytes + 1))]),
          String(maxValueBytes),
        ],
        [
          'a multi-byte value over the limit',
          'batch',
          () => storage.batch([put('k', multiByteValue)]),
          String(maxValueBytes),
        ],
        ['get of an empty key', 'get', () => storage.get('')],
        ['getMany with an empty key', 'getMany', () => storage.getMany(['k', ''])],
        ['scan with a negative limit', 'scan', () => storage.scan('k', { limit: -1 })],
        ['scan with a non-string after', 'scan', () => storage.scan('k', { after: untyped(5) })],
      ];
      for (const [what, operation, call, mentions] of calls) {
        const error = await expectStorageError(call, { code: 'invalid-input', operation }, what);
        if (mentions)
          assert(
            error.message.includes(mentions),
            `${what}: the message should name the limit ${mentions}: ${error.message}`,
          );
        assertEqual(await readAll(storage), before, `store after ${what}`);
      }
    },
  );

  defineCase('keys and values exactly at the limits are accepted', async ({ storage, maxValueBytes }) => {
    const longestKey = `${'€'.repeat(341)}a`; // 1023 + 1 = 1024 UTF-8 bytes
    const largestValue = 'x'.repeat(maxValueBytes);
    await storage.batch([put(longestKey, 'v'), put('large', largestValue)]);
    assertEqual(await storage.get(longestKey), 'v', 'value under the longest key');
    const stored = await storage.get('large');
    assert(
      stored === largestValue,
      `the largest value round-trips (got ${stored?.length ?? 'null'} characters)`,
    );
    const operations = Array.from({ length: storageLimits.maxOperationsPerBatch }, (_, index) =>
      put(`max:${String(index).padStart(4, '0')}`, String(index)),
    );
    await storage.batch(operations);
    const conditions = operations.map((operation) =>
      expecting(operation.key, (operation as { value: string }).value),
    );
    assertEqual(
      await storage.conditionalBatch(conditions, [put('all-held', 'yes')]),
      true,
      '1000 holding conditions',
    );
    assertEqual(
      (await storage.scan('max:')).length,
      storageLimits.maxOperationsPerBatch,
      'keys written by 1000 operations',
    );
  });

  defineCase('conditionalBatch applies its operations when every condition holds', async ({ storage }) => {
    await putAll(storage, { a: '1', b: '2' });
    const applied = await storage.conditionalBatch(
      [expecting('a', '1'), expecting('b', '2'), expecting('c', null)],
      [put('a', '10'), remove('b'), put('c', '30')],
    );
    assertEqual(applied, true, 'conditionalBatch result');
    assertEqual(
      await readAll(storage),
      [
        { key: 'a', value: '10' },
        { key: 'c', value: '30' },
      ],
      'store after the applied batch',
    );
  });

  defineCase(
    'conditionalBatch returns false and changes nothing when a value differs',
    async ({ storage }) => {
      await putAll(storage, { a: '1' });
      const applied = await storage.conditionalBatch([expecting('a', '2')], [put('a', '3'), put('b', '3')]);
      assertEqual(applied, false, 'conditionalBatch result');
      assertEqual(await readAll(storage), [{ key: 'a', value: '1' }], 'store after the refused batch');
    },
  );

  defineCase(
    'expected null means the key must be absent, and an empty string is not absent',
    async ({ storage }) => {
      assertEqual(
        await storage.conditionalBatch([expecting('k', null)], [put('k', '')]),
        true,
        'absent key, expected null',
      );
      assertEqual(await storage.get('k'), '', 'the empty string was stored');
      assertEqual(
        await storage.conditionalBatch([expecting('k', null)], [put('k', 'x')]),
        false,
        'empty string, expected null',
      );
      assertEqual(
        await storage.conditionalBatch([expecting('k', '')], [put('k', 'y')]),
        true,
        "empty string, expected ''",
      );
      assertEqual(
        await storage.conditionalBatch([expecting('other', '')], [put('other', 'z')]),
        false,
        "absent key, expected ''",
      );
      assertEqual(await readAll(storage), [{ key: 'k', value: 'y' }], 'store');
    },
  );

  defineCase(
    'conditionalBatch can delete keys, and a deleted key then counts as absent',
    async ({ storage }) => {
      await putAll(storage, { k: '1', other: '2' });
      assertEqual(
        await storage.conditionalBatch([expecting('k', '1')], [remove('k')]),
        true,
        'conditional delete',
      );
      assertEqual(await storage.get('k'), null, 'deleted key');
      assertEqual(
        await storage.conditionalBatch([expecting('k', null)], [put('k', 'again')]),
        true,
        'expected null after delete',
      );
      assertEqual(
        await storage.conditionalBatch([expecting('other', '2')], [remove('other'), remove('k')]),
        true,
        'two deletes',
      );
      assertEqual(await readAll(storage), [], 'store');
    },
  );

  defineCase('when one of several conditions fails, nothing is applied', async ({ storage }) => {
    await putAll(storage, { a: '1', b: '2', c: '3' });
    const before = await readAll(storage);
    for (const failing of [0, 1, 2]) {
      const conditions = [expecting('a', '1'), expecting('b', '2'), expecting('c', '3')];
      conditions[failing] = expecting(conditions[failing]?.key as string, failing === 2 ? null : 'wrong');
      const applied = await storage.conditionalBatch(conditions, [put('a', 'x'), remove('b'), put('d', 'x')]);
      assertEqual(applied, false, `result with condition ${failing} failing`);
      assertEqual(await readAll(storage), before, `store with condition ${failing} failing`);
    }
  });

  defineCase('conditions compare exact strings, never decoded values', async ({ storage }) => {
    await putAll(storage, { json: '{"a":1}', number: '1' });
    const mismatches: [string, string][] = [
      ['json', '{ "a": 1 }'],
      ['json', '{"a":1} '],
      ['number', '1.0'],
      ['number', ' 1'],
      ['number', '01'],
    ];
    for (const [key, expected] of mismatches) {
      assertEqual(
        await storage.conditionalBatch([expecting(key, expected)], [put(key, 'x')]),
        false,
        `${key} vs ${show(expected)}`,
      );
    }
    assertEqual(
      await storage.conditionalBatch([expecting('json', '{"a":1}')], [put('json', 'x')]),
      true,
      'exact match',
    );
  });

  defineCase(
    'a conditional batch with no operations reports whether its conditions hold',
    async ({ storage }) => {
      await putAll(storage, { a: '1' });
      assertEqual(await storage.conditionalBatch([], []), true, 'no conditions and no operations');
      assertEqual(await storage.conditionalBatch([expecting('a', '1')], []), true, 'a holding condition');
      assertEqual(await storage.conditionalBatch([expecting('a', '2')], []), false, 'a failing condition');
      assertEqual(await storage.conditionalBatch([], [put('b', '2')]), true, 'no conditions: always applies');
      assertEqual(await storage.get('b'), '2', 'written without conditions');
    },
  );

  function commitGroupsOf(storage: Storage): NonNullable<Storage['commitGroups']> {
    const { commitGroups } = storage;
    if (!commitGroups) fail('capabilities.groupCommit is true, but the store has no commitGroups method');
    return (groups) => commitGroups.call(storage, groups);
  }

  defineCase(
    'commitGroups applies each group whose own conditions hold, independently of the others',
    async ({ storage }) => {
      const commitGroups = commitGroupsOf(storage);
      await putAll(storage, { a: '1', b: '1', c: '1' });
      const results = await commitGroups([
        { conditions: [expecting('a', '1')], operations: [put('a', '2')] },
        { conditions: [expecting('b', 'wrong')], operations: [put('b', '2'), put('from-failed-group', 'x')] },
        {
          conditions: [expecting('c', '1'), expecting('absent', null)],
          operations: [put('c', '2'), remove('b')],
        },
        { conditions: [], operations: [put('z', '1')] },
      ]);
      assertEqual(results, [true, false, true, true], 'results per group');
      assertEqual(
        await readAll(storage),
        [
          { key: 'a', value: '2' },
          { key: 'c', value: '2' },
          { key: 'z', value: '1' },
        ],
        'store: groups 0, 2 and 3 applied, group 1 wrote nothing',
      );
    },
    'groupCommit',
  );

  defineCase(
    'commitGroups of groups that share no key applies each on its own conditions (puts, deletes, checks only)',
    async ({ storage }) => {
      const commitGroups = commitGroupsOf(storage);
      await putAll(storage, { a: '1', b: '1', d: 'x' });
      const results = await commitGroups([
        {
          conditions: [expecting('a', '1'), expecting('a-new', null)],
          operations: [put('a', '2'), put('a-new', 'n')],
        },
        { conditions: [expecting('b', 'wrong')], operations: [put('b', '2'), put('b-new', 'x')] },
        { conditions: [], operations: [remove('d'), put('e', '1'), remove('never-there')] },
        { conditions: [expecting('f', null)], operations: [] },
        { conditions: [expecting('g', 'missing')], operations: [remove('g')] },
      ]);
      assertEqual(results, [true, false, true, true, false], 'results per group');
      assertEqual(
        await readAll(storage),
        [
          { key: 'a', value: '2' },
          { key: 'a-new', value: 'n' },
          { key: 'b', value: '1' },
          { key: 'e', value: '1' },
        ],
        'store: groups 0 and 2 applied, group 1 wrote nothing',
      );
    },
    'groupCommit',
  );

  defineCase(
    'a group of commitGroups sees the writes of the groups before it in the same commit',
    async ({ storage }) => {
      const commitGroups = commitGroupsOf(storage);
      const results = await commitGroups([
        { conditions: [expecting('n', null)], operations: [put('n', '1')] },
        { conditions: [expecting('n', '1')], operations: [put('n', '2')] },
        { conditions: [expecting('n', null)], operations: [put('n', 'stale')] },
        { conditions: [expecting('n', '2')], operations: [remove('n')] },
        { conditions: [expecting('n', null)], operations: [put('after-delete', 'yes')] },
        { conditions: [expecting('n', '1')], operations: [put('stale-read', 'x')] },
      ]);
      assertEqual(results, [true, true, false, true, true, false], 'results per group');
      assertEqual(await readAll(storage), [{ key: 'after-delete', value: 'yes' }], 'store');
    },
    'groupCommit',
  );

  defineCase(
    'commitGroups applies the limits to each group, and an invalid group rejects the whole call',
    async ({ storage }) => {
      const commitGroups = commitGroupsOf(storage);
      const group = (name: string, size: number) => ({
        conditions: Array.from({ length: size }, (_, index) => expecting(`${name}:${index}`, null)),
        operations: Array.from({ length: size }, (_, index) => put(`${name}:${index}`, 'v')),
      });
      // 600 + 600 = 1200 operations and conditions in total, but each group is within the limit of 1000.
      assertEqual(await commitGroups([group('g0', 600), group('g1', 600)]), [true, true], 'two large groups');
      assertEqual((await storage.scan('g')).length, 1200, 'keys written by two large groups');
      const before = await readAll(storage);
      const invalid: [string, { conditions: Condition[]; operations: Operation[] }][] = [
        ['1001 operations', group('g2', storageLimits.maxOperationsPerBatch + 1)],
        ['an empty key', { conditions: [], operations: [put('', 'v')] }],
        ['a non-string value', { conditions: [], operations: [put('k', 1 as unknown as string)] }],
      ];
      for (const [what, bad] of invalid) {
        const error = await expectStorageError(
          () => commitGroups([{ conditions: [], operations: [put('valid-group', 'v')] }, bad]),
          { code: 'invalid-input', operation: 'commitGroups' },
          `a second group with ${what}`,
        );
        assert(/group 1/.test(error.message), `the message names the group: ${error.message}`);
        assertEqual(await readAll(storage), before, `store after a rejected commit with ${what}`);
      }
      assertEqual(await commitGroups([]), [], 'no groups');
    },
    'groupCommit',
  );

  defineCase(
    'concurrent read-modify-write loops over several instances never lose or double an increment',
    async (context) => {
      const instances = [context.storage, await context.openPeer(), await context.openPeer()];
      const loopsPerInstance = 2;
      const incrementsPerLoop = 50;
      const total = instances.length * loopsPerInstance * incrementsPerLoop;
      const key = 'counter';
      const loop = async (storage: Storage, loopIndex: number) => {
        const written: number[] = [];
        let conflicts = 0;
        while (written.length < incrementsPerLoop) {
          if (conflicts > total * 20) fail(`loop ${loopIndex} made no progress after ${conflicts} conflicts`);
          const current = await storage.get(key);
          // Let the other loops read the same value before this one writes, in a varying order.
          await yieldTurns((loopIndex + written.length + conflicts) % 4);
          const next = (current === null ? 0 : Number(current)) + 1;
          const applied = await storage.conditionalBatch([expecting(key, current)], [put(key, String(next))]);
          if (applied) written.push(next);
          else conflicts++;
        }
        return { written, conflicts };
      };
      const outcomes = await Promise.all(
        instances.flatMap((storage, instanceIndex) =>
          Array.from({ length: loopsPerInstance }, (_, index) =>
            loop(storage, instanceIndex * loopsPerInstance + index),
          ),
        ),
      );
      const successes = outcomes.flatMap((outcome) => outcome.written);
      const conflicts = outcomes.reduce((sum, outcome) => sum + outcome.conflicts, 0);
      const final = await context.storage.get(key);
      assertEqual(
        final,
        String(successes.length),
        'final counter equals the number of successful increments',
      );
      assertEqual(final, String(total), 'final counter equals the intended total');
      const distinct = new Set(successes);
      assertEqual(
        distinct.size,
        successes.length,
        'no two increments succeeded with the same value (double success)',
      );
      for (const peer of instances) {
        assertEqual(await peer.get(key), String(total), 'every instance reads the total');
      }
      assert(
        conflicts > 0,
        'the loops must have raced (some conditional batches refused); otherwise this proves nothing',
      );
    },
  );

  defineCase(
    'watch reports a commit made through a peer instance, with the changed keys',
    async (context) => {
      const peer = await context.openPeer();
      const calls: string[][] = [];
      const unsubscribe = watchOf(context.storage)('w:', (keys) => calls.push(keys));
      await peer.batch([put('w:a', '1'), put('other:x', '1'), put('w:b', '1')]);
      await context.waitForReport(() => calls.length >= 1, 'the change feed to report the peer’s batch');
      assertEqual(sortedByCodeUnits(calls[0] ?? []), ['w:a', 'w:b'], 'keys reported for the batch');
      await peer.conditionalBatch([expecting('w:a', '1')], [remove('w:a')]);
      await context.waitForReport(
        () => calls.length >= 2,
        'the change feed to report the peer’s conditional delete',
      );
      assertEqual(calls[1], ['w:a'], 'keys reported for the conditional delete');
      const seen = await context.storage.get('w:a');
      assertEqual(seen, null, 'a read after the report sees the commit');
      unsubscribe();
    },
    'changeFeed',
  );

  defineCase(
    'watch reports only keys under its prefix, nothing for a refused batch, and nothing after unsubscribe',
    async (context) => {
      const peer = await context.openPeer();
      const watch = watchOf(context.storage);
      const kept: string[][] = [];
      const removed: string[][] = [];
      const own: string[][] = [];
      watch('w:', (keys) => kept.push(keys));
      const unsubscribe = watch('w:', (keys) => removed.push(keys));
      unsubscribe();
      await peer.batch([put('other:x', '1'), put('w', 'not under w:')]);
      await peer.conditionalBatch([expecting('w:refused', 'wrong')], [put('w:refused', '1')]);
      await peer.batch([put('w:ok', '1')]);
      await context.waitForReport(() => kept.length >= 1, 'the change feed to report w:ok');
      assertEqual(kept, [['w:ok']], 'the first report is the batch under the prefix, nothing earlier');
      assertEqual(removed, [], 'an unsubscribed listener is not called');
      watch('mine:', (keys) => own.push(keys));
      await context.storage.batch([put('mine:1', '1')]);
      await context.waitForReport(
        () => own.length >= 1,
        'the change feed to report this instance’s own commit',
      );
      assertEqual(own, [['mine:1']], 'own commit reported');
    },
    'changeFeed',
  );

  function watchOf(storage: Storage): NonNullable<Storage['watch']> {
    const { watch } = storage;
    if (!watch) fail('capabilities.changeFeed is true, but the store has no watch method');
    return (prefix, listener) => watch.call(storage, prefix, listener);
  }

  defineCase('after close, every call rejects with a StorageError of code closed', async ({ storage }) => {
    await putAll(storage, { a: '1' });
    await storage.close();
    await storage.close(); // idempotent
    await expectStorageError(() => storage.get('a'), { code: 'closed', operation: 'get' }, 'get after close');
    await expectStorageError(
      () => storage.scan(''),
      { code: 'closed', operation: 'scan' },
      'scan after close',
    );
    await expectStorageError(
      () => storage.batch([put('b', '1')]),
      { code: 'closed', operation: 'batch' },
      'batch after close',
    );
    await expectStorageError(
      () => storage.conditionalBatch([], [put('b', '1')]),
      { code: 'closed', operation: 'conditionalBatch' },
      'conditionalBatch after close',
    );
  });

  defineCase(
    'data written before close is read by an instance opened afterwards',
    async (context) => {
      await putAll(context.storage, { kept: 'yes' });
      await context.storage.close();
      const reopened = await context.openPeer();
      assertEqual(await reopened.get('kept'), 'yes', 'value read after reopening');
    },
    'durable',
  );

  defineCase('capabilities are booleans, and declared optional methods are present', async ({ storage }) => {
    const { capabilities } = storage;
    for (const name of ['conditionalBatch', 'durable', 'changeFeed', 'groupCommit'] as const) {
      assertEqual(typeof capabilities[name], 'boolean', `capabilities.${name}`);
    }
    if (capabilities.groupCommit)
      assertEqual(typeof storage.commitGroups, 'function', 'commitGroups with groupCommit');
    if (capabilities.changeFeed) assertEqual(typeof storage.watch, 'function', 'watch with changeFeed');
  });

  return cases;
}

// ---------------------------------------------------------------------------------------------------------
// Running

/** The suite's cases bound to `factory`. Run each with `run()`; each opens and closes its own store. */
export function storageConformanceCases(factory: StorageConformanceFactory): StorageConformanceCase[] {
  return defineCases().map(({ name, requires, body }) => ({
    name,
    ...(requires ? { requires } : {}),
    async run(): Promise<ConformanceOutcome> {
      const store = await factory();
      const opened: Storage[] = [store.storage];
      try {
        if (requires && !store.storage.capabilities[requires]) return 'skipped';
        await body({
          storage: store.storage,
          openPeer: async () => {
            const peer = await store.openPeer();
            opened.push(peer);
            return peer;
          },
          maxValueBytes: store.maxValueBytes ?? storageLimits.defaultMaxValueBytes,
          waitForReport: (condition, what) => waitFor(condition, what, store.changeFeedTimeoutMs ?? 5000),
        });
        return 'passed';
      } finally {
        for (const instance of opened) await instance.close().catch(() => undefined);
        await store.dispose?.();
      }
    },
  }));
}

/** Runs every case (or those `filter` keeps) one after another and reports each; never rejects. */
export async function runStorageConformance(
  factory: StorageConformanceFactory,
  options: { filter?: (name: string) => boolean } = {},
): Promise<ConformanceResult[]> {
  const results: ConformanceResult[] = [];
  for (const conformanceCase of storageConformanceCases(factory)) {
    if (options.filter && !options.filter(conformanceCase.name)) continue;
    const started = Date.now();
    try {
      const outcome = await conformanceCase.run();
      results.push({ name: conformanceCase.name, outcome, durationMs: Date.now() - started });
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      results.push({
        name: conformanceCase.name,
        outcome: 'failed',
        error: message,
        durationMs: Date.now() - started,
      });
    }
  }
  return results;
}
