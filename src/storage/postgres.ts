/**
 * `PostgresStorage`: the storage contract over PostgreSQL (Node only; never re-exported from index.ts, which
 * the browser bundle imports). One adapter, two back ends behind a small queryable abstraction:
 * - a PostgreSQL server (13 or newer) through node-postgres: `PostgresStorage.open({ connectionString })`;
 * - PGlite, PostgreSQL compiled to WebAssembly and embedded in this process, for a Node process without a
 *   database server: `PostgresStorage.embedded({ dataDir })`.
 *
 * Guarantees:
 * - Every commit (`batch`, `conditionalBatch`, `commitGroups`) is one statement, one round trip in
 *   autocommit — a call of a PL/pgSQL function, or for the engine's steps the append statement that does the
 *   same for their shape: it locks every key it reads or writes (transaction-scoped advisory locks, in a
 *   fixed order), checks each group's conditions exactly (string equality) against the state after the
 *   earlier groups, applies the groups that hold and notifies listeners, atomically. Two commits that both
 *   expect a key absent cannot both succeed, whichever connections or processes they come from.
 * - Input is validated (validation.ts) before anything is sent, so a rejected call writes nothing.
 * - `scan` orders keys exactly like JavaScript strings (UTF-16 code units): keys are stored as UTF-16BE
 *   bytes, and a page is one statement, so one snapshot.
 * - `watch` reports commits by anyone sharing the schema, after they are visible, also those made while its
 *   connection was down (see postgres-feed.ts).
 * - `open` creates the schema, or upgrades an older one; it refuses a schema of a newer version with a
 *   `PostgresSchemaVersionError` and writes nothing.
 * - Failures reject with a `StorageError` whose message says what happened and what to do; after `close()`
 *   every call rejects with code `closed`.
 *
 * The design is described in docs/postgres.md.
 */

import pg from 'pg';
import { StorageError, isStorageError } from './errors';
import { scanRange } from './key-range';
import {
  classifySqlError,
  PgQueryable,
  type SqlListener,
  type SqlQueryable,
  type SqlRow,
} from './postgres-driver';
import { PostgresChangeFeed } from './postgres-feed';
import type { PgliteDatabase } from './pglite';
import {
  appendCommit,
  commitRequest,
  decodeKeyBytes,
  decodeValue,
  encodeKey,
  migrationScript,
  probeStatement,
  schemaNamePattern,
  schemaNames,
  schemaTooNewMarker,
  schemaVersion,
  statements,
  versionStatement,
  type SchemaNames,
} from './postgres-sql';
import type {
  CommitGroup,
  Condition,
  Entry,
  Operation,
  ScanOptions,
  Storage,
  StorageCapabilities,
  StorageUsage,
} from './types';
import {
  resolveMaxValueBytes,
  validateBatch,
  validateCommitGroups,
  validateConditionalBatch,
  validateKey,
  validateReadKeys,
  validateScan,
  type ValidationLimits,
} from './validation';

/** Options shared by every way of opening a `PostgresStorage`. */
export type PostgresStorageCommonOptions = {
  /**
   * The PostgreSQL schema holding the store's tables and functions; several stores can share a database
   * under different schemas. A lower-case SQL identifier of at most 40 characters. Default `shuttle`.
   * @example 'shuttle_staging'
   */
  schema?: string;
  /** Largest value accepted, in UTF-8 bytes. Default `storageLimits.defaultMaxValueBytes` (1 MiB). */
  maxValueBytes?: number;
  /**
   * How often the change feed re-reads the change log even without a notification, in milliseconds: it
   * bounds how long a silently dead listening connection goes unnoticed. Default 5000.
   */
  changeFeedHeartbeatMs?: number;
};

