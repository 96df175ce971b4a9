import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeStorageConformance } from './conformance.test-support';
import { isStorageError, type StorageError } from './errors';
import { MemoryStorage } from './memory';
import { PostgresSchemaVersionError, PostgresStorage } from './postgres';
import { PostgresChangeFeed } from './postgres-feed';
import {
  appendCommit,
  commitRequest,
  decodeNotifiedKey,
  encodeKey,
  maxKeyLocksPerCommit,
  migrationScript,
  notifiedKey,
  schemaNames,
  schemaVersion,
} from './postgres-sql';
import {
  createTestDatabase,
  freshSchema,
  postgresConformanceFactory,
  runSql,
  type TestDatabase,
} from './postgres.test-support';
import type { Operation, Storage } from './types';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describeStorageConformance(
  'PostgresStorage on a PostgreSQL server',
  postgresConformanceFactory(() => database.url),
);

const put = (key: string, value: string): Operation => ({ type: 'put', key, value });

/** Opens `count` adapters on one fresh schema; closes them (and drops the schema) after `body`. */
async function withStores(
  count: number,
  body: (stores: PostgresStorage[], schema: string) => Promise<void>,
  options: { changeFeedHeartbeatMs?: number } = {},
) {
  const schema = freshSchema();
  const stores: PostgresStorage[] = [];
  try {
    for (let index = 0; index < count; index++) {
      stores.push(
        await PostgresStorage.open({ connectionString: database.url, schema, maxConnections: 4, ...options }),
      );
    }
    await body(stores, schema);
  } finally {
    for (const store of stores) await store.close();
    await runSql(database.url, `drop schema if exists ${schema} cascade`);
  }
}

