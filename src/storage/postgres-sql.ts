/**
 * The SQL side of `PostgresStorage`: the schema it creates, the commit function and the statements it runs,
 * plus the codecs between JavaScript strings and what PostgreSQL stores (Node only).
 *
 * Keys are stored as `bytea` holding the key's UTF-16 code units big-endian, so PostgreSQL's byte order is
 * exactly JavaScript's string order (UTF-16 code units), for every string, lone surrogates included. On the
 * wire a key travels as lowercase hex of those bytes (`decode($1, 'hex')` on the server), which keeps every
 * parameter a plain string whatever the driver.
 *
 * Values are stored as `text`. PostgreSQL text cannot hold U+0000 or a lone surrogate, so a value containing
 * either (or starting with the marker U+0001) is stored as U+0001 followed by its JSON string literal; every
 * other value is stored as is. The encoding is injective, so comparing encoded values compares the original
 * strings exactly (what the conditions of a commit need).
 *
 * See docs/postgres.md for the design as a whole.
 */

import { Buffer } from 'node:buffer';
import type { CommitGroup } from './types';

/** The schema version this code creates and understands. A database at a newer version is refused. */
export const schemaVersion = 2;

/** Rows of the change log kept for listeners that reconnect (the newest are kept). */
export const defaultChangeLogRows = 100_000;

/**
 * A commit touching more distinct keys than this locks the whole store instead of key by key, so that a few
 * huge commits cannot fill PostgreSQL's lock table (64 locks per connection by default, shared). Group
 * commits of the engine (dozens of small groups) stay below it and keep running side by side.
 */
export const maxKeyLocksPerCommit = 256;

/** What a schema name may look like: a plain lower-case SQL identifier, short enough for derived names. */
export const schemaNamePattern = /^[a-z_][a-z0-9_]{0,39}$/;

// ---------------------------------------------------------------------------------------------------------
// Codecs

/** The hex of `key`'s UTF-16 code units, big-endian: how a key is sent to the server. */
export function encodeKey(key: string): string {
  return Buffer.from(key, 'utf16le').swap16().toString('hex');
}

/** The key stored as UTF-16BE bytes (a `bytea` as returned by either driver). */
export function decodeKeyBytes(bytes: Uint8Array): string {
  return Buffer.from(bytes).swap16().toString('utf16le');
}

/** The key sent as hex by `encodeKey`. */
export function decodeKeyHex(hex: string): string {
  return Buffer.from(hex, 'hex').swap16().toString('utf16le');
}

const valueMarker = '\u0001';
/** With the `u` flag a surrogate pair is one code point, so this finds lone surrogates only. */
const loneSurrogate = /[\ud800-\udfff]/u;

/** The text stored for `value` (see the module comment). */
export function encodeValue(value: string): string {
  if (value.startsWith(valueMarker) || value.includes('\u0000') || loneSurrogate.test(value)) {
    return valueMarker + JSON.stringify(value);
  }
  return value;
}

/** The value `encodeValue` stored as `text`. */
export function decodeValue(text: string): string {
  return text.startsWith(valueMarker) ? (JSON.parse(text.slice(1)) as string) : text;
}

// ---------------------------------------------------------------------------------------------------------
// Names

/** A 31-bit FNV-1a hash of `text`: the schema's advisory lock namespace. */
function lockNamespace(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash & 0x7fffffff;
}

/** Every name the adapter uses in one schema. */
export type SchemaNames = {
  schema: string;
  /** The NOTIFY channel commits announce themselves on. */
  channel: string;
  /** First key of the two-key advisory locks of this schema (second key 0: the store, 1: migrations). */
  lockNamespace: number;
};

export function schemaNames(schema: string): SchemaNames {
  return { schema, channel: `${schema}_changes`, lockNamespace: lockNamespace(`shuttle:${schema}`) };
}

// ---------------------------------------------------------------------------------------------------------
// Schema

/** Largest NOTIFY payload the commit function sends (PostgreSQL's limit is 8000 bytes). */
export const maxNotifyPayloadBytes = 7900;

