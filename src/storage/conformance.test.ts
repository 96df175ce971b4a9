/**
 * The conformance suite must be able to fail: each deliberately broken adapter below gets one part of the
 * contract wrong, and the case that checks that part must reject it (while the correct `MemoryStorage` passes
 * every case, see memory.test.ts).
 */

import { describe, expect, it } from 'vitest';
import {
  ConformanceFailure,
  runStorageConformance,
  storageConformanceCases,
  type ConformanceStore,
} from './conformance-cases.test-support';
import { StorageError } from './errors';
import { MemoryStorage } from './memory';
import type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
} from './types';

/** Forwards everything to a MemoryStorage; mutants override the part they break. */
class DelegatingStorage implements Storage {
  readonly capabilities: StorageCapabilities;
  constructor(readonly inner: MemoryStorage = new MemoryStorage()) {
    this.capabilities = { ...inner.capabilities };
  }
  get(key: string): Promise<string | null> {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]): Promise<(string | null)[]> {
    return this.inner.getMany(keys);
  }
  scan(prefix: string, options?: ScanOptions): Promise<Entry[]> {
    return this.inner.scan(prefix, options);
  }
  batch(operations: readonly Operation[]): Promise<void> {
    return this.inner.batch(operations);
  }
  conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]): Promise<boolean> {
    return this.inner.conditionalBatch(conditions, operations);
  }
  commitGroups(groups: readonly CommitGroup[]): Promise<boolean[]> {
    return this.inner.commitGroups(groups);
  }
  watch(prefix: string, listener: (keys: string[]) => void): () => void {
    return this.inner.watch(prefix, listener);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function holds(storage: Storage, conditions: readonly Condition[]): Promise<boolean> {
  const values = await storage.getMany(conditions.map((condition) => condition.key));
  return conditions.every((condition, index) => values[index] === condition.expected);
}

/** Checks the conditions, then writes in a separate step: two writers can both succeed. */
class NonAtomicConditionalBatch extends DelegatingStorage {
  override async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    if (!(await holds(this.inner, conditions))) return false;
    await Promise.resolve();
    await this.inner.batch(operations);
    return true;
  }
}

/** Treats the groups as one conditional batch. */
class AllOrNothingGroups extends DelegatingStorage {
  override async commitGroups(groups: readonly CommitGroup[]) {
    const applied = await this.inner.conditionalBatch(
      groups.flatMap((group) => group.conditions),
      groups.flatMap((group) => group.operations),
    );
    return groups.map(() => applied);
  }
}

/** Applies every group whatever its conditions. */
class IgnoresGroupConditions extends DelegatingStorage {
  override async commitGroups(groups: readonly CommitGroup[]) {
    await this.inner.batch(groups.flatMap((group) => group.operations));
    return groups.map(() => true);
  }
}

/** Checks every group against the state before the commit, not after the earlier groups. */
class StaleGroupConditions extends DelegatingStorage {
  override async commitGroups(groups: readonly CommitGroup[]) {
    const results = await Promise.all(groups.map((group) => holds(this.inner, group.conditions)));
    await this.inner.batch(groups.filter((_, index) => results[index]).flatMap((group) => group.operations));
    return results;
  }
}

/** Writes operation by operation, so an invalid operation is found after earlier ones were written. */
class PartialBatch extends DelegatingStorage {
  override async batch(operations: readonly Operation[]) {
    for (const operation of operations) await this.inner.batch([operation]);
  }
}

/** Validates the whole commit, but applies group by group with an await between: not one transaction. */
class SplitsGroupsIntoSeparateCommits extends DelegatingStorage {
  override async commitGroups(groups: readonly CommitGroup[]) {
    const results: boolean[] = [];
    for (const group of groups)
      results.push(await this.inner.conditionalBatch(group.conditions, group.operations));
    return results;
  }
}

/** Scans with the common but wrong upper bound `prefix + '\uffff'`. */
class NaivePrefixBound extends DelegatingStorage {
  override async scan(prefix: string, options: ScanOptions = {}) {
    const upper = `${prefix}\uffff`;
    const all = await this.inner.scan('', { ...options, limit: undefined });
    return all.filter((entry) => entry.key >= prefix && entry.key <= upper).slice(0, options.limit);
  }
}

