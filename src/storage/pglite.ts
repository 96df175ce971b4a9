/**
 * PGlite (PostgreSQL compiled to WebAssembly, embedded in this process) as a queryable for
 * `PostgresStorage` (Node only). Loaded on demand by `PostgresStorage.embedded` and `fromPglite`, so a
 * process that talks to a real server never loads the WebAssembly.
 *
 * PGlite is one single-user PostgreSQL backend: it runs one statement at a time for this process, so every
 * commit function call is trivially isolated, and LISTEN/NOTIFY reach only listeners of the same instance.
 * It serves one process: two processes must never open the same data folder.
 */

import { PGlite } from '@electric-sql/pglite';
import type { ListenHandlers, SqlListener, SqlQueryable, SqlRow } from './postgres-driver';

/**
 * The parts of a PGlite instance the store uses: a `PGlite` of @electric-sql/pglite is one. Declared here so
 * that the public API names no PGlite type (whose declarations need DOM and Emscripten typings).
 */
export type PgliteDatabase = {
  readonly dataDir?: string | undefined;
  readonly closed: boolean;
  query<T>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  exec(sql: string): Promise<unknown>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
};

export class PgliteQueryable implements SqlQueryable {
  readonly description: string;
  readonly durable: boolean;

  /** `owns`: whether `close()` closes the PGlite instance. */
  constructor(
    private readonly database: PgliteDatabase,
    private readonly owns: boolean,
  ) {
    const dataDir = database.dataDir;
    const inMemory = dataDir === undefined || dataDir === '' || dataDir.startsWith('memory://');
    this.durable = !inMemory;
    this.description = inMemory ? 'PGlite in memory' : `PGlite in ${dataDir}`;
  }

  async query(text: string, params: readonly (string | null)[]): Promise<SqlRow[]> {
    const result = await this.database.query<SqlRow>(text, [...params]);
    return result.rows;
  }

  async script(sql: string): Promise<void> {
    await this.database.exec(sql);
  }

  async listen(channel: string, handlers: ListenHandlers): Promise<SqlListener> {
    let closed = false;
    const unlisten = await this.database.listen(channel, (payload) => {
      if (!closed) handlers.notify(payload);
    });
    return {
      query: (text, params) => this.query(text, params),
      close: async () => {
        if (closed) return;
        closed = true;
        if (!this.database.closed) await unlisten().catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    if (this.owns && !this.database.closed) await this.database.close();
  }
}

/** Starts PGlite in `dataDir` (created if missing) or in memory, owned by the returned queryable. */
export async function openPglite(dataDir: string | undefined): Promise<PgliteQueryable> {
  const database = await PGlite.create(dataDir === undefined ? {} : { dataDir });
  return new PgliteQueryable(database, true);
}