/**
 * The locks of a writing commit, as SQL expressions for a select list (see the commit function, step 1): the
 * transaction id first (the change feed relies on it being taken before the change's sequence number), the
 * store lock — shared, or exclusive for a commit of more than `maxKeyLocksPerCommit` keys — and the lock of
 * each key, by its hash, in ascending order. The commit function and both append statements take their locks
 * through these, so the order is written once.
 */
function commitLocks(namespace: number) {
  return {
    shared: `pg_current_xact_id(), pg_advisory_xact_lock_shared(${namespace}, 0)`,
    exclusive: `pg_current_xact_id(), pg_advisory_xact_lock(${namespace}, 0)`,
    /** The lock of the key whose hex is `hex`. */
    key: (hex: string) => `pg_advisory_xact_lock(hashtextextended(${hex}, ${namespace}))`,
    /** The locks of the keys `hexes` yields (a set-returning expression of their hex), in hash order. */
    keys: (hexes: string) =>
      `(select count(pg_advisory_xact_lock(h)) from ` +
      `(select hashtextextended(k, ${namespace}) as h from ${hexes} k order by 1) sorted)`,
  };
}

/**
 * The commit function. `request` is `{"k": [keyHex, …], "w": bool, "i": bool, "x": bool, "g": [group, …]}`:
 * `k` lists every distinct key of the commit, and each group refers to keys by their index in `k`:
 * `{"c": [[index, expected|null], …], "p": [[index, value], …], "d": [index, …], "t": "keyHex,keyHex"}`
 * (conditions, puts, deletes — at most one operation per key, the client keeps the last — and the touched
 * keys for the change feed; absent members are empty). `w`: some group writes; `i`: no key belongs to two
 * groups. Returns one boolean per group. Since a group can only name keys of `k`, locking `k` locks
 * everything the commit reads or writes.
 *
 * 1. Locks (only if some group writes): a transaction id, then the store lock (two-key advisory lock
 *    `(namespace, 0)`) shared, then every key of `k`, hashed to a bigint, with transaction-scoped advisory
 *    locks in ascending order: two commits never deadlock, and a commit expecting a key absent serialises
 *    with one inserting it. With `x` (the client sets it above `maxKeyLocksPerCommit` keys) the store lock is
 *    taken exclusively instead, which bounds the lock table. Either choice is correct; a hash collision only
 *    serialises two commits. A commit without writes takes no lock: its one condition check is one
 *    statement, one snapshot. The transaction id is taken before the change log's sequence number, so a
 *    listener that sees a number missing can tell from its snapshot when this transaction has surely ended
 *    (see the change feed).
 * 2. With `i` (one group, or groups that share no key — the engine's group commit of different workflows),
 *    one statement does the rest for every group at once: each group's conditions checked, the puts of the
 *    groups that hold upserted and their deletes deleted, their touched keys appended to the change log and
 *    announced. A group sees no other group's writes, so checking every group against the one snapshot taken
 *    after the locks is what checking them in order would give. (READ COMMITTED takes a fresh snapshot per
 *    statement: it sees every commit that released the locks.)
 * 3. Otherwise, each group in order: its conditions are checked in one statement (a fresh snapshot, which
 *    sees this commit's earlier groups); if they hold, its puts (one upsert) and deletes (one delete) are
 *    applied. Then the touched keys are appended to the change log and announced.
 * 4. The announcement is `pg_notify`: the change's sequence number, then a space and the touched keys when
 *    they fit in `maxNotifyPayloadBytes` (NOTIFY is delivered after commit, in commit order). Every 256th
 *    change prunes the log to its newest `change_log_rows` rows.
 *
 * The function's cost is mostly per statement, and it runs on every engine step: a step is three statements
 * (the locks, a simple expression for the store lock, and the one of step 2). A request without `w` (from
 * a version 1 adapter still running during an upgrade) is checked for writes here, as version 1 did.
 * SECURITY INVOKER, and every name is schema-qualified: the function can do nothing its caller could not.
 */
