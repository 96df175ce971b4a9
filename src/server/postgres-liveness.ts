/**
 * The liveness oracle of engines on PostgreSQL: the server's counterpart of the studio's Web Locks.
 *
 * Each engine holds a session-level advisory lock, keyed by its id, on a connection of its own for its whole
 * life (`hold`). PostgreSQL releases a session lock the moment its connection ends — a process killed with
 * `kill -9` closes its socket, and the server drops the lock at once — so another engine asking `isDead`
 * learns of the death within milliseconds instead of waiting for the claim TTL. A host that vanishes from the
 * network closes nothing: the lock connection therefore sets TCP keepalives (and a user timeout) on the
 * server side, so the server notices the silent peer within a few seconds — well within the claim TTL — and
 * releases its lock.
 *
 * Guarantees:
 * - `isDead(engineId)` is true only when the engine is certainly gone: it registered with this oracle (a row
 *   in `<schema>.engine_liveness`, written when it first took its lock) and no connection holds its lock now.
 *   An engine that never registered (one running without this oracle) is never reported dead: its claims
 *   expire by their TTL, as they would anywhere else.
 * - The oracle only makes takeover earlier; the epoch fence stays the only safety mechanism. A process whose
 *   lock connection dropped (a database restart, a network cut) counts as dead to the others until it takes
 *   its lock again (it retries every second): its workflows may move meanwhile, and its late writes are
 *   refused.
 * - Lock keys are 64-bit hashes of the engine id (`hashtextextended`); ids are random UUIDs, so two engines
 *   sharing a key is not a practical concern (if it happened, the second would run without this oracle and
 *   say so through `onProblem`).
 */
import pg from 'pg';
import type { EngineLiveness } from '../engine';

/** Options of `PostgresLiveness`. */
export type PostgresLivenessOptions = {
  /** libpq connection string of the database the engines share. */
  connectionString: string;
  /** Schema holding the registry table (the store's schema). Default `shuttle`. */
  schema?: string;
  /**
   * How long the server waits before probing a silent lock connection, and between probes, in seconds; it
   * gives up after `keepaliveCount` unanswered probes. Default 2, 1, 3: a vanished host's lock is released
   * after about 5 s.
   */
  keepaliveIdleSeconds?: number;
  keepaliveIntervalSeconds?: number;
  keepaliveCount?: number;
  /** Told when the oracle cannot do its job for a while (lock connection lost, a key collision). */
  onProblem?: (message: string) => void;
};

const identifier = /^[a-z_][a-z0-9_]{0,39}$/;

/** The key of an engine's lock, split as `pg_locks` shows a bigint advisory lock (classid, objid). */
const lockKeySql = `hashtextextended('shuttle-engine:' || $1, 0)`;

export class PostgresLiveness implements EngineLiveness {
  /** A dropped lock connection looks like a dead process: a takeover leaves the engine a notice. */
  readonly deathIsFinal = false;
  readonly #options: PostgresLivenessOptions;
  readonly #pool: pg.Pool;
  readonly #table: string;
  #ready: Promise<void> | null = null;
  #closed = false;

