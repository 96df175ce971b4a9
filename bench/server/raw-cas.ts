/**
 * The PostgreSQL ceilings the server benchmarks divide by: the same durable work as an engine's commits,
 * done without the engine, measured in the same run on the same server (bench/server.ts).
 *
 * - **One workflow** (`blindWrites`): one row of the engine's record size (about 790 bytes: the commit
 *   record carrying its checkpoint) inserted under a new key per transaction, autocommit, one connection,
 *   back to back — a blind write: no read, no condition. An engine step is at least that: one durable commit
 *   of one record.
 * - **Fifty workflows** (`batchedWrites`): `groupSize` such rows per transaction (one multi-row INSERT),
 *   with two transactions in flight pipelined on one connection (node-postgres `pipeline: true`), as the
 *   engine's group commit sends them on its listening session. `groupSize` is the engine's own steps per
 *   commit in the measurement it is compared with, so the ceiling does the same work per transaction.
 *
 * Both report rows per second and commits per second. `roundTrips` keeps the earlier yardstick (a
 * conditional single-row UPDATE in autocommit on one connection), for continuity in the details only.
 */
import pg from 'pg';

export type Rate = { operations: number; elapsedMs: number; perSecond: number };

/** A ceiling window: rows written and transactions committed in `elapsedMs`. */
export type CeilingRate = Rate & { commits: number; commitsPerSecond: number; groupSize: number };

export function rate(operations: number, elapsedMs: number): Rate {
  return { operations, elapsedMs: Math.round(elapsedMs), perSecond: (operations / elapsedMs) * 1000 };
}

function ceilingRate(rows: number, commits: number, elapsedMs: number, groupSize: number): CeilingRate {
  return {
    ...rate(rows, elapsedMs),
    commits,
    commitsPerSecond: (commits / elapsedMs) * 1000,
    groupSize,
  };
}

const value = (n: number) => String(n).padStart(200, '0');

/** A value of the engine's commit-record size (about 790 bytes of JSON). */
const recordValue = (n: number) => `{"t":[],"n":${n},"c":"${'x'.repeat(760)}"}`;

/** Creates the tables the ceilings write, in the client's current database. */
export async function createCasTable(client: pg.Client): Promise<void> {
  await client.query('CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL)');
  await client.query(`INSERT INTO kv VALUES ('k', $1)`, [value(0)]);
  await client.query('CREATE TABLE log (k text PRIMARY KEY, v text NOT NULL)');
}

/** Compare-and-swaps the row back to back for `durationMs`: the earlier yardstick (details only). */
export async function roundTrips(client: pg.Client, durationMs: number): Promise<Rate> {
  let counter = Number((await client.query<{ v: string }>(`SELECT v FROM kv WHERE k = 'k'`)).rows[0]!.v);
  let done = 0;
  const started = performance.now();
  while (performance.now() - started < durationMs) {
    const next = counter + 1;
    const result = await client.query({
      name: 'raw-cas',
      text: 'UPDATE kv SET v = $1 WHERE k = $2 AND v = $3',
      values: [value(next), 'k', value(counter)],
    });
    if (result.rowCount !== 1) throw new Error('the raw compare-and-swap did not apply');
    counter = next;
    done++;
  }
  return rate(done, performance.now() - started);
}

let keyCounter = 0;
const nextKey = () => `k${process.pid}:${keyCounter++}`;

/** Empties the ceilings' log table between windows (not measured), so it does not grow through the run. */
export async function truncateLog(client: pg.Client): Promise<void> {
  await client.query('TRUNCATE log');
}

/** One record per transaction, blind, back to back for `durationMs` (the one-workflow ceiling). */
export async function blindWrites(client: pg.Client, durationMs: number): Promise<CeilingRate> {
  let done = 0;
  const started = performance.now();
  while (performance.now() - started < durationMs) {
    await client.query({
      name: 'ceiling-one',
      text: 'INSERT INTO log (k, v) VALUES ($1, $2)',
      values: [nextKey(), recordValue(done)],
    });
    done++;
  }
  return ceilingRate(done, done, performance.now() - started, 1);
}

/**
 * `groupSize` records per transaction (one multi-row INSERT), two transactions in flight on `pipelined` (a
 * client made with `pipeline: true`), for `durationMs` (the fifty-workflow ceiling).
 */
export async function batchedWrites(
  pipelined: pg.Client,
  durationMs: number,
  groupSize: number,
): Promise<CeilingRate> {
  const size = Math.max(1, Math.round(groupSize));
  const placeholders = Array.from({ length: size }, (_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ');
  const text = `INSERT INTO log (k, v) VALUES ${placeholders}`;
  let commits = 0;
  const started = performance.now();
  const send = async (): Promise<void> => {
    while (performance.now() - started < durationMs) {
      const values: string[] = [];
      for (let i = 0; i < size; i++) values.push(nextKey(), recordValue(i));
      await pipelined.query({ name: `ceiling-batch-${size}`, text, values });
      commits++;
    }
  };
  await Promise.all([send(), send()]); // two in flight: the second is on the wire while the first commits
  return ceilingRate(commits * size, commits, performance.now() - started, size);
}

/** A client whose statements are pipelined (each sent at once, answered in order): two commits in flight. */
export async function pipelinedClient(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString,
    application_name: 'bench:ceiling',
    pipeline: true,
  } as pg.ClientConfig);
  await client.connect();
  return client;
}

/**
 * Write transactions committed on the server since `from` (both from `writeTransactions`): transaction ids
 * are assigned only to transactions that write, so the difference of the next id counts every committed (or
 * aborted) write transaction of the whole server — the same count for the engine, the peer and the ceilings.
 */
export async function writeTransactions(client: pg.Client): Promise<number> {
  const result = await client.query<{ next: string }>(
    'SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next',
  );
  return Number(result.rows[0]!.next);
}