function commitFunction({ schema, channel, lockNamespace: namespace }: SchemaNames): string {
  const key = (index: string) => `decode(keys->>((${index})::integer), 'hex')`;
  // A key's current value as a scalar subquery: always the primary key's index, whatever the planner
  // thinks of the rows a JSON array yields (a join there became a scan of the whole table as it grew).
  const current = (index: string) => `(select value from ${schema}.entries where key = ${key(index)})`;
  const notify = (seq: string, touched: string) => announce(seq, touched, channel, ' ');
  const locks = commitLocks(namespace);
  return `
create or replace function ${schema}.commit(request jsonb) returns boolean[]
language plpgsql volatile
as $commit$
declare
  keys jsonb := request->'k';
  groups jsonb := request->'g';
  request_group jsonb;
  conditions jsonb;
  puts jsonb;
  holds boolean;
  results boolean[] := '{}';
  touched text;
  new_seq bigint;
begin
  if coalesce((request->>'w')::boolean,
               jsonb_path_exists(groups, '$[*] ? (exists (@.p) || exists (@.d))')) then
    if (request->>'x')::boolean then
      perform ${locks.exclusive};
    elsif jsonb_array_length(keys) = 1 then
      perform ${locks.shared}, ${locks.key('keys->>0')};
    else
      perform ${locks.shared};
      perform ${locks.keys('jsonb_array_elements_text(keys)')};
    end if;
  end if;

  if (request->>'i')::boolean then
    with listed as (
      select (position - 1)::integer as index, body
        from jsonb_array_elements(groups) with ordinality as listed(body, position)
    ), checked as (
      select listed.index, bool_and(${current('c->>0')} is not distinct from (c->>1)) as ok
        from listed cross join lateral jsonb_array_elements(listed.body->'c') c
        group by listed.index
    ), outcome as (
      select listed.index, coalesce(checked.ok, true) as ok, listed.body
        from listed left join checked using (index)
    ), upserted as (
      insert into ${schema}.entries (key, value)
        select ${key('p->>0')}, p->>1
          from outcome cross join lateral jsonb_array_elements(outcome.body->'p') p
          where outcome.ok
        on conflict (key) do update set value = excluded.value
    ), deleted as (
      delete from ${schema}.entries where key = any(array(
        select ${key('d')}
          from outcome cross join lateral jsonb_array_elements_text(outcome.body->'d') d
          where outcome.ok))
    ), touched_keys as (
      select string_agg(body->>'t', ',' order by index) as list from outcome where ok and body ? 't'
    ), appended as (
      insert into ${schema}.changes (keys) select list from touched_keys where list is not null
        returning seq
    )
    select (select array_agg(ok order by index) from outcome),
           (select appended.seq from appended, touched_keys
             where ${notify('appended.seq', 'touched_keys.list')} is not null)
      into results, new_seq;
  else
    for group_index in 0 .. jsonb_array_length(groups) - 1 loop
      request_group := groups->group_index;
      conditions := request_group->'c';
      if conditions is null then
        holds := true;
      elsif jsonb_array_length(conditions) = 1 then
        holds := ${current('conditions->0->>0')} is not distinct from (conditions->0->>1);
      else
        select bool_and(${current('c->>0')} is not distinct from (c->>1)) into holds
          from jsonb_array_elements(conditions) c;
      end if;
      results := results || holds;
      if holds then
        puts := request_group->'p';
        if puts is null then
          null;
        elsif jsonb_array_length(puts) = 1 then
          insert into ${schema}.entries (key, value) values (${key('puts->0->>0')}, puts->0->>1)
            on conflict (key) do update set value = excluded.value;
        else
          insert into ${schema}.entries (key, value)
            select ${key('p->>0')}, p->>1 from jsonb_array_elements(puts) p
            on conflict (key) do update set value = excluded.value;
        end if;
        if request_group ? 'd' then
          delete from ${schema}.entries
            where key = any(array(select ${key('d')} from jsonb_array_elements_text(request_group->'d') d));
        end if;
        touched := concat_ws(',', touched, request_group->>'t');
      end if;
    end loop;
    if touched is not null then
      with appended as (insert into ${schema}.changes (keys) values (touched) returning seq)
        select seq into new_seq from appended where ${notify('seq', 'touched')} is not null;
    end if;
  end if;

  if new_seq % 256 = 0 then
    perform ${schema}.prune_changes(new_seq);
  end if;
  return results;
end
$commit$;`;
}

/** The JSON request of the commit function (see `commitFunction`). */
export type CommitRequest = {
  k: string[];
  /** Some group writes (puts or deletes): the commit takes its locks. */
  w: boolean;
  /** No key belongs to two groups: every group is checked and applied in one statement. */
  i: boolean;
  x?: true;
  g: { c?: [number, string | null][]; p?: [number, string][]; d?: number[]; t?: string }[];
};