  constructor(options: PostgresLivenessOptions) {
    const schema = options.schema ?? 'shuttle';
    if (!identifier.test(schema))
      throw new TypeError(`PostgresLiveness: schema must be a lower-case SQL identifier; got '${schema}'.`);
    this.#options = options;
    this.#table = `"${schema}".engine_liveness`;
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: 2,
      application_name: 'shuttle:liveness',
      keepAlive: true,
    });
    this.#pool.on('error', () => undefined); // idle clients dying is reported by the queries that need them
  }

  #ensureTable(): Promise<void> {
    this.#ready ??= this.#pool
      // One statement list, one implicit transaction: the lock serialises processes creating the table at
      // once (a bare CREATE TABLE IF NOT EXISTS can fail on a concurrent twin).
      .query(
        `SELECT pg_advisory_xact_lock(hashtext('shuttle-engine-liveness-table'));
         CREATE TABLE IF NOT EXISTS ${this.#table} (engine_id text PRIMARY KEY, registered_at timestamptz NOT NULL DEFAULT now())`,
      )
      .then(() => undefined)
      .catch((error: unknown) => {
        this.#ready = null;
        throw error;
      });
    return this.#ready;
  }

  /**
   * Takes the engine's lock on a connection of its own and keeps it until the returned function is called
   * (or the process dies). If the connection drops, the lock is taken again on a new one, every second
   * until it works.
   */
  async hold(engineId: string): Promise<() => void> {
    await this.#ensureTable();
    await this.#pool.query(`INSERT INTO ${this.#table} (engine_id) VALUES ($1) ON CONFLICT DO NOTHING`, [
      engineId,
    ]);
    let client: pg.Client | null = null;
    let released = false;
    let retry: ReturnType<typeof setTimeout> | null = null;
    const connect = async (): Promise<void> => {
      const next = new pg.Client({
        connectionString: this.#options.connectionString,
        application_name: `shuttle:lock:${engineId.slice(0, 40)}`,
        keepAlive: true,
        keepAliveInitialDelayMillis: 1_000,
      });
      next.on('error', () => undefined); // 'end' below reconnects
      await next.connect();
      const idle = this.#options.keepaliveIdleSeconds ?? 2;
      const interval = this.#options.keepaliveIntervalSeconds ?? 1;
      const count = this.#options.keepaliveCount ?? 3;
      await next.query(
        `SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false),
                set_config('tcp_keepalives_count', $3, false), set_config('tcp_user_timeout', $4, false)`,
        [String(idle), String(interval), String(count), String((idle + interval * count) * 1000)],
      );
      const { rows } = await next.query<{ locked: boolean }>(
        `SELECT pg_try_advisory_lock(${lockKeySql}) AS locked`,
        [engineId],
      );
      if (!rows[0]?.locked)
        this.#options.onProblem?.(
          `Engine ${engineId}: its liveness lock is held by another connection (a key collision, or a second process with the same engine id); other engines will see it die only by its claim TTL.`,
        );
      if (released) {
        await next.end().catch(() => undefined);
        return;
      }
      client = next;
      next.once('end', () => {
        if (client === next) client = null;
        if (!released && !this.#closed) {
          this.#options.onProblem?.(
            `Engine ${engineId}: the connection holding its liveness lock ended; taking the lock again.`,
          );
          schedule();
        }
      });
    };
    const schedule = () => {
      if (retry !== null || released) return;
      retry = setTimeout(() => {
        retry = null;
        connect().catch(() => schedule());
      }, 1_000);
      retry.unref?.();
    };
    await connect();
    return () => {
      released = true;
      if (retry !== null) clearTimeout(retry);
      const current = client as pg.Client | null;
      client = null;
      void current?.end().catch(() => undefined);
    };
  }

  /** True only when `engineId` registered with this oracle and no connection holds its lock now. */
  async isDead(engineId: string): Promise<boolean> {
    const { rows } = await this.#pool.query<{ registered: boolean; locked: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#table} WHERE engine_id = $1) AS registered,
              EXISTS (SELECT 1 FROM pg_locks l, (SELECT ${lockKeySql} AS k) key
                       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                         AND l.classid = ((key.k >> 32) & 4294967295)::oid
                         AND l.objid = (key.k & 4294967295)::oid) AS locked`,
      [engineId],
    );
    const row = rows[0];
    return !!row && row.registered && !row.locked;
  }

  /** Ids of the engines whose lock is held now (for views of the fleet); null when it cannot be read. */
  async liveEngineIds(): Promise<ReadonlySet<string> | null> {
    try {
      const { rows } = await this.#pool.query<{ engine_id: string }>(
        `SELECT r.engine_id FROM ${this.#table} r
          WHERE EXISTS (SELECT 1 FROM pg_locks l, (SELECT hashtextextended('shuttle-engine:' || r.engine_id, 0) AS k) key
                         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                           AND l.classid = ((key.k >> 32) & 4294967295)::oid
                           AND l.objid = (key.k & 4294967295)::oid)`,
      );
      return new Set(rows.map((row) => row.engine_id));
    } catch {
      return null;
    }
  }

  /** Forgets engines registered more than `olderThanMs` ago whose lock nobody holds. */
  async prune(olderThanMs: number): Promise<number> {
    const live = await this.liveEngineIds();
    if (!live) return 0;
    const { rowCount } = await this.#pool.query(
      `DELETE FROM ${this.#table} WHERE registered_at < now() - make_interval(secs => $1) AND NOT (engine_id = ANY($2))`,
      [olderThanMs / 1000, [...live]],
    );
    return rowCount ?? 0;
  }

  /** Closes the oracle's own pool (locks held through `hold` are released by their release functions). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#pool.end().catch(() => undefined);
  }
}