async function rejection(call: () => Promise<unknown>): Promise<StorageError> {
  try {
    await call();
  } catch (error) {
    if (isStorageError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to reject');
}

async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A watcher and a writer on a fresh schema, the watcher's heartbeat far away and every read of its change
 * log counted (`feedReads`), for tests of what the feed takes from notifications alone.
 */
async function withFeed(
  body: (feed: {
    watcher: PostgresStorage;
    writer: PostgresStorage;
    schema: string;
    feedReads: { mockClear(): void };
  }) => Promise<void>,
): Promise<void> {
  const schema = freshSchema();
  const watcher = await PostgresStorage.open({
    connectionString: database.url,
    schema,
    changeFeedHeartbeatMs: 600_000,
  });
  const writer = await PostgresStorage.open({ connectionString: database.url, schema });
  const feedReads = vi.spyOn(
    PostgresChangeFeed.prototype as unknown as { readPages(): Promise<void> },
    'readPages',
  );
  try {
    await body({ watcher, writer, schema, feedReads });
  } finally {
    feedReads.mockRestore();
    await writer.close();
    await watcher.close();
    await runSql(database.url, `drop schema if exists ${schema} cascade`);
  }
}

/**
 * A commit of `key` by hand on a connection of its own that draws its change number and stays open: as a
 * commit of two in flight that draws first and commits last. `notify(payload)` then `commit()` finish it.
 */
async function openEarlyCommit(schema: string, key: string) {
  const early = new pg.Client({ connectionString: database.url });
  await early.connect();
  const hex = encodeKey(key);
  await early.query('begin');
  await early.query(`insert into ${schema}.entries (key, value) values (decode($1, 'hex'), 'first')`, [hex]);
  const { rows } = await early.query<{ seq: string }>(
    `insert into ${schema}.changes (keys) values ($1) returning seq`,
    [hex],
  );
  return {
    hex,
    seq: rows[0]!.seq,
    notify: async (payload: string) => {
      await early.query(`select pg_notify($1, $2)`, [schemaNames(schema).channel, payload]);
    },
    commit: async () => {
      await early.query('commit');
    },
    end: () => early.end(),
  };
}

/** A pool of its own whose `query` calls (the adapter's statements outside the listening session) are counted. */
function countingPool(max: number): { pool: pg.Pool; statements: () => number } {
  const pool = new pg.Pool({ connectionString: database.url, max });
  let statements = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  Object.assign(pool, {
    query: (...args: unknown[]) => {
      statements++;
      return query(...args);
    },
  });
  return { pool, statements: () => statements };
}

/** A transaction on a connection of its own holding the advisory lock of `key` in `schema`; commit or end it. */
async function holdKeyLock(schema: string, key: string): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  await holder.query('begin');
  await holder.query(
    `select pg_advisory_xact_lock(hashtextextended($1, ${schemaNames(schema).lockNamespace}))`,
    [encodeKey(key)],
  );
  return holder;
}

/** Resolves once a transaction waits for an advisory lock. */
async function lockWaiter(what: string): Promise<void> {
  await waitUntil(
    async () =>
      (await runSql(database.url, `select 1 from pg_locks where locktype = 'advisory' and not granted`))
        .rowCount === 1,
    what,
  );
}

/** Keys whose JavaScript order (UTF-16 code units) differs from code point and UTF-8 byte order. */
const unusualKeys = [
  'a',
  'z',
  '\u{1F600}', // a surrogate pair: 0xD83D 0xDE00
  '\u{10000}',
  '\u{10FFFF}',
  '\uE000', // private use
  '\uF8FF',
  '\uFFFD',
  '\uFFFF',
  '\uD7FF',
  '\uD800', // a lone high surrogate
  '\uDC00', // a lone low surrogate
  'k:\u{1F600}',
  'k:\uE000',
  'k:\uFFFF',
  'k:\uFFFF\uFFFF',
  'k:\u{1F600}\u0000',
  'k:\u0000',
  'k:é',
  'k:\u{1D11E}x',
  'k:\uFF5A',
];

describe('PostgresStorage', () => {
  it('scans keys with astral, private-use and U+FFFF characters in exactly the order MemoryStorage does', async () => {
    // Meaningful only because these orders differ: U+1F600 sorts before U+E000 in UTF-16 but after it by code point.
    expect('\u{1F600}' < '\uE000').toBe(true);
    await withStores(1, async ([storage]) => {
      const memory = new MemoryStorage();
      const operations = unusualKeys.map((key, index) => put(key, `v${index}`));
      await storage!.batch(operations);
      await memory.batch(operations);
      const scans: [string, Parameters<Storage['scan']>[1]][] = [
        ['', {}],
        ['', { reverse: true }],
        ['k:', {}],
        ['k:', { reverse: true }],
        ['k:\uFFFF', {}],
        ['\uD83D', {}],
        ['', { after: '\uD7FF', limit: 5 }],
        ['', { after: '\uE000', reverse: true, limit: 4 }],
        ['k:', { after: 'k:\u{1F600}' }],
      ];
      for (const [prefix, options] of scans) {
        expect(
          await storage!.scan(prefix, options),
          `scan(${JSON.stringify(prefix)}, ${JSON.stringify(options)})`,
        ).toEqual(await memory.scan(prefix, options));
      }
      expect((await storage!.scan('')).map((entry) => entry.key)).toEqual(
        [...unusualKeys].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0)),
      );
    });
  });

  it('stores values PostgreSQL text cannot hold (NUL, lone surrogates, the escape marker) and compares them exactly', async () => {
    await withStores(1, async ([storage]) => {
      const values = [
        'nul\u0000inside',
        'lone \uD800 high',
        'lone \uDC00 low',
        '\u0001starts with the marker',
        '\u0001',
        '',
      ];
      await storage!.batch(values.map((value, index) => put(`v${index}`, value)));
      expect(await storage!.getMany(values.map((_, index) => `v${index}`))).toEqual(values);
      expect(
        await storage!.conditionalBatch([{ key: 'v1', expected: 'lone \uFFFD high' }], [put('v1', 'x')]),
      ).toBe(false);
      expect(await storage!.conditionalBatch([{ key: 'v0', expected: 'nul' }], [put('v0', 'x')])).toBe(false);
      expect(
        await storage!.conditionalBatch(
          [{ key: 'v3', expected: '\u0001starts with the marker' }],
          [put('v3', 'y')],
        ),
      ).toBe(true);
      expect(await storage!.get('v3')).toBe('y');
    });
  });

  it('lets only one of two connections inserting the same absent key succeed, every time', async () => {
    await withStores(3, async (stores) => {
      for (let round = 0; round < 40; round++) {
        const key = `race:${round}`;
        const results = await Promise.all(
          stores.map((store, index) =>
            store.conditionalBatch(
              [{ key, expected: null }],
              [put(key, `store ${index}`), put(`${key}:side`, `store ${index}`)],
            ),
          ),
        );
        expect(results.filter(Boolean), `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1);
        const winner = `store ${results.indexOf(true)}`;
        expect(await stores[0]!.getMany([key, `${key}:side`])).toEqual([winner, winner]);
      }
    });
  });

  it('applies commit groups from several connections without deadlocks when their keys overlap in any order', async () => {
    await withStores(3, async (stores) => {
      const keys = Array.from({ length: 8 }, (_, index) => `lock:${index}`);
      await Promise.all(
        stores.flatMap((store, storeIndex) =>
          Array.from({ length: 10 }, (_, round) =>
            store.commitGroups([
              {
                conditions: [],
                operations: [...keys].reverse().map((key) => put(key, `${storeIndex}:${round}`)),
              },
              { conditions: [], operations: keys.map((key) => put(key, `${storeIndex}:${round}`)) },
            ]),
          ),
        ),
      );
      const values = new Set((await stores[0]!.scan('lock:')).map((entry) => entry.value));
      expect(values.size).toBe(1); // every commit wrote all keys atomically: they all hold the last one's value
    });
  });

  it('serialises commits over 256 keys (one store-wide lock) with small commits (key locks) on the same key', async () => {
    await withStores(2, async ([big, small]) => {
      const increment = async (store: PostgresStorage, extraKeys: number, times: number) => {
        let done = 0;
        while (done < times) {
          const current = await store.get('counter');
          const next = String(Number(current ?? '0') + 1);
          const extra = Array.from({ length: extraKeys }, (_, index) => put(`extra:${index}`, next));
          if (
            await store.conditionalBatch(
              [{ key: 'counter', expected: current }],
              [put('counter', next), ...extra],
            )
          )
            done++;
        }
      };
      await Promise.all([
        increment(big!, 300, 15),
        increment(big!, 300, 15),
        increment(small!, 0, 30),
        increment(small!, 0, 30),
      ]);
      expect(await small!.get('counter')).toBe('90');
    });
  });

  it('reports a commit whose keys are far over NOTIFY’s 8,000-byte payload limit, every key', async () => {
    await withStores(2, async ([watcher, writer]) => {
      const reported = new Set<string>();
      watcher!.watch('long:', (keys) => keys.forEach((key) => reported.add(key)));
      const keys = Array.from(
        { length: 120 },
        (_, index) => `long:${String(index).padStart(3, '0')}:${'é'.repeat(300)}`,
      );
      await writer!.batch(keys.map((key) => put(key, 'v')));
      await waitUntil(() => reported.size === keys.length, `all ${keys.length} keys (got ${reported.size})`);
      expect([...reported].sort()).toEqual([...keys].sort());
    });
  });

  it('delivers commits that notify out of order straight from their notifications, reading no log', async () => {
    await withFeed(async ({ watcher, writer, schema, feedReads }) => {
      const reported: string[] = [];
      watcher.watch('o:', (keys) => reported.push(...keys));
      await watcher.syncWatchers();
      feedReads.mockClear();
      // A commit that draws its number first and commits last, as two commits in flight often do.
      const early = await openEarlyCommit(schema, 'o:first');
      try {
        await writer.batch([put('o:second', 'second')]); // the next number, committed and notified first
        await waitUntil(() => reported.includes('o:second'), 'the later number to be delivered');
        await early.notify(`${early.seq} ${early.hex}`);
        await early.commit();
        await waitUntil(() => reported.includes('o:first'), 'the skipped number to be delivered');
        expect(reported).toEqual(['o:second', 'o:first']);
        expect(feedReads).not.toHaveBeenCalled();
      } finally {
        await early.end();
      }
    });
  });

  it('reads a skipped number back from the log by its number when its notification names no keys', async () => {
    await withFeed(async ({ watcher, writer, schema, feedReads }) => {
      const reported: string[] = [];
      watcher.watch('o:', (keys) => reported.push(...keys));
      await watcher.syncWatchers();
      const early = await openEarlyCommit(schema, 'o:first');
      try {
        // Later numbers, committed and delivered while the first is still open; the feed moves past it.
        for (const key of ['o:second', 'o:third']) await writer.batch([put(key, key)]);
        await waitUntil(() => reported.includes('o:third'), 'the later numbers to be delivered');
        feedReads.mockClear();
        // The skipped number announced without its keys (as a commit too large for a payload is): only the
        // log can say what it changed, and it lies below the feed's position.
        await early.notify(early.seq);
        await early.commit();
        await waitUntil(() => reported.includes('o:first'), 'the skipped number to be delivered');
        expect(reported).toEqual(['o:second', 'o:third', 'o:first']);
        expect(feedReads).toHaveBeenCalled();
      } finally {
        await early.end();
      }
    });
  });

  it('keeps watching after its listening connection is terminated, and reports the commits made meanwhile', async () => {
    await withStores(1, async ([writer], schema) => {
      // The watcher logs in as a role limited to one connection more than its pool holds, so after its
      // listening session is terminated it cannot reconnect until the limit is lifted: the writer's commits
      // land while it is disconnected, and only the change log can tell it about them.
      const role = `watcher_${schema}`;
      await runSql(
        database.url,
        `create role ${role} login connection limit 2; grant usage on schema ${schema} to ${role}; ` +
          `grant select, insert, update, delete on all tables in schema ${schema} to ${role}; ` +
          `grant usage on all sequences in schema ${schema} to ${role}`,
      );
      const url = new URL(database.url);
      url.username = role;
      const watcher = await PostgresStorage.open({
        connectionString: url.toString(),
        schema,
        maxConnections: 1,
      });
      try {
        const reported: string[] = [];
        watcher.watch('w:', (keys) => reported.push(...keys));
        await watcher.get('w:warm-up'); // the pool's one connection
        await writer!.batch([put('w:before', '1')]);
        await waitUntil(() => reported.includes('w:before'), 'the commit before the disconnection');
        await runSql(database.url, `alter role ${role} connection limit 1`);
        await runSql(
          database.url,
          `select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}' and application_name = 'shuttle:listen'`,
        );
        await waitUntil(() => !watcher.changeFeedConnected, 'the watcher to notice the lost connection');
        await writer!.batch([put('w:during-1', '1'), put('other:x', '1')]);
        await writer!.conditionalBatch([{ key: 'w:before', expected: '1' }], [put('w:during-2', '1')]);
        await new Promise((resolve) => setTimeout(resolve, 200)); // reconnect attempts fail meanwhile
        expect(watcher.changeFeedConnected).toBe(false);
        expect(reported).toEqual(['w:before']);
        await runSql(database.url, `alter role ${role} connection limit -1`);
        await waitUntil(() => reported.length >= 3, 'the missed commits after reconnecting');
        expect(reported).toEqual(['w:before', 'w:during-1', 'w:during-2']);
        await writer!.batch([put('w:after', '1')]);
        await waitUntil(() => reported.includes('w:after'), 'a commit after reconnecting');
        expect(reported).toEqual(['w:before', 'w:during-1', 'w:during-2', 'w:after']);
      } finally {
        await watcher.close();
        await runSql(database.url, `drop owned by ${role}; drop role ${role}`);
      }
    });
  });

  it('reports every stored key under the watched prefix when the missed changes were pruned from the log', async () => {
    await withStores(1, async ([writer], schema) => {
      const role = `watcher_${schema}`;
      await runSql(
        database.url,
        `create role ${role} login; grant usage on schema ${schema} to ${role}; ` +
          `grant select, insert, update, delete on all tables in schema ${schema} to ${role}; ` +
          `grant usage on all sequences in schema ${schema} to ${role}`,
      );
      const url = new URL(database.url);
      url.username = role;
      const watcher = await PostgresStorage.open({
        connectionString: url.toString(),
        schema,
        maxConnections: 1,
      });
      try {
        const reported = new Set<string>();
        watcher.watch('w:', (keys) => keys.forEach((key) => reported.add(key)));
        await writer!.batch([put('w:old', '1'), put('w:deleted-later', '1')]);
        await waitUntil(() => reported.has('w:old'), 'the first commit');
        reported.clear();
        await watcher.get('w:warm-up');
        await runSql(database.url, `alter role ${role} connection limit 1`);
        await runSql(
          database.url,
          `select pg_terminate_backend(pid) from pg_stat_activity where usename = '${role}' and application_name = 'shuttle:listen'`,
        );
        await waitUntil(() => !watcher.changeFeedConnected, 'the watcher to notice the lost connection');
        await writer!.batch([
          put('w:missed', '1'),
          { type: 'delete', key: 'w:deleted-later' },
          put('x:other', '1'),
        ]);
        // Prune the whole log, as a long outage under heavy traffic would.
        await runSql(
          database.url,
          `update ${schema}.meta set value = '0' where name = 'change_log_rows'; ` +
            `select ${schema}.prune_changes((select max(seq) from ${schema}.changes))`,
        );
        await runSql(database.url, `alter role ${role} connection limit -1`);
        await waitUntil(() => reported.size >= 2, 'the rescan after reconnecting');
        expect([...reported].sort()).toEqual(['w:missed', 'w:old']);
      } finally {
        await watcher.close();
        await runSql(database.url, `drop owned by ${role}; drop role ${role}`);
      }
    });
  });

  it('refuses a schema of a newer version with a typed error, and writes nothing', async () => {
    await withStores(1, async ([first], schema) => {
      await first!.batch([put('k', 'v')]);
      await first!.close();
      const newer = schemaVersion + 1;
      await runSql(
        database.url,
        `update ${schema}.meta set value = '${newer}' where name = 'schema_version'`,
      );
      const snapshot = async () =>
        (
          await runSql(
            database.url,
            `select (select json_agg(m order by name) from ${schema}.meta m) as meta, ` +
              `(select json_agg(e) from ${schema}.entries e) as entries, ` +
              `(select count(*) from ${schema}.changes) as changes, ` +
              `(select json_agg(p.prosrc order by p.proname) from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = '${schema}') as functions`,
          )
        ).rows[0];
      const before = await snapshot();
      const error = await rejection(() => PostgresStorage.open({ connectionString: database.url, schema }));
      expect(error).toBeInstanceOf(PostgresSchemaVersionError);
      expect(error.code).toBe('version-change');
      expect(error.operation).toBe('open');
      expect((error as PostgresSchemaVersionError).foundVersion).toBe(newer);
      expect(error.message).toMatch(
        new RegExp(
          `at version ${newer}, but this Shuttle knows only versions up to ${schemaVersion}.*Nothing was written.*Upgrade Shuttle`,
        ),
      );
      expect(await snapshot()).toEqual(before);
    });
  });

  it('upgrades a version 1 schema: the commit function is replaced, and the data stays', async () => {
    await withStores(1, async ([first], schema) => {
      await first!.batch([put('kept', 'v')]);
      await first!.close();
      // A version 1 schema: the same tables, an older commit function (here one that refuses every call).
      await runSql(
        database.url,
        `update ${schema}.meta set value = '1' where name = 'schema_version'; ` +
          `create or replace function ${schema}.commit(request jsonb) returns boolean[] language plpgsql ` +
          `as $$ begin raise exception 'the version 1 function'; end $$`,
      );
      const upgraded = await PostgresStorage.open({ connectionString: database.url, schema });
      try {
        const version = await runSql(
          database.url,
          `select value from ${schema}.meta where name = 'schema_version'`,
        );
        expect(version.rows).toEqual([{ value: String(schemaVersion) }]);
        expect(await upgraded.get('kept')).toBe('v');
        expect(await upgraded.conditionalBatch([{ key: 'kept', expected: 'v' }], [put('kept', 'w')])).toBe(
          true,
        );
        expect(await upgraded.get('kept')).toBe('w');
      } finally {
        await upgraded.close();
      }
    });
  });

  it('still serves the requests of a version 1 adapter (no write or independence flags), locks and all', async () => {
    await withStores(1, async ([store], schema) => {
      await store!.batch([put('a', '1')]);
      const reported: string[] = [];
      store!.watch('', (keys) => reported.push(...keys));
      // What a version 1 adapter sends: the same request without `w` and `i`.
      const request = (expected: string, next: string) => {
        const {
          w: _w,
          i: _i,
          ...v1
        } = commitRequest([
          { conditions: [{ key: 'a', expected }], operations: [put('a', next), put('b', next)] },
          { conditions: [{ key: 'a', expected: next }], operations: [{ type: 'delete', key: 'b' }] },
        ]);
        return JSON.stringify(v1);
      };
      const commit = async (expected: string, next: string) =>
        (
          await runSql(database.url, `select ${schema}.commit($1::jsonb) as results`, [
            request(expected, next),
          ])
        ).rows[0].results;
      // the second group sees the first group's write (groups in order), as version 1 did
      expect(await commit('1', '2')).toEqual([true, true]);
      expect(await store!.getMany(['a', 'b'])).toEqual(['2', null]);
      expect(await commit('1', '3')).toEqual([false, false]);
      expect(await store!.get('a')).toBe('2');
      // it takes the key locks: while another transaction holds the lock of `a`, it waits
      const holder = await holdKeyLock(schema, 'a');
      try {
        let settled = false;
        const waiting = commit('2', '4').finally(() => (settled = true));
        await lockWaiter('the commit to wait for the lock of a');
        expect(settled).toBe(false);
        await holder.query('commit');
        expect(await waiting).toEqual([true, true]);
      } finally {
        await holder.end();
      }
      await store!.syncWatchers();
      expect(reported).toContain('a');
    });
  });

  describe('the append statement (the engine’s step: puts, anchored on one absent key they insert)', () => {
    const step = (key: string, value: string, ...others: Operation[]) => ({
      conditions: [{ key, expected: null }],
      operations: [put(key, value), ...others],
    });

    it('takes exactly that shape and leaves everything else to the commit function', () => {
      // A lone step: the one-key statement, its parameters plain.
      expect(appendCommit([step('k', 'v')])).toEqual({
        statement: 'appendOne',
        params: [encodeKey('k'), 'v', 'k'],
      });
      expect(appendCommit([step('k', 'v'), step('j', 'w')])).toEqual({
        statement: 'append',
        params: [`{${encodeKey('k')},${encodeKey('j')}}`, '["v","w"]', '{0,1}', '{t,t}', '["k","j"]'],
      });
      expect(appendCommit([step('k', 'v', put('side', 's'))])?.statement).toBe('append');
      expect(appendCommit([{ conditions: [], operations: [put('a', '1'), put('a', '2')] }])).toEqual({
        statement: 'append',
        params: [
          `{${encodeKey('a')}}`,
          '["2"]', // the last operation on a key wins
          '{0}',
          '{f}',
          '["a"]',
        ],
      });
      const rejected = {
        'a delete': [step('k', 'v', { type: 'delete', key: 'd' })],
        'a put then deleted': [step('k', 'v', put('d', '1'), { type: 'delete', key: 'd' })],
        'a condition on a value': [
          { conditions: [{ key: 'k', expected: 'v' }], operations: [put('k', 'w')] },
        ],
        'an anchor it does not put': [
          { conditions: [{ key: 'k', expected: null }], operations: [put('j', 'v')] },
        ],
        'two conditions': [
          {
            ...step('k', 'v'),
            conditions: [
              { key: 'k', expected: null },
              { key: 'j', expected: null },
            ],
          },
        ],
        'a check without writes': [{ conditions: [{ key: 'k', expected: null }], operations: [] }],
        'a key in two groups': [step('k', 'v'), step('j', 'v', put('k', 'x'))],
        'more keys than key locks': [
          {
            conditions: [],
            operations: Array.from({ length: maxKeyLocksPerCommit + 1 }, (_, i) => put(`k${i}`, '')),
          },
        ],
      } satisfies Record<string, Parameters<typeof appendCommit>[0]>;
      for (const [what, groups] of Object.entries(rejected)) expect(appendCommit(groups), what).toBeNull();
    });

    it('names keys in its notification as themselves, or by their hex when they could not be', () => {
      const keys = ['wf-tl:order-7:000001:0000000003:0000000001', 'a b', '\u{1F600}', 'é', '', '"{}"'];
      for (const key of keys) expect(notifiedKey(key)).toBe(key);
      for (const key of ['a,b', '%41', 'tab\t', 'nul\u0000', 'lone \uD800', '\uDC00']) {
        expect(notifiedKey(key)).toBe(`%${encodeKey(key)}`);
        expect(decodeNotifiedKey(notifiedKey(key))).toBe(key);
      }
    });

    it('keeps the change row of a group commit as it is: no compression below a page', async () => {
      await withStores(1, async ([storage], schema) => {
        const keys = Array.from(
          { length: 20 },
          (_, index) => `wf-tl:order-${index}:000001:0000000042:0000000001`,
        );
        expect(await storage!.commitGroups(keys.map((key) => step(key, 'v')))).toEqual(keys.map(() => true));
        const { rows } = await runSql(
          database.url,
          `select octet_length(keys) as bytes, pg_column_compression(keys) as method from ${schema}.changes ` +
            `order by seq desc limit 1`,
        );
        // Twenty keys in hex: past the 2 kB at which PostgreSQL would otherwise compress the row.
        expect(Number(rows[0].bytes)).toBeGreaterThan(3000);
        expect(rows[0].method).toBeNull();
      });
    });

    it('announces fifty steps with their keys in one notification: the feed reads no log', async () => {
      await withFeed(async ({ watcher, writer, feedReads }) => {
        const reported = new Set<string>();
        watcher.watch('wf-tl:', (keys) => keys.forEach((key) => reported.add(key)));
        await watcher.syncWatchers();
        feedReads.mockClear();
        // Sixty keys of an engine step's length: about 15,000 bytes as hex, about 3,700 as themselves; and
        // keys only hex can name.
        const keys = [
          ...Array.from(
            { length: 60 },
            (_, index) =>
              `wf-tl:${'w'.repeat(20)}-${String(index).padStart(4, '0')}:000001:0000000042:0000000001`,
          ),
          'wf-tl:comma,inside',
          'wf-tl:100%',
          'wf-tl:lone \uD800',
        ];
        expect(await writer.commitGroups(keys.map((key) => step(key, 'v')))).toEqual(keys.map(() => true));
        await waitUntil(
          () => reported.size === keys.length,
          `all ${keys.length} keys (got ${reported.size})`,
        );
        expect([...reported].sort()).toEqual([...keys].sort());
        expect(feedReads).not.toHaveBeenCalled();
      });
    });

    it('stores values that need escaping in JSON or an array literal exactly', async () => {
      await withStores(1, async ([storage]) => {
        const values = [
          '"quoted"',
          'back\\slash\\',
          '{,}',
          'NULL',
          '',
          ' spaced ',
          'nul\u0000',
          'lone \uD800',
          '\u0001',
          'null',
          'control \u0007\n\t',
          '\\u0041 is not A',
          '\u{1F600}',
          '[1,"two"]',
        ];
        // All in one commit (the general statement), and each alone (the one-key statement).
        await storage!.commitGroups(values.map((value, index) => step(`q${index}`, value)));
        for (const [index, value] of values.entries()) {
          expect(
            await storage!.conditionalBatch(
              [{ key: `r${index}`, expected: null }],
              [put(`r${index}`, value)],
            ),
          ).toBe(true);
        }
        expect(await storage!.getMany(values.map((_, index) => `q${index}`))).toEqual(values);
        expect(await storage!.getMany(values.map((_, index) => `r${index}`))).toEqual(values);
      });
    });

    it('applies the groups whose anchor was absent, and nothing of the others; reports only what it wrote', async () => {
      await withStores(1, async ([storage]) => {
        const reported: string[] = [];
        storage!.watch('s:', (keys) => reported.push(...keys));
        await storage!.batch([put('s:taken', 'earlier')]);
        await storage!.syncWatchers();
        reported.length = 0;
        expect(
          await storage!.commitGroups([
            step('s:taken', 'late', put('s:taken-side', 'late')),
            step('s:fresh', 'new', put('s:fresh-side', 'new')),
            { conditions: [], operations: [put('s:plain', 'new')] },
          ]),
        ).toEqual([false, true, true]);
        expect(
          await storage!.getMany(['s:taken', 's:taken-side', 's:fresh', 's:fresh-side', 's:plain']),
        ).toEqual(['earlier', null, 'new', 'new', 'new']);
        await storage!.syncWatchers();
        expect(reported.sort()).toEqual(['s:fresh', 's:fresh-side', 's:plain']);
        expect(await storage!.commitGroups([step('s:taken', 'again')])).toEqual([false]);
      });
    });

    it('races the commit function for one absent key from other connections: exactly one wins, every time', async () => {
      await withStores(2, async ([appender, other]) => {
        for (let round = 0; round < 40; round++) {
          const key = `mixed:${round}`;
          await other!.batch([put(`${key}:gone`, 'x')]);
          // The appender's commit is a lone step (the one-key statement) in even rounds, and a step grouped with
          // another (the general statement) in odd ones; the other's deletes a key, so it goes to the commit
          // function.
          const appended =
            round % 2 === 0
              ? appender!.conditionalBatch([{ key, expected: null }], [put(key, 'append')])
              : appender!
                  .commitGroups([step(key, 'append'), step(`${key}:beside`, 'x')])
                  .then(([applied, beside]) => {
                    expect(beside).toBe(true);
                    return applied!;
                  });
          const results = await Promise.all([
            appended,
            other!.conditionalBatch(
              [{ key, expected: null }],
              [put(key, 'function'), { type: 'delete', key: `${key}:gone` }],
            ),
          ]);
          expect(results.filter(Boolean), `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1);
          const [value, gone] = await appender!.getMany([key, `${key}:gone`]);
          expect(value).toBe(results[0] ? 'append' : 'function');
          expect(gone).toBe(results[0] ? 'x' : null);
        }
      });
    });

    it('waits for the lock of its key, then sees the row its holder inserted, whatever its snapshot', async () => {
      await withStores(1, async ([storage], schema) => {
        const holder = await holdKeyLock(schema, 'held');
        try {
          let settled = false;
          const waiting = storage!.conditionalBatch(
            [{ key: 'held', expected: null }],
            [put('held', 'append')],
          );
          void waiting.finally(() => (settled = true));
          await lockWaiter('the append to wait for the lock of its key');
          expect(settled).toBe(false);
          await holder.query(
            `insert into ${schema}.entries (key, value) values (decode($1, 'hex'), 'holder')`,
            [encodeKey('held')],
          );
          await holder.query('commit');
          expect(await waiting).toBe(false);
          expect(await storage!.get('held')).toBe('holder');
        } finally {
          await holder.end();
        }
      });
    });
  });

  describe('commits on the listening session (its own notification comes back in the answer)', () => {
    /** The feed of these tests' stores reads the log only when asked (no heartbeat during a test). */
    const quiet = { changeFeedHeartbeatMs: 600_000 };

    /** What the listening sessions of the server ran last, and whether they wait for a lock. */
    const listeningSessions = async () =>
      (
        await runSql(
          database.url,
          `select pid, query, wait_event_type from pg_stat_activity where application_name = 'shuttle:listen'`,
        )
      ).rows as { pid: number; query: string; wait_event_type: string | null }[];

    /** Whether a commit to `schema` waits for a lock on a listening session. */
    const commitWaitsOnSession = async (schema: string) =>
      (await listeningSessions()).some(
        ({ query, wait_event_type }) => query.includes(`${schema}.entries`) && wait_event_type === 'Lock',
      );

    it('sends a commit on the listening session when it is idle, and reports it without reading the log', async () => {
      await withFeed(async ({ watcher, schema, feedReads }) => {
        const reported: string[] = [];
        watcher.watch('lent:', (keys) => reported.push(...keys));
        await watcher.syncWatchers();
        feedReads.mockClear();
        expect(
          await watcher.conditionalBatch([{ key: 'lent:1', expected: null }], [put('lent:1', 'v')]),
        ).toBe(true);
        // The session that listens ran the step (its pool's connections did not), so its notification came
        // back on it.
        const ran = (await listeningSessions()).filter(({ query }) =>
          query.includes(`insert into ${schema}.entries`),
        );
        expect(ran).toHaveLength(1);
        await waitUntil(() => reported.includes('lent:1'), 'the commit to be reported');
        expect(feedReads).not.toHaveBeenCalled();
        // A commit of another shape (a condition on a value: the commit function) goes there too.
        expect(await watcher.conditionalBatch([{ key: 'lent:1', expected: 'v' }], [put('lent:1', 'w')])).toBe(
          true,
        );
        expect(
          (await listeningSessions()).filter(({ query }) => query.includes(`${schema}.commit(`)),
        ).toHaveLength(1);
        await waitUntil(() => reported.length === 2, 'the second commit to be reported');
        expect(reported).toEqual(['lent:1', 'lent:1']);
      });
    });

    it('queues a second commit behind the first on the listening session, and sends a third on the pool', async () => {
      const schema = freshSchema();
      const { pool, statements } = countingPool(4);
      const storage = await PostgresStorage.open({ pool, schema, ...quiet });
      const holder = await holdKeyLock(schema, 'lent:a');
      // The session pipelines them: the driver takes each at once, without its "already executing" warning.
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const reported: string[] = [];
        storage.watch('lent:', (keys) => reported.push(...keys));
        await storage.syncWatchers();
        const before = statements();
        const settled: string[] = [];
        const commit = (key: string) =>
          storage.conditionalBatch([{ key, expected: null }], [put(key, key)]).then((ok) => {
            settled.push(key);
            return ok;
          });
        const first = commit('lent:a'); // on the session, waiting for the key's lock
        const second = commit('lent:b'); // on the session too, queued behind the first
        expect(await commit('lent:c')).toBe(true); // the session carries two: this one on the pool
        expect(statements() - before).toBe(1);
        await waitUntil(
          () => commitWaitsOnSession(schema),
          'the first commit to wait for the lock on the listening session',
        );
        expect(settled).toEqual(['lent:c']);
        const read = storage.syncWatchers(); // a read of the log, queued behind both
        await holder.query('commit');
        expect(await Promise.all([first, second])).toEqual([true, true]);
        await read;
        expect(settled).toEqual(['lent:c', 'lent:a', 'lent:b']);
        expect(statements() - before).toBe(1);
        await waitUntil(() => reported.length === 3, 'the three commits to be reported');
        expect([...reported].sort()).toEqual(['lent:a', 'lent:b', 'lent:c']);
        expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([]);
      } finally {
        process.off('warning', onWarning);
        await holder.end();
        await storage.close();
        await pool.end();
        await runSql(database.url, `drop schema if exists ${schema} cascade`);
      }
    });

    it('pipelines the commits on the listening session: the second runs once the first commits, while this process is busy', async () => {
      await withStores(
        1,
        async ([store], schema) => {
          const storage = store!;
          const holder = await holdKeyLock(schema, 'pipe:a');
          try {
            const first = storage.conditionalBatch([{ key: 'pipe:a', expected: null }], [put('pipe:a', 'a')]);
            const second = storage.conditionalBatch(
              [{ key: 'pipe:b', expected: null }],
              [put('pipe:b', 'b')],
            );
            await waitUntil(
              () => commitWaitsOnSession(schema),
              'the first commit to wait for the lock on the listening session',
            );
            // Release the lock, then keep this process's event loop busy: the first commit's answer cannot be
            // read here, so only a second commit already written to the server can run. Each look is another
            // process's synchronous query.
            void holder.query('commit');
            const stored = (key: string) =>
              execFileSync(
                process.execPath,
                [
                  '-e',
                  `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });
                   c.connect().then(() => c.query(process.argv[2])).then((r) => { console.log(r.rowCount); return c.end(); });`,
                  database.url,
                  `select 1 from ${schema}.entries where key = decode('${encodeKey(key)}', 'hex')`,
                ],
                { encoding: 'utf8' },
              ).trim() === '1';
            const deadline = Date.now() + 10_000;
            let committedWhileBusy = false;
            while (!committedWhileBusy && Date.now() < deadline) committedWhileBusy = stored('pipe:b');
            expect(committedWhileBusy, 'the second commit to run before its caller could send it').toBe(true);
            expect(await Promise.all([first, second])).toEqual([true, true]);
          } finally {
            await holder.end();
          }
        },
        quiet,
      );
    });

    it('ends only its own pipelined statement when one on the listening session fails', async () => {
      await withStores(
        1,
        async ([store], schema) => {
          const storage = store!;
          const holders = [await holdKeyLock(schema, 'pipe:a'), await holdKeyLock(schema, 'pipe:b')];
          const waitingOnSession = async () =>
            (await listeningSessions()).find(({ wait_event_type }) => wait_event_type === 'Lock');
          const sessionWaits = async () => (await waitingOnSession()) !== undefined;
          try {
            const first = storage.conditionalBatch([{ key: 'pipe:a', expected: null }], [put('pipe:a', 'a')]);
            const second = rejection(() =>
              storage.conditionalBatch([{ key: 'pipe:b', expected: null }], [put('pipe:b', 'b')]),
            );
            const read = storage.syncWatchers(); // a read of the log, written behind both
            await waitUntil(sessionWaits, 'the first commit to wait for its key on the listening session');
            await holders[0]!.query('commit');
            expect(await first).toBe(true);
            await waitUntil(sessionWaits, 'the second commit to wait for its key on the listening session');
            // Cancel the second commit's statement: an error on the server between two pipelined statements.
            await runSql(database.url, `select pg_cancel_backend(${(await waitingOnSession())!.pid})`);
            expect((await second).message).toMatch(/cancelled the statement/);
            await read; // the statement behind it ran
            expect(storage.changeFeedConnected).toBe(true);
            await holders[1]!.query('commit');
            expect(
              await storage.conditionalBatch([{ key: 'pipe:c', expected: null }], [put('pipe:c', 'c')]),
            ).toBe(true);
            expect(await storage.get('pipe:a')).toBe('a');
            expect(await storage.get('pipe:b')).toBeNull();
            expect(await storage.get('pipe:c')).toBe('c');
          } finally {
            for (const holder of holders) await holder.end();
          }
        },
        quiet,
      );
    });

    it('fails a commit whose listening session is cut as unknown, and reconnects the feed', async () => {
      await withStores(
        1,
        async ([store], schema) => {
          const storage = store!;
          const reported: string[] = [];
          storage.watch('cut:', (keys) => reported.push(...keys));
          await storage.syncWatchers();
          const holder = await holdKeyLock(schema, 'cut:1');
          try {
            const failed = rejection(() =>
              storage.conditionalBatch([{ key: 'cut:1', expected: null }], [put('cut:1', 'v')]),
            );
            await lockWaiter('the commit to wait for its key');
            const [waiting] = (await listeningSessions()).filter(
              ({ wait_event_type }) => wait_event_type === 'Lock',
            );
            expect(waiting, 'the commit waits on the listening session').toBeDefined();
            await runSql(database.url, `select pg_terminate_backend(${waiting!.pid})`);
            const error = await failed;
            expect(error.code).toBe('unknown');
            expect(error.message).toMatch(
              /cannot reach .* it may or may not have been applied: read before retrying/,
            );
          } finally {
            await holder.query('rollback');
            await holder.end();
          }
          expect(await storage.get('cut:1')).toBeNull(); // cut before it committed
          await waitUntil(() => storage.changeFeedConnected, 'the feed to reconnect');
          expect(
            await storage.conditionalBatch([{ key: 'cut:2', expected: null }], [put('cut:2', 'v')]),
          ).toBe(true);
          await waitUntil(() => reported.includes('cut:2'), 'the next commit to be reported');
          expect(reported).toEqual(['cut:2']);
        },
        quiet,
      );
    });

    it('closes only after a commit running on the listening session has finished', async () => {
      await withStores(
        1,
        async ([store], schema) => {
          const storage = store!;
          const holder = await holdKeyLock(schema, 'close:1');
          let committed: Promise<boolean>;
          let closed: Promise<void>;
          let closeDone = false;
          try {
            committed = storage.conditionalBatch([{ key: 'close:1', expected: null }], [put('close:1', 'v')]);
            await lockWaiter('the commit to wait for its key');
            closed = storage.close().then(() => {
              closeDone = true;
            });
            await new Promise((resolve) => setTimeout(resolve, 50));
            expect(closeDone).toBe(false);
          } finally {
            await holder.query('commit');
            await holder.end();
          }
          expect(await committed).toBe(true);
          await closed;
          const { rows } = await runSql(
            database.url,
            `select value from ${schema}.entries where key = decode('${encodeKey('close:1')}', 'hex')`,
          );
          expect(rows).toEqual([{ value: 'v' }]);
        },
        quiet,
      );
    });
  });

  it('re-checks the version under the migration lock, so a newer schema created meanwhile is not touched', async () => {
    const schema = freshSchema();
    try {
      // The state a racing newer adapter could leave between this adapter's check and its migration.
      await runSql(
        database.url,
        `create schema ${schema}; create table ${schema}.meta (name text primary key, value text not null); ` +
          `insert into ${schema}.meta values ('schema_version', '7')`,
      );
      await expect(runSql(database.url, migrationScript(schemaNames(schema)))).rejects.toThrow(
        /shuttle-schema-too-new:7/,
      );
      const tables = await runSql(
        database.url,
        `select tablename from pg_tables where schemaname = '${schema}'`,
      );
      expect(tables.rows).toEqual([{ tablename: 'meta' }]);
    } finally {
      await runSql(database.url, `drop schema if exists ${schema} cascade`);
    }
  });

  it('creates the schema once when several adapters open a fresh database at the same time', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () =>
        PostgresStorage.open({ connectionString: database.url, schema, maxConnections: 1 }),
      ),
    );
    try {
      await stores[0]!.batch([put('k', 'v')]);
      expect(await stores[3]!.get('k')).toBe('v');
    } finally {
      for (const store of stores) await store.close();
      await runSql(database.url, `drop schema if exists ${schema} cascade`);
    }
  });

  it('rejects with a StorageError that says what to do when the server is unreachable', async () => {
    const error = await rejection(() =>
      PostgresStorage.open({
        connectionString: 'postgres://postgres@127.0.0.1:1/shuttle',
        connectTimeoutMs: 3000,
      }),
    );
    expect(error.operation).toBe('open');
    expect(error.message).toMatch(
      /cannot reach PostgreSQL at 127\.0\.0\.1:1, database shuttle .*ECONNREFUSED/,
    );
    expect(error.message).toMatch(/Check that the server is running/);
  });

  it('rejects with a StorageError naming the database when it does not exist', async () => {
    const url = new URL(database.url);
    url.pathname = '/no_such_database';
    const error = await rejection(() => PostgresStorage.open({ connectionString: url.toString() }));
    expect(error.message).toMatch(/no_such_database.*Create the database first/);
  });

  it('keeps working after the server terminated its pooled connections', async () => {
    await withStores(1, async ([storage]) => {
      await storage!.batch([put('k', '1')]);
      await runSql(
        database.url,
        `select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'shuttle'`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await storage!.get('k')).toBe('1');
      expect(await storage!.conditionalBatch([{ key: 'k', expected: '1' }], [put('k', '2')])).toBe(true);
    });
  });

  it('sends the point reads of one turn as one statement on one connection, each caller getting its own keys', async () => {
    const schema = freshSchema();
    const { pool, statements } = countingPool(10);
    const storage = await PostgresStorage.open({ pool, schema });
    try {
      await storage.batch(Array.from({ length: 60 }, (_, index) => put(`k${index}`, `v${index}`)));
      const before = statements();
      const reads = await Promise.all([
        ...Array.from({ length: 50 }, (_, index) => storage.get(`k${index}`)),
        storage.getMany(['k55', 'missing', 'k3', 'k55']),
        storage.get('missing'),
      ]);
      expect(reads).toEqual([
        ...Array.from({ length: 50 }, (_, index) => `v${index}`),
        ['v55', null, 'v3', 'v55'],
        null,
      ]);
      expect(statements() - before).toBe(1);
      expect(pool.totalCount).toBe(1);
      // Reads of different turns are sent apart.
      expect(await storage.get('k1')).toBe('v1');
      expect(await storage.getMany(['k2'])).toEqual(['v2']);
      expect(statements() - before).toBe(3);
      // A batch that fails rejects every caller, each with its own operation's name.
      await runSql(database.url, `drop schema ${schema} cascade`);
      const failed = await Promise.allSettled([storage.get('k1'), storage.getMany(['k2', 'k3'])]);
      expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
      const [get, getMany] = failed.map(
        (outcome) => (outcome as PromiseRejectedResult).reason as StorageError,
      );
      expect([get!.operation, getMany!.operation]).toEqual(['get', 'getMany']);
      expect(get!.code).toBe(getMany!.code);
    } finally {
      await storage.close();
      await pool.end();
      await runSql(database.url, `drop schema if exists ${schema} cascade`);
    }
  });

  it('rejects bad options before connecting', async () => {
    expect(
      (await rejection(() => PostgresStorage.open({ connectionString: database.url, schema: 'Bad-Name' })))
        .message,
    ).toMatch(/schema must be a lower-case SQL identifier/);
    expect((await rejection(() => PostgresStorage.open({}))).message).toMatch(
      /exactly one of connectionString/,
    );
    expect(
      (await rejection(() => PostgresStorage.open({ connectionString: database.url, maxValueBytes: 0 })))
        .message,
    ).toMatch(/maxValueBytes/);
  });
});