/** Builds the commit function's request from the groups of a commit (keys and values encoded here). */
export function commitRequest(groups: readonly CommitGroup[]): CommitRequest {
  const keys: string[] = [];
  const indexes = new Map<string, number>();
  /** The group that first named each key (by index in `keys`). */
  const namedBy: number[] = [];
  let independent = true;
  let writes = false;
  const indexOf = (key: string, group: number): number => {
    const hex = encodeKey(key);
    let index = indexes.get(hex);
    if (index === undefined) {
      index = keys.length;
      indexes.set(hex, index);
      keys.push(hex);
      namedBy.push(group);
    } else if (namedBy[index] !== group) {
      independent = false;
    }
    return index;
  };
  const request: CommitRequest = {
    k: keys,
    w: false,
    i: false,
    g: groups.map(({ conditions, operations }, groupIndex) => {
      const group: CommitRequest['g'][number] = {};
      if (conditions.length > 0) {
        group.c = conditions.map(({ key, expected }) => [
          indexOf(key, groupIndex),
          expected === null ? null : encodeValue(expected),
        ]);
      }
      if (operations.length > 0) {
        writes = true;
        const puts: [number, string][] = [];
        const deletes: number[] = [];
        const touched: string[] = [];
        for (const [key, value] of lastOperations(operations)) {
          const index = indexOf(key, groupIndex);
          if (value === null) deletes.push(index);
          else puts.push([index, encodeValue(value)]);
          touched.push(keys[index]!);
        }
        if (puts.length > 0) group.p = puts;
        if (deletes.length > 0) group.d = deletes;
        group.t = touched.join(',');
      }
      return group;
    }),
  };
  request.w = writes;
  request.i = independent;
  if (keys.length > maxKeyLocksPerCommit) request.x = true;
  return request;
}

/**
 * A group's operations with the last one on each key winning: each key once, in the order it was first
 * named, with the value it is put to or null when it is deleted.
 */
export function lastOperations(operations: CommitGroup['operations']): Map<string, string | null> {
  const last = new Map<string, string | null>();
  for (const operation of operations)
    last.set(operation.key, operation.type === 'put' ? operation.value : null);
  return last;
}

/**
 * The parameters of the append statement (see `appendStatement`): the hex of every key written, as an array
 * literal; the encoded value of each, as a JSON array (`JSON.stringify` escapes in one native pass what an
 * array literal would need escaped by hand, about eight times faster); the index of the group writing each
 * key and whether it is its group's anchor (the key the group's one condition expects absent), as array
 * literals; and each key as its notification names it (`notifiedKey`), as a JSON array.
 */
export type AppendParams = [keys: string, values: string, groups: string, anchors: string, notified: string];

/** The parameters of the one-key append statement (see `appendOneStatement`). */
export type AppendOneParams = [key: string, value: string, notified: string];

/** The append statement a commit goes to, with its parameters. */
export type AppendCommit =
  { statement: 'append'; params: AppendParams } | { statement: 'appendOne'; params: AppendOneParams };

/**
 * The append statement for `groups`, or null when the commit is not of its shape and goes to the commit
 * function. The shape is the engine's step, alone or in a group commit: every group writes, and only puts
 * (after the last operation on each key wins); it has no condition, or one that expects absent a key the
 * group itself puts (its anchor); no key belongs to two groups; and the commit has at most
 * `maxKeyLocksPerCommit` keys. One group putting only its anchor (a lone step) goes to the one-key statement.
 */