/** How to reach a PostgreSQL server: give `connectionString` or `pool`. */
export type PostgresStorageOptions = PostgresStorageCommonOptions & {
  /**
   * libpq-style connection string; the adapter creates (and on `close()` ends) its own pool.
   * @example 'postgres://shuttle:secret@db.internal:5432/shuttle'
   */
  connectionString?: string;
  /**
   * A node-postgres pool to run on instead; the adapter does not end it on `close()`. Its options (and its
   * `statement_timeout`) are used as they are; the change feed opens one extra connection with the same
   * options (which also carries commits while it is idle). Do not put it behind a transaction-pooling proxy:
   * the adapter uses prepared statements and LISTEN.
   */
  pool?: pg.Pool;
  /**
   * Most connections the adapter's own pool opens (the change feed uses one more). Default 10. Ignored with
   * `pool`.
   */
  maxConnections?: number;
  /**
   * Longest a statement may run before the server cancels it, in milliseconds (PostgreSQL's
   * `statement_timeout`); a cancelled commit is rolled back and rejects. Default 30000. Ignored with `pool`.
   */
  statementTimeoutMs?: number;
  /** Longest to wait for a new connection, in milliseconds. Default 10000. Ignored with `pool`. */
  connectTimeoutMs?: number;
};

/** Options of `PostgresStorage.embedded` (PGlite). */
export type EmbeddedPostgresOptions = PostgresStorageCommonOptions & {
  /**
   * Folder holding the database files, created if missing; data survives the process. Default: in memory
   * (nothing survives, and `capabilities.durable` is false). One process at a time may open a folder.
   * @example '.shuttle/db'
   */
  dataDir?: string;
};

/** The schema is of a newer version than this adapter knows: nothing was written. */
export class PostgresSchemaVersionError extends StorageError {
  /** The version found in the database. */
  readonly foundVersion: number;
  /** The newest version this adapter knows. */
  readonly supportedVersion: number;
  readonly schema: string;

  constructor(schema: string, where: string, foundVersion: number) {
    super(
      'open',
      'version-change',
      `schema "${schema}" in ${where} is at version ${foundVersion}, but this Shuttle knows only versions up ` +
        `to ${schemaVersion}: a newer Shuttle created or upgraded it. Nothing was written. Upgrade Shuttle ` +
        'to open it, or give another schema.',
    );
    this.foundVersion = foundVersion;
    this.supportedVersion = schemaVersion;
    this.schema = schema;
  }
}

const writeOperations = new Set(['batch', 'conditionalBatch', 'commitGroups']);
const scanPageForFeed = 1000;

/** Point reads gathered into one statement (see `PostgresStorage.pointRead`). */
type PendingReads = {
  /** Every key asked for, as hex, once. */
  keys: Set<string>;
  readers: {
    operation: 'get' | 'getMany';
    keys: string[];
    resolve: (values: (string | null)[]) => void;
    reject: (error: unknown) => void;
  }[];
};

/** Most distinct keys one gathered read sends; a larger burst is sent as several statements. */
const maxKeysPerRead = 1000;

/**
 * Storage on PostgreSQL or PGlite; create it with `open`, `embedded` or `fromPglite`.
 *
 * @example
 * const storage = await PostgresStorage.open({ connectionString: process.env.DATABASE_URL });
 * const engine = await createEngine({ storage, workflows: [order] });
 *
 * @example
 * // No database server: PostgreSQL embedded in this process, data in a folder.
 * const storage = await PostgresStorage.embedded({ dataDir: '.shuttle/db' });
 */
export class PostgresStorage implements Storage {
  readonly capabilities: StorageCapabilities;
  /** The schema this store lives in. */
  readonly schema: string;
  private readonly queryable: SqlQueryable;
  private readonly names: SchemaNames;
  private readonly sql: ReturnType<typeof statements>;
  private readonly limits: ValidationLimits;
  private readonly feed: PostgresChangeFeed;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The point reads asked for in this turn of the event loop, not yet sent (see `pointRead`). */
  private pendingReads: PendingReads | undefined;

  private constructor(queryable: SqlQueryable, names: SchemaNames, options: PostgresStorageCommonOptions) {
    this.queryable = queryable;
    this.names = names;
    this.schema = names.schema;
    this.sql = statements(names);
    this.limits = { maxValueBytes: resolveMaxValueBytes(options.maxValueBytes) };
    this.capabilities = {
      conditionalBatch: true,
      durable: queryable.durable,
      changeFeed: true,
      groupCommit: true,
    };
    this.feed = new PostgresChangeFeed({
      queryable,
      names,
      heartbeatMs: options.changeFeedHeartbeatMs ?? 5000,
      scanKeys: (prefix) => this.scanKeys(prefix),
    });
  }