/** Orders keys by code point (as `localeCompare`-free `Array.from` comparison would), not by UTF-16 unit. */
class CodePointOrder extends DelegatingStorage {
  override async scan(prefix: string, options: ScanOptions = {}) {
    const entries = await this.inner.scan(prefix, { ...options, limit: undefined });
    const byCodePoints = (left: Entry, right: Entry) => {
      const a = Array.from(left.key, (character) => character.codePointAt(0) as number);
      const b = Array.from(right.key, (character) => character.codePointAt(0) as number);
      for (let index = 0; index < Math.min(a.length, b.length); index++) {
        if (a[index] !== b[index]) return (a[index] as number) - (b[index] as number);
      }
      return a.length - b.length;
    };
    const sorted = entries.sort(byCodePoints);
    return (options.reverse ? sorted.reverse() : sorted).slice(0, options.limit);
  }
}

/** Treats `after` as inclusive. */
class InclusiveAfter extends DelegatingStorage {
  override async scan(prefix: string, options: ScanOptions = {}) {
    const { after, ...rest } = options;
    const entries = await this.inner.scan(prefix, { ...rest, limit: undefined });
    const kept =
      after === undefined
        ? entries
        : entries.filter((entry) => (rest.reverse ? entry.key <= after : entry.key >= after));
    return kept.slice(0, options.limit);
  }
}

/** Compares decoded JSON instead of exact strings. */
class DecodedConditions extends DelegatingStorage {
  override async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    const decode = (text: string | null) => {
      try {
        return JSON.stringify(text === null ? null : JSON.parse(text));
      } catch {
        return text;
      }
    };
    const values = await this.inner.getMany(conditions.map((condition) => condition.key));
    const loose = conditions.map((condition, index) => ({
      key: condition.key,
      expected:
        decode(values[index] ?? null) === decode(condition.expected)
          ? (values[index] ?? null)
          : condition.expected,
    }));
    return this.inner.conditionalBatch(loose, operations);
  }
}

/** Confuses the empty string with absence. */
class EmptyIsAbsent extends DelegatingStorage {
  override async get(key: string) {
    return (await this.inner.get(key)) || null;
  }
}

/** Keeps working after close. */
class IgnoresClose extends DelegatingStorage {
  override async close() {}
}

/** A view on a shared store whose change feed reports only the commits made through the same view. */
class LocalOnlyFeed extends DelegatingStorage {
  private readonly listeners = new Set<{ prefix: string; listener: (keys: string[]) => void }>();
  override watch(prefix: string, listener: (keys: string[]) => void) {
    const entry = { prefix, listener };
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }
  override async batch(operations: readonly Operation[]) {
    await this.inner.batch(operations);
    this.report(operations);
  }
  override async conditionalBatch(conditions: readonly Condition[], operations: readonly Operation[]) {
    const applied = await this.inner.conditionalBatch(conditions, operations);
    if (applied) this.report(operations);
    return applied;
  }
  override async close() {}
  private report(operations: readonly Operation[]) {
    for (const { prefix, listener } of this.listeners) {
      const keys = operations.map((operation) => operation.key).filter((key) => key.startsWith(prefix));
      if (keys.length > 0) listener(keys);
    }
  }
}

/** Declares a change feed it does not have. */
class ClaimsChangeFeedWithoutWatch implements Storage {
  readonly capabilities = { conditionalBatch: true, durable: false, changeFeed: true, groupCommit: false };
  private readonly inner = new MemoryStorage();
  get = (key: string) => this.inner.get(key);
  getMany = (keys: readonly string[]) => this.inner.getMany(keys);
  scan = (prefix: string, options?: ScanOptions) => this.inner.scan(prefix, options);
  batch = (operations: readonly Operation[]) => this.inner.batch(operations);
  conditionalBatch = (conditions: readonly Condition[], operations: readonly Operation[]) =>
    this.inner.conditionalBatch(conditions, operations);
  close = () => this.inner.close();
}

function sameInstance(storage: Storage): ConformanceStore {
  return { storage, openPeer: async () => storage };
}