export function appendCommit(groups: readonly CommitGroup[]): AppendCommit | null {
  const seen = new Set<string>();
  const keys: string[] = [];
  const values: string[] = [];
  const owners: number[] = [];
  const anchors: boolean[] = [];
  const notified: string[] = [];
  for (let index = 0; index < groups.length; index++) {
    const { conditions, operations } = groups[index]!;
    if (operations.length === 0 || conditions.length > 1) return null;
    const anchor = conditions[0];
    if (anchor && anchor.expected !== null) return null;
    const last = lastOperations(operations);
    if (anchor && !last.has(anchor.key)) return null;
    for (const [key, value] of last) {
      if (value === null || seen.has(key)) return null;
      seen.add(key);
      keys.push(encodeKey(key));
      values.push(encodeValue(value));
      owners.push(index);
      anchors.push(key === anchor?.key);
      notified.push(notifiedKey(key));
    }
  }
  if (keys.length > maxKeyLocksPerCommit) return null;
  if (keys.length === 1 && anchors[0]) {
    return { statement: 'appendOne', params: [keys[0]!, values[0]!, notified[0]!] };
  }
  return {
    statement: 'append',
    params: [
      `{${keys.join(',')}}`,
      JSON.stringify(values),
      `{${owners.join(',')}}`,
      `{${anchors.map((anchor) => (anchor ? 't' : 'f')).join(',')}}`,
      JSON.stringify(notified),
    ],
  };
}

/** Characters a key named as itself in a notification may not contain (lone surrogates: not UTF-8). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it looks for
const unnameable = /[,%\u0000-\u001f]|[\ud800-\udfff]/u;

/**
 * How the append statement's notification names `key`: as itself when it has no comma, `%`, control
 * character or lone surrogate (every key the engine writes), else `%` and its hex (`encodeKey`). A
 * notification of the commit function names every key by its hex: four characters a character, so fifty
 * engine steps (a key of about sixty characters each) would not fit in one payload and the feed would
 * read the log for them. `decodeNotifiedKey` reverses it.
 */
export function notifiedKey(key: string): string {
  return unnameable.test(key) ? `%${encodeKey(key)}` : key;
}

/** The key `notifiedKey` named. */
export function decodeNotifiedKey(name: string): string {
  return name.startsWith('%') ? decodeKeyHex(name.slice(1)) : name;
}

/**
 * The append statement: the engine's step committed by one prepared statement instead of the commit
 * function, for the shape `appendCommit` accepts. It returns `held`, the indexes of the groups that hold
 * (comma-separated; null when none does), and `seq`, the change's sequence number.
 *
 * What it does is what the function does for such a commit, in the same order, with the same locks:
 * 1. A transaction id, the store lock shared and every key's lock in ascending hash order (the `locked`
 *    row, which every row of the commit is joined to, so no row is written before all locks are held).
 * 2. The anchors are inserted with `on conflict do nothing`: an anchor that was inserted is absent, one
 *    that conflicted is present — the one index probe that checks the condition and applies the put. The
 *    check is the unique index's, not the statement's snapshot: it sees a row committed after the snapshot
 *    was taken, and waits for an insert still in flight. A commit of the function that expects the same key
 *    absent holds the key's lock from before its check to after its commit, so the two serialise as two
 *    commits of the function do.
 * 3. The other puts of the groups that hold (no anchor, or an anchor inserted) are upserted; an upsert
 *    updates the row it conflicts with whatever the snapshot. No delete is applied here: a delete's rows
 *    come from the snapshot, which may predate a commit that released a lock this statement then waited for
 *    (a commit with deletes goes to the function, whose statement after the locks takes a fresh snapshot).
 * 4. Their touched keys are appended to the change log (as hex, as the function does) and announced, and
 *    the log is pruned every 256th change. The announcement is the sequence number, a tab and the keys as
 *    `notifiedKey` names them, when that fits in `maxNotifyPayloadBytes` (else the number alone, as for
 *    the function): a feed of an older version takes a payload without a space for one without keys and
 *    reads the log, which stays correct.
 */
function appendStatement({ schema, channel, lockNamespace: namespace }: SchemaNames): string {
  const locks = commitLocks(namespace);
  return `with locked as materialized (
  select ${locks.shared}, ${locks.keys('unnest($1::text[])')}
), listed as materialized (
  select k, decode(k, 'hex') as key, v, g, a, n
    from unnest($1::text[],
                array(select v from json_array_elements_text($2::json) with ordinality as e(v, i) order by i),
                $3::integer[], $4::boolean[],
                array(select n from json_array_elements_text($5::json) with ordinality as e(n, i) order by i))
      as r(k, v, g, a, n), locked
), anchored as (
  insert into ${schema}.entries (key, value) select key, v from listed where a
    on conflict do nothing returning key
), held as (
  select g from listed group by g having not bool_or(a)
  union all
  select listed.g from listed join anchored using (key) where listed.a
), upserted as (
  insert into ${schema}.entries (key, value) select key, v from listed where not a and g in (select g from held)
    on conflict (key) do update set value = excluded.value
), touched as (
  select string_agg(k, ',' order by g) as list, string_agg(n, ',' order by g) as names
    from listed where g in (select g from held)
), appended as (
  insert into ${schema}.changes (keys) select list from touched where list is not null returning seq
)
select (select string_agg(g::text, ',' order by g) from held) as held,
  (select seq from appended, touched
    where ${announce('seq', 'touched.names', channel, 'tab')} is not null and ${pruneEvery256('seq', schema)}) as seq`;
}