  /**
   * Connects to a PostgreSQL server, creates the schema (or upgrades an older one) and starts the change
   * feed's listening connection. Rejects with a `StorageError` (operation `open`) saying what to do when the
   * server is unreachable, refuses the login or is too old, and with a `PostgresSchemaVersionError` when the
   * schema is newer than this adapter.
   */
  static async open(options: PostgresStorageOptions): Promise<PostgresStorage> {
    resolveSchema(options.schema);
    resolveMaxValueBytes(options.maxValueBytes);
    if ((options.connectionString === undefined) === (options.pool === undefined)) {
      throw new StorageError(
        'open',
        'invalid-input',
        'give exactly one of connectionString (e.g. "postgres://user@host:5432/db") and pool.',
      );
    }
    const pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: options.maxConnections ?? 10,
        statement_timeout: options.statementTimeoutMs ?? 30_000,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
        keepAlive: true,
        application_name: 'shuttle',
      });
    return PostgresStorage.openOn(new PgQueryable({ pool, ownsPool: options.pool === undefined }), options);
  }

  /**
   * Opens a store on PGlite embedded in this process (no server): in memory, or in `dataDir`. The first
   * start of a new folder or of an in-memory database runs `initdb` inside WebAssembly and takes several
   * seconds. PGlite serves only this process: two processes must not open one folder, and every
   * `PostgresStorage` of this process sharing the data must share one PGlite instance (`fromPglite`).
   */
  static async embedded(options: EmbeddedPostgresOptions = {}): Promise<PostgresStorage> {
    resolveSchema(options.schema);
    resolveMaxValueBytes(options.maxValueBytes);
    const { openPglite } = await import('./pglite');
    const queryable = await openPglite(options.dataDir).catch((error: unknown) => {
      throw new StorageError(
        'open',
        'unknown',
        `PGlite could not start${options.dataDir ? ` in ${options.dataDir}` : ''}: ${errorMessage(error)}. ` +
          'If another process has the folder open, stop it first.',
        { cause: error },
      );
    });
    return PostgresStorage.openOn(queryable, options);
  }

  /**
   * Opens a store on a PGlite instance you created (and keep: `close()` leaves it open). Several stores may
   * share one instance, e.g. a store and its peers in one process.
   */
  static async fromPglite(
    database: PgliteDatabase,
    options: PostgresStorageCommonOptions = {},
  ): Promise<PostgresStorage> {
    const { PgliteQueryable } = await import('./pglite');
    return PostgresStorage.openOn(new PgliteQueryable(database, false), options);
  }

  /** Opens a store on any queryable (see postgres-driver.ts); closes the queryable if opening fails. */
  static async openOn(
    queryable: SqlQueryable,
    options: PostgresStorageCommonOptions,
  ): Promise<PostgresStorage> {
    let storage: PostgresStorage | undefined;
    try {
      const names = resolveSchema(options.schema);
      await prepareSchema(queryable, names);
      storage = new PostgresStorage(queryable, names, options);
      await storage.feed.start();
      return storage;
    } catch (error) {
      await (storage ? storage.close() : queryable.close()).catch(() => undefined);
      if (isStorageError(error)) throw error;
      throw mapError('open', error, queryable, resolveSchemaName(options.schema));
    }
  }

  async get(key: string): Promise<string | null> {
    this.assertOpen('get');
    validateKey('get', key, 'the key');
    const [value] = await this.pointRead('get', [encodeKey(key)]);
    return value!;
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    this.assertOpen('getMany');
    validateReadKeys('getMany', keys);
    if (keys.length === 0) return [];
    return this.pointRead('getMany', keys.map(encodeKey));
  }

  /**
   * Point reads (`get`, `getMany`) asked for together — in one stretch of code, or in the microtasks already
   * queued when the first was asked — are sent as one statement: a burst of reads (fifty `result()` calls, a
   * page of rows to describe) costs one round trip and one pooled connection instead of one each (each new
   * connection is a server process to start).
   * A read is only ever sent later than it was asked for, never earlier, so it still sees every commit that
   * had landed when it was called. Each caller gets its own keys' values, or the batch's error with its own
   * operation's name.
   */
  private pointRead(operation: 'get' | 'getMany', encoded: string[]): Promise<(string | null)[]> {
    return new Promise((resolve, reject) => {
      let batch = this.pendingReads;
      if (!batch || batch.keys.size + encoded.length > maxKeysPerRead) {
        batch = this.pendingReads = { keys: new Set(), readers: [] };
        const flushing = batch;
        queueMicrotask(() => void this.flushReads(flushing));
      }
      for (const key of encoded) batch.keys.add(key);
      batch.readers.push({ operation, keys: encoded, resolve, reject });
    });
  }

  private async flushReads(batch: PendingReads): Promise<void> {
    if (this.pendingReads === batch) this.pendingReads = undefined;
    const keys = [...batch.keys];
    let found: Map<string, string>;
    try {
      const rows: SqlRow[] =
        keys.length === 1
          ? (await this.queryable.query(this.sql.get, keys)).map((row) => ({
              key: keys[0],
              value: row.value,
            }))
          : await this.queryable.query(this.sql.getMany, [keys.join(',')]);
      found = new Map(rows.map((row) => [String(row.key), decodeValue(String(row.value))]));
    } catch (error) {
      for (const reader of batch.readers) reader.reject(this.failure(reader.operation, error));
      return;
    }
    for (const reader of batch.readers) reader.resolve(reader.keys.map((key) => found.get(key) ?? null));
  }

  async scan(prefix: string, options: ScanOptions = {}): Promise<Entry[]> {
    this.assertOpen('scan');
    validateScan('scan', prefix, options);
    const { after, limit, reverse = false } = options;
    const range = scanRange(prefix, after, reverse);
    if (!range || limit === 0) return [];
    const bounded = range.upper !== undefined;
    const rows = await this.run(
      'scan',
      this.sql.scan(range.lowerOpen, bounded, reverse),
      [
        encodeKey(range.lower),
        range.upper === undefined ? null : encodeKey(range.upper),
        limit === undefined ? null : String(limit),
      ],
      `scan:${Number(range.lowerOpen)}${Number(bounded)}${Number(reverse)}`,
    );
    return rows.map((row) => ({
      key: decodeKeyBytes(row.key as Uint8Array),
      value: decodeValue(String(row.value)),
    }));
  }

  async batch(operations: readonly Operation[]): Promise<void> {
    this.assertOpen('batch');
    validateBatch('batch', operations, this.limits);
    await this.commit('batch', [{ conditions: [], operations }]);
  }

  async conditionalBatch(
    conditions: readonly Condition[],
    operations: readonly Operation[],
  ): Promise<boolean> {
    this.assertOpen('conditionalBatch');
    validateConditionalBatch('conditionalBatch', conditions, operations, this.limits);
    const [applied] = await this.commit('conditionalBatch', [{ conditions, operations }]);
    return applied === true;
  }

  async commitGroups(groups: readonly CommitGroup[]): Promise<boolean[]> {
    this.assertOpen('commitGroups');
    validateCommitGroups('commitGroups', groups, this.limits);
    return this.commit('commitGroups', groups);
  }

  /**
   * Calls `listener` after commits (by anyone sharing this schema) that touch keys under `prefix`; see
   * postgres-feed.ts for what is guaranteed across dropped connections. Returns the unsubscribe function.
   */
  watch(prefix: string, listener: (keys: string[]) => void): () => void {
    this.assertOpen('watch');
    return this.feed.subscribe(prefix, listener);
  }

  /**
   * Resolves once every commit visible now has been reported to the watchers (the feed reads the change
   * log rather than waiting for notifications). While the feed is reconnecting it resolves at once; the
   * reconnect reports what was missed.
   */
  async syncWatchers(): Promise<void> {
    this.assertOpen('syncWatchers');
    await this.feed.sync();
  }

  /**
   * Whether the change feed's listening connection is up right now. While it is down the feed reconnects
   * by itself and then reports what it missed; this is for diagnostics and tests.
   */
  get changeFeedConnected(): boolean {
    return this.feed.connected;
  }

  /** The size of each table of the store's schema, indexes and TOAST included (`pg_total_relation_size`). */
  async usage(): Promise<StorageUsage> {
    this.assertOpen('usage');
    const rows = await this.run(
      'usage',
      `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
        ORDER BY pg_total_relation_size(c.oid) DESC`,
      [this.schema],
    );
    const parts = rows.map((row) => ({ name: String(row.name), bytes: Number(row.bytes) }));
    return {
      source: `PostgreSQL schema "${this.schema}"`,
      bytes: parts.reduce((sum, part) => sum + part.bytes, 0),
      parts,
    };
  }

  /**
   * Stops the change feed and, when the adapter created it, ends its pool or PGlite instance. Idempotent;
   * later calls reject with code `closed`.
   */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await this.feed.close();
      await this.queryable.close();
    })();
    return this.closing;
  }

  /**
   * One commit: an append statement when the groups are of its shape (the engine's steps), else the groups
   * as a JSON request to the commit function (see postgres-sql.ts). Sent on the change feed's listening
   * session while it carries fewer than two, else on a pooled connection (see `PostgresChangeFeed.withSession`).
   */
  private async commit(operation: string, groups: readonly CommitGroup[]): Promise<boolean[]> {
    if (groups.length === 0) return [];
    if (groups.every((group) => group.conditions.length === 0 && group.operations.length === 0)) {
      return groups.map(() => true);
    }
    const append = appendCommit(groups);
    if (append) {
      // The engine's step, alone or grouped: one prepared statement (see `appendStatement`).
      const [row] = await this.runCommit(
        operation,
        this.sql[append.statement],
        append.params,
        append.statement,
      );
      const held = row?.held;
      if (row === undefined || (held !== null && typeof held !== 'string')) {
        throw new StorageError(
          operation,
          'unknown',
          `the append statement of schema "${this.schema}" returned ${JSON.stringify(row)}; ` +
            `the schema may have been changed by hand.`,
        );
      }
      const holding = new Set(held === null ? [] : held.split(',').map(Number));
      return groups.map((_, index) => holding.has(index));
    }
    const request = JSON.stringify(commitRequest(groups));
    const rows = await this.runCommit(operation, this.sql.commit, [request], 'commit');
    const results = rows[0]?.results;
    if (!Array.isArray(results) || results.length !== groups.length) {
      throw new StorageError(
        operation,
        'unknown',
        `the commit function of schema "${this.schema}" returned ${JSON.stringify(results)} for ` +
          `${groups.length} group(s); the schema may have been changed by hand.`,
      );
    }
    return results.map((result) => result === true);
  }

  /** Every key under `prefix`, page by page, for the change feed's rescans. */
  private async *scanKeys(prefix: string): AsyncIterable<string[]> {
    let after: string | undefined;
    while (!this.closed) {
      const page = await this.scan(prefix, {
        limit: scanPageForFeed,
        ...(after === undefined ? {} : { after }),
      });
      if (page.length === 0) return;
      yield page.map((entry) => entry.key);
      after = page[page.length - 1]?.key;
    }
  }

  /** A commit's statement: on the change feed's listening session when it is free, else on the pool. */
  private runCommit(
    operation: string,
    text: string,
    params: readonly (string | null)[],
    name: string,
  ): Promise<SqlRow[]> {
    return this.feed.withSession((session) => this.run(operation, text, params, name, session));
  }

  private async run(
    operation: string,
    text: string,
    params: readonly (string | null)[],
    name?: string,
    session?: SqlListener,
  ): Promise<SqlRow[]> {
    try {
      return await (session ?? this.queryable).query(
        text,
        params,
        name ? `${this.schema}:${name}` : undefined,
      );
    } catch (error) {
      throw this.failure(operation, error);
    }
  }

  /** The `StorageError` a failed statement of `operation` rejects with. */
  private failure(operation: string, error: unknown): StorageError {
    if (this.closed) {
      return new StorageError(operation, 'closed', `this PostgresStorage was closed during the call.`, {
        cause: error,
      });
    }
    return mapError(operation, error, this.queryable, this.schema);
  }

  private assertOpen(operation: string): void {
    if (this.closed) {
      throw new StorageError(
        operation,
        'closed',
        `this PostgresStorage (${this.queryable.description}, schema ${this.schema}) is closed; open a new one.`,
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Opening

function resolveSchemaName(schema: string | undefined): string {
  return schema ?? 'shuttle';
}

function resolveSchema(schema: string | undefined): SchemaNames {
  const name = resolveSchemaName(schema);
  if (typeof name !== 'string' || !schemaNamePattern.test(name)) {
    throw new StorageError(
      'open',
      'invalid-input',
      `schema must be a lower-case SQL identifier (letters a-z, digits, _; not starting with a digit; at ` +
        `most 40 characters), got ${JSON.stringify(name)}.`,
    );
  }
  return schemaNames(name);
}

/** Checks the server and creates or upgrades the schema; writes nothing to a newer schema. */
async function prepareSchema(queryable: SqlQueryable, names: SchemaNames): Promise<void> {
  const [probe] = await queryable.query(probeStatement(names), []);
  const serverVersion = Number(probe?.server_version);
  if (serverVersion < 130000) {
    throw new StorageError(
      'open',
      'unknown',
      `${queryable.description} runs PostgreSQL ${Math.floor(serverVersion / 10000)}, but Shuttle needs ` +
        'PostgreSQL 13 or newer (for pg_current_snapshot). Upgrade the server.',
    );
  }
  if (probe?.encoding !== 'UTF8') {
    throw new StorageError(
      'open',
      'unknown',
      `${queryable.description} uses the encoding ${String(probe?.encoding)}, but Shuttle stores UTF-8 text. ` +
        "Create the database with ENCODING 'UTF8' (createdb -E UTF8 …).",
    );
  }
  if (probe?.has_meta === true) {
    const [row] = await queryable.query(versionStatement(names), []);
    const found = Number(row?.value);
    if (found > schemaVersion)
      throw new PostgresSchemaVersionError(names.schema, queryable.description, found);
    if (found === schemaVersion) return;
  }
  try {
    await queryable.script(migrationScript(names));
  } catch (error) {
    const message = errorMessage(error);
    const index = message.indexOf(schemaTooNewMarker);
    if (index >= 0) {
      const found = Number.parseInt(message.slice(index + schemaTooNewMarker.length), 10);
      throw new PostgresSchemaVersionError(names.schema, queryable.description, found);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Errors

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A driver error as a `StorageError` whose message says what happened and what to do. */
function mapError(operation: string, error: unknown, queryable: SqlQueryable, schema: string): StorageError {
  if (isStorageError(error)) return error;
  const where = queryable.description;
  const reason = errorMessage(error) || String((error as { code?: unknown }).code ?? 'unknown error');
  const write = writeOperations.has(operation);
  const options = { cause: error };
  switch (classifySqlError(error)) {
    case 'unreachable':
      return new StorageError(
        operation,
        'unknown',
        `cannot reach ${where} (${reason}). Check that the server is running and accepts connections at that ` +
          'address, and that the connection string is right; then retry.' +
          (write && operation !== 'open'
            ? ' If the connection broke during the commit, it may or may not have been applied: read before retrying.'
            : ''),
        options,
      );
    case 'timeout':
      return new StorageError(
        operation,
        'unknown',
        `${where} cancelled the statement after the statement timeout (${reason})` +
          (write ? '; the commit was rolled back, nothing was written' : '') +
          '. The server may be overloaded or blocked by another session; retry, or raise statementTimeoutMs.',
        options,
      );
    case 'authentication':
      return new StorageError(
        operation,
        'unknown',
        `${where} refused the login (${reason}). Check the user and password in the connection string.`,
        options,
      );
    case 'no-database':
      return new StorageError(
        operation,
        'unknown',
        `${where}: ${reason}. Create the database first (CREATE DATABASE …) or fix the connection string.`,
        options,
      );
    case 'too-many-connections':
      return new StorageError(
        operation,
        'unknown',
        `${where} has no free connection slot (${reason}). Lower maxConnections of the adapters sharing ` +
          "it, or raise the server's max_connections.",
        options,
      );
    case 'disk-full':
      return new StorageError(
        operation,
        'quota-exceeded',
        `${where} is out of disk space (${reason})${write ? '; nothing was written' : ''}. Free space on the ` +
          'server, then retry.',
        options,
      );
    case 'schema-missing':
      return new StorageError(
        operation,
        'closed',
        `the tables of schema "${schema}" in ${where} are gone (${reason}): the schema was dropped or changed ` +
          'while this adapter was open. Open a new PostgresStorage to recreate it.',
        options,
      );
    default:
      return new StorageError(operation, 'unknown', `${where}, schema "${schema}": ${reason}`, options);
  }
}