const mutants: [string, () => ConformanceStore, string][] = [
  [
    'a conditional batch that is not atomic',
    () => sameInstance(new NonAtomicConditionalBatch()),
    'concurrent read-modify-write loops over several instances never lose or double an increment',
  ],
  [
    'all-or-nothing commit groups',
    () => sameInstance(new AllOrNothingGroups()),
    'commitGroups applies each group whose own conditions hold, independently of the others',
  ],
  [
    'commit groups that ignore their conditions',
    () => sameInstance(new IgnoresGroupConditions()),
    'commitGroups applies each group whose own conditions hold, independently of the others',
  ],
  [
    'commit groups checked against the state before the commit',
    () => sameInstance(new StaleGroupConditions()),
    'a group of commitGroups sees the writes of the groups before it in the same commit',
  ],
  [
    'a batch that writes before finding an invalid operation',
    () => sameInstance(new PartialBatch()),
    'a batch that fails validation writes nothing',
  ],
  [
    'commit groups validated and applied one by one',
    () => sameInstance(new SplitsGroupsIntoSeparateCommits()),
    'commitGroups applies the limits to each group, and an invalid group rejects the whole call',
  ],
  [
    "the prefix + '\\uffff' upper bound",
    () => sameInstance(new NaivePrefixBound()),
    'scan handles keys with unusual characters, ordered by UTF-16 code units',
  ],
  [
    'code point order instead of UTF-16 order',
    () => sameInstance(new CodePointOrder()),
    'scan handles keys with unusual characters, ordered by UTF-16 code units',
  ],
  [
    'an inclusive after',
    () => sameInstance(new InclusiveAfter()),
    'scan honours after (exclusive), limit and reverse',
  ],
  [
    'conditions compared after decoding JSON',
    () => sameInstance(new DecodedConditions()),
    'conditions compare exact strings, never decoded values',
  ],
  [
    'the empty string read back as absent',
    () => sameInstance(new EmptyIsAbsent()),
    'values round-trip exactly, including the empty string and non-ASCII text',
  ],
  [
    'calls that still work after close',
    () => sameInstance(new IgnoresClose()),
    'after close, every call rejects with a StorageError of code closed',
  ],
  [
    'a change feed that misses other instances’ commits',
    () => {
      const shared = new MemoryStorage();
      return {
        storage: new LocalOnlyFeed(shared),
        openPeer: async () => new LocalOnlyFeed(shared),
        changeFeedTimeoutMs: 100,
      };
    },
    'watch reports a commit made through a peer instance, with the changed keys',
  ],
  [
    'a declared change feed without watch',
    () => sameInstance(new ClaimsChangeFeedWithoutWatch()),
    'capabilities are booleans, and declared optional methods are present',
  ],
];

describe('the storage conformance suite', () => {
  for (const [mutation, open, caseName] of mutants) {
    it(`rejects an adapter with ${mutation}`, async () => {
      const conformanceCase = storageConformanceCases(async () => open()).find(
        (item) => item.name === caseName,
      );
      expect(conformanceCase, `a case named "${caseName}"`).toBeDefined();
      await expect(conformanceCase?.run()).rejects.toBeInstanceOf(ConformanceFailure);
    });
  }

  it('reports each case as passed, skipped or failed without throwing', async () => {
    const results = await runStorageConformance(async () => sameInstance(new EmptyIsAbsent()), {
      filter: (name) => name.startsWith('values round-trip') || name.startsWith('data written before close'),
    });
    expect(results.map(({ name, outcome }) => ({ name, outcome }))).toEqual([
      { name: 'values round-trip exactly, including the empty string and non-ASCII text', outcome: 'failed' },
      { name: 'data written before close is read by an instance opened afterwards', outcome: 'skipped' },
    ]);
    expect(results[0]?.error).toMatch(/ConformanceFailure: value of empty: expected "", got null/);
  });

  it('counts an unexpected error thrown by the adapter as a failure', async () => {
    class Throws extends DelegatingStorage {
      override async get(): Promise<string | null> {
        throw new StorageError('get', 'unknown', 'boom');
      }
    }
    const [result] = await runStorageConformance(async () => sameInstance(new Throws()), {
      filter: (name) => name.startsWith('get returns null'),
    });
    expect(result?.outcome).toBe('failed');
    expect(result?.error).toMatch(/boom/);
  });
});