/**
 * The append statement of a commit of one key, put by the one group whose anchor it is (a lone engine step):
 * the same locks, insert, change and announcement as `appendStatement`, with the key's hex, its encoded
 * value and its notified name as plain parameters. The general statement's arrays and JSON, the joins that
 * map rows back to groups and the materialised steps between them cost a lone step about as much server
 * time as the insert itself (measured: bench/README.md); this one is planned as a few nodes.
 */
function appendOneStatement({ schema, channel, lockNamespace: namespace }: SchemaNames): string {
  const locks = commitLocks(namespace);
  return `with locked as materialized (
  select ${locks.shared}, ${locks.key('$1')}
), anchored as (
  insert into ${schema}.entries (key, value) select decode($1, 'hex'), $2::text from locked
    on conflict do nothing returning key
), appended as (
  insert into ${schema}.changes (keys) select $1 from anchored returning seq
)
select (select '0' from anchored) as held,
  (select seq from appended
    where ${announce('seq', '$3::text', channel, 'tab')} is not null and ${pruneEvery256('seq', schema)}) as seq`;
}

/**
 * The `pg_notify` call announcing change `seq` with its `touched` keys when they fit (see the feed): after a
 * space the keys in hex (the commit function), after a tab as `notifiedKey` names them (the append
 * statements).
 */
function announce(seq: string, touched: string, channel: string, separator: ' ' | 'tab'): string {
  return (
    `pg_notify('${channel}', case when octet_length(${touched}) <= ${maxNotifyPayloadBytes} ` +
    `then ${seq} || ${separator === 'tab' ? "E'\\t'" : "' '"} || ${touched} else ${seq}::text end)`
  );
}

/** True, after pruning the change log when `seq` is a multiple of 256 (the statements' form of step 4). */
function pruneEvery256(seq: string, schema: string): string {
  return `case when ${seq} % 256 = 0 then ${schema}.prune_changes(${seq}) is not null else true end`;
}

function pruneFunction({ schema }: SchemaNames): string {
  return `
create or replace function ${schema}.prune_changes(newest bigint) returns void
language plpgsql volatile
as $prune$
declare
  keep bigint;
begin
  select value::bigint into keep from ${schema}.meta where name = 'change_log_rows';
  if newest - keep > 0 then
    delete from ${schema}.changes where seq <= newest - keep;
    update ${schema}.meta set value = greatest(value::bigint, newest - keep)::text
      where name = 'pruned_through';
  end if;
end
$prune$;`;
}

/**
 * The script that creates (or upgrades) the schema: one implicit transaction, serialised by an advisory
 * lock, that re-checks the version under the lock and raises `schema-too-new` (SQLSTATE P0001, message
 * starting `shuttle-schema-too-new:`) rather than touch a newer schema.
 *
 * Versions: 1 created the tables and the commit function; 2 replaced the commit function only (same
 * tables, same request: a version 1 adapter still running keeps working, and a new one refuses to open).
 */
