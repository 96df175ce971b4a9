/**
 * The small "queryable" abstraction `PostgresStorage` runs on, so that one adapter serves both a PostgreSQL
 * server (through node-postgres, `pg`) and PGlite (PostgreSQL in WebAssembly, see pglite.ts) — Node only.
 *
 * Every parameter the adapter sends is a string (or null) and every statement is a single one, so the two
 * drivers behave alike.
 */

import pg from 'pg';

/** A result row: column name to value, as the driver parsed it. */
export type SqlRow = Record<string, unknown>;

/**
 * A session that receives notifications and may run queries; see `SqlQueryable.listen`. Queries asked for
 * while others run are run after them in order, each its own statement (an error ends only its own).
 */
export interface SqlListener {
  query(text: string, params: readonly (string | null)[], name?: string): Promise<SqlRow[]>;
  close(): Promise<void>;
}

export type ListenHandlers = {
  /** A notification on the channel, with its payload. */
  notify(payload: string): void;
  /** The session was lost (not called after `close()`): notifications may have been missed. */
  lost(error: unknown): void;
};

export interface SqlQueryable {
  /** Where the data lives, for messages: "PostgreSQL at 127.0.0.1:5432, database app", "PGlite in memory". */
  readonly description: string;
  /** Whether data survives the process. */
  readonly durable: boolean;
  /** One statement with parameters `$1`…; `name` lets the driver prepare it once per connection. */
  query(text: string, params: readonly (string | null)[], name?: string): Promise<SqlRow[]>;
  /** Several statements without parameters, run as one implicit transaction. */
  script(sql: string): Promise<void>;
  /** Opens a session listening on `channel` (a plain lower-case identifier). */
  listen(channel: string, handlers: ListenHandlers): Promise<SqlListener>;
  /** Releases what this queryable owns (not a pool or database it was handed). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------
// node-postgres

export type PgQueryableOptions = {
  pool: pg.Pool;
  /** Whether `close()` ends the pool. */
  ownsPool: boolean;
};

/** Where a pool connects, for messages (never the password). */
function describePool(pool: pg.Pool): string {
  const options = pool.options as pg.PoolConfig;
  let host = options.host;
  let port = options.port;
  let database = options.database;
  if (options.connectionString) {
    try {
      const url = new URL(options.connectionString);
      host = url.hostname || host;
      port = url.port ? Number(url.port) : port;
      database = decodeURIComponent(url.pathname.replace(/^\//, '')) || database;
    } catch {
      // Not a URL (a key=value string): fall back to the discrete options.
    }
  }
  return `PostgreSQL at ${host ?? process.env.PGHOST ?? 'localhost'}:${port ?? process.env.PGPORT ?? 5432}, database ${database ?? process.env.PGDATABASE ?? '(default)'}`;
}

export class PgQueryable implements SqlQueryable {
  readonly description: string;
  readonly durable = true;
  private readonly pool: pg.Pool;
  private readonly ownsPool: boolean;
  private readonly onIdleError = () => {
    // An idle pooled connection died (server restart, pg_terminate_backend): the pool drops it and the
    // next query opens a new one. Without this handler the error would crash the process.
  };

  constructor({ pool, ownsPool }: PgQueryableOptions) {
    this.pool = pool;
    this.ownsPool = ownsPool;
    this.description = describePool(pool);
    pool.on('error', this.onIdleError);
  }

  async query(text: string, params: readonly (string | null)[], name?: string): Promise<SqlRow[]> {
    const result = await this.pool.query<SqlRow>({
      text,
      values: params as (string | null)[],
      ...(name ? { name } : {}),
    });
    return result.rows;
  }

  async script(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  async listen(channel: string, handlers: ListenHandlers): Promise<SqlListener> {
    const options = this.pool.options as pg.ClientConfig;
    const client = new pg.Client({
      ...options,
      keepAlive: true,
      // Tells the listening session apart in pg_stat_activity.
      application_name: `${options.application_name ?? 'shuttle'}:listen`,
      // The session's queries (the feed's reads and the commits lent to it) are written to the server as
      // soon as they are asked for, each its own implicit transaction with its own Sync: the server runs them
      // in order, and starts the next the moment the one before it is committed instead of a round trip
      // and a turn of this process's event loop later (measured: bench/README.md). An error ends only its
      // own statement.
      pipeline: true,
    });
    let closed = false;
    let lost = false;
    let ready = false; // losing the session matters only once it listens; a failed connect rejects instead
    const onLost = (error: unknown) => {
      if (closed || lost || !ready) return;
      lost = true;
      handlers.lost(error);
      client.end().catch(() => undefined);
    };
    client.on('error', onLost); // also keeps an error on this idle connection from crashing the process
    client.on('end', () => onLost(new Error('the listening connection ended')));
    client.on('notification', (message) => {
      if (!closed && message.channel === channel) handlers.notify(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
    } catch (error) {
      closed = true;
      await client.end().catch(() => undefined);
      throw error;
    }
    ready = true;
    return {
      query: async (text, params, name) => {
        const { rows } = await client.query<SqlRow>({
          text,
          values: params as (string | null)[],
          ...(name ? { name } : {}),
        });
        return rows;
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await client.end().catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.ownsPool) {
      // The handler stays: `end()` resolves before every socket has closed, and a connection terminated by
      // the server in that window reports its error to the (ended) pool.
      await this.pool.end();
      return;
    }
    this.pool.off('error', this.onIdleError);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Errors

/** Node socket errors that mean the server could not be reached or the connection broke. */
const connectionErrorCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT', // a Unix socket path that does not exist
]);

export type SqlErrorKind =
  | 'unreachable' // could not connect, or the connection broke (the server may have done the work)
  | 'timeout' // statement_timeout: the statement was cancelled and rolled back
  | 'authentication'
  | 'no-database'
  | 'too-many-connections'
  | 'disk-full'
  | 'schema-missing' // the adapter's tables or function are gone (schema dropped underneath)
  | 'other';

/** What kind of failure `error` (thrown by either driver) is. */
export function classifySqlError(error: unknown): SqlErrorKind {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code === 'string') {
    if (connectionErrorCodes.has(code)) return 'unreachable';
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')
      return 'unreachable';
    if (code === '57014') return 'timeout';
    if (code === '28P01' || code === '28000') return 'authentication';
    if (code === '3D000') return 'no-database';
    if (code === '53300') return 'too-many-connections';
    if (code === '53100') return 'disk-full';
    if (code === '42P01' || code === '3F000' || code === '42883') return 'schema-missing';
  }
  if (
    /Connection terminated|connection timeout|timeout expired|Client has encountered a connection error/i.test(
      text,
    )
  )
    return 'unreachable';
  return 'other';
}
