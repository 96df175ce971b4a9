/**
 * The store of a server process: PostgreSQL when a URL is given (many processes, many hosts), otherwise an
 * embedded PostgreSQL (PGlite) in a folder of the project, for one process.
 *
 * Guarantees:
 * - On PostgreSQL the process also gets the liveness oracle (advisory locks, postgres-liveness.ts), so the
 *   workflows of a process killed with `kill -9` move at once.
 * - The embedded store serves exactly one process, and one store handle in it: a lock file in its folder
 *   names the process that has it open; a second process — or a second open in the same process — is
 *   refused with a message that says what to do (use a PostgreSQL URL), before it touches the data. A lock
 *   file left by a process that died is taken over.
 * - An unreachable database fails with one readable line (no stack), and nothing is written.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Storage } from '../storage/types';
import { PostgresStorage } from '../storage/postgres';
import { PostgresLiveness } from './postgres-liveness';
import { isProcessAlive } from './process-alive';

/** Where a server's store is. */
export type StoreOptions = {
  /** libpq connection string of a PostgreSQL database (e.g. `postgres://user@host:5432/db`). */
  databaseUrl?: string;
  /** Folder of the embedded store, used when there is no `databaseUrl`. Default `.shuttle/db`. */
  dataDir?: string;
  /** The PostgreSQL schema the store lives in. Default `shuttle`. */
  schema?: string;
};

export type OpenedStore = {
  storage: Storage;
  /** The liveness oracle (PostgreSQL only). */
  liveness: PostgresLiveness | null;
  /** The store in words, for logs and the studio's header. */
  label: string;
  /** `postgres` or `embedded`. */
  kind: 'postgres' | 'embedded';
  close(): Promise<void>;
};

/** A configuration or start-up problem, said in one line for a person (the CLI prints it and exits 2). */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

export const defaultDataDir = '.shuttle/db';

/** `postgres://user:secret@host:5432/db` → `PostgreSQL host:5432/db` (never the password). */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get('host') || 'localhost';
    return `PostgreSQL ${host}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname || '/'}`;
  } catch {
    return 'PostgreSQL (unparsable URL)';
  }
}

export async function openStore(options: StoreOptions): Promise<OpenedStore> {
  const schema = options.schema ?? 'shuttle';
  if (options.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(options.databaseUrl))
      throw new StartupError(
        `--database-url must be a PostgreSQL URL like postgres://user@host:5432/database; got '${options.databaseUrl}'.`,
      );
    let storage: PostgresStorage;
    try {
      storage = await PostgresStorage.open({ connectionString: options.databaseUrl, schema });
    } catch (error) {
      throw new StartupError(
        `Could not open the store at ${describeDatabaseUrl(options.databaseUrl)}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const liveness = new PostgresLiveness({ connectionString: options.databaseUrl, schema });
    return {
      storage,
      liveness,
      label: `${describeDatabaseUrl(options.databaseUrl)} (schema ${schema})`,
      kind: 'postgres',
      close: async () => {
        await liveness.close();
        await storage.close();
      },
    };
  }
  const dataDir = resolve(options.dataDir ?? defaultDataDir);
  const unlock = lockEmbedded(dataDir);
  try {
    const storage = await PostgresStorage.embedded({ dataDir, schema });
    return {
      storage,
      liveness: null,
      label: `embedded PostgreSQL (PGlite) in ${dataDir}`,
      kind: 'embedded',
      close: async () => {
        await storage.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw new StartupError(
      `Could not open the embedded store in ${dataDir}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** The embedded folders this process has open (a second PGlite on an open folder would split its data). */
const openHere = new Set<string>();

/**
 * Takes the embedded store's lock file; refuses when a live process holds it, this one included (two
 * embedded instances on one folder would each see only their own writes). Returns the release.
 */
function lockEmbedded(dataDir: string): () => void {
  if (openHere.has(dataDir))
    throw new StartupError(
      `The embedded store in ${dataDir} is already open in this process, and it serves one store handle: give the engines a PostgreSQL database with --database-url postgres://… (shuttle dev starts one for you).`,
    );
  const release = takeLockFile(dataDir);
  openHere.add(dataDir);
  return () => {
    openHere.delete(dataDir);
    release();
  };
}

function takeLockFile(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const lockFile = join(dataDir, 'shuttle.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lockFile, 'utf8').trim());
      if (Number.isSafeInteger(holder) && holder !== process.pid && isProcessAlive(holder))
        throw new StartupError(
          `The embedded store in ${dataDir} is in use by process ${holder}: it serves one process. To run several workers, give every one the same PostgreSQL database with --database-url postgres://… (shuttle dev starts one for you).`,
        );
      rmSync(lockFile, { force: true }); // left by a process that died
    }
  }
  throw new StartupError(`Could not take the lock of the embedded store in ${dataDir}.`);
}