export function migrationScript(names: SchemaNames): string {
  const { schema, lockNamespace: namespace } = names;
  return `
select pg_advisory_xact_lock(${namespace}, 1);
create schema if not exists ${schema};
create table if not exists ${schema}.meta (name text primary key, value text not null);
do $migrate$
declare
  found_version integer;
begin
  select value::integer into found_version from ${schema}.meta where name = 'schema_version';
  if found_version > ${schemaVersion} then
    raise exception 'shuttle-schema-too-new:%', found_version;
  end if;
  if found_version is null then
    create table ${schema}.entries (key bytea primary key, value text not null) with (fillfactor = 80);
    -- A row of up to a page stays as it is: a group commit's keys pass 2 kB, and compressing them cost every
    -- commit CPU to save disk for rows that are pruned soon (docs/postgres.md).
    create table ${schema}.changes (
      seq bigserial primary key,
      keys text not null,
      at timestamptz not null default now()
    ) with (toast_tuple_target = 8160);
    insert into ${schema}.meta (name, value) values
      ('schema_version', '${schemaVersion}'),
      ('change_log_rows', '${defaultChangeLogRows}'),
      ('pruned_through', '0');
    execute ${dollarQuote(pruneFunction(names))};
  end if;
  if found_version is distinct from ${schemaVersion} then
    -- version 1 → 2: the same tables; the commit function checks independent groups in one statement
    execute ${dollarQuote(commitFunction(names))};
    update ${schema}.meta set value = '${schemaVersion}' where name = 'schema_version';
  end if;
end
$migrate$;`;
}

/** `text` as a dollar-quoted SQL string literal. */
function dollarQuote(text: string): string {
  if (text.includes('$body$')) throw new Error('a quoted body must not contain $body$');
  return `$body$${text}$body$`;
}

/** The message prefix the migration raises with when it meets a newer schema. */
export const schemaTooNewMarker = 'shuttle-schema-too-new:';

/** Reads the server's settings and whether the schema exists, without writing anything. */
export function probeStatement({ schema }: SchemaNames): string {
  return `select current_setting('server_encoding') as encoding,
    current_setting('server_version_num')::integer as server_version,
    to_regclass('${schema}.meta') is not null as has_meta`;
}

export function versionStatement({ schema }: SchemaNames): string {
  return `select value from ${schema}.meta where name = 'schema_version'`;
}

/** The statements of the data path. */
export function statements(names: SchemaNames) {
  const { schema } = names;
  return {
    commit: `select ${schema}.commit($1::jsonb) as results`,
    /** The engine's step without the function; see `appendStatement`. */
    append: appendStatement(names),
    /** A lone step (one anchored key); see `appendOneStatement`. */
    appendOne: appendOneStatement(names),
    get: `select value from ${schema}.entries where key = decode($1, 'hex')`,
    getMany:
      `select encode(key, 'hex') as key, value from ${schema}.entries where key = any(array(` +
      `select decode(k, 'hex') from unnest(string_to_array($1, ',')) k))`,
    /** A page of a scan; see `scanStatement`. */
    scan: (lowerOpen: boolean, bounded: boolean, reverse: boolean) =>
      `select key, value from ${schema}.entries where key ${lowerOpen ? '>' : '>='} decode($1, 'hex')` +
      (bounded ? ` and key < decode($2, 'hex')` : ` and $2::text is null`) +
      ` order by key ${reverse ? 'desc' : 'asc'} limit $3`,
    /**
     * The change feed's read: the changes after `$1` or among the sequence numbers `$2` (comma-separated),
     * at most `$3` of them, with their keys only when `$4`; and, from the same snapshot, its xmin and xmax
     * and how far the log was pruned.
     */
    changes:
      `select pg_snapshot_xmin(pg_current_snapshot())::text as xmin, ` +
      `pg_snapshot_xmax(pg_current_snapshot())::text as xmax, ` +
      `(select value from ${schema}.meta where name = 'pruned_through') as pruned_through, ` +
      `coalesce((select json_agg(json_build_array(seq, case when $4::boolean then keys end) order by seq)::text ` +
      // Two index probes, not one OR: with the OR the planner walked the index in order from its start.
      `from ((select seq, keys from ${schema}.changes where seq > $1::bigint order by seq limit $3) ` +
      `union all (select seq, keys from ${schema}.changes where seq = any(string_to_array($2, ',')::bigint[]) ` +
      `and seq <= $1::bigint) order by seq limit $3) page), '[]') as changes`,
    /** The newest sequence numbers present (the feed's starting point). */
    newestChanges:
      `select pg_snapshot_xmax(pg_current_snapshot())::text as xmax, ` +
      `coalesce((select json_agg(seq order by seq)::text from (select seq from ${schema}.changes ` +
      `order by seq desc limit $1) newest), '[]') as seqs`,
  };
}
