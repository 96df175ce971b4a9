/**
 * The PostgreSQL ceiling the server benchmarks divide by: a bare conditional UPDATE
 * (`UPDATE kv SET v = $1 WHERE k = $2 AND v = $3`) in autocommit on one connection, 200-byte values — the
 * least one durable compare-and-swap costs on this server and this machine. Used by bench/server.ts and
 * bench/server/commit-function.ts.
 */
import type pg from 'pg';

export type Rate = { operations: number; elapsedMs: number; perSecond: number };

export function rate(operations: number, elapsedMs: number): Rate {
  return { operations, elapsedMs: Math.round(elapsedMs), perSecond: (operations / elapsedMs) * 1000 };
}

const value = (n: number) => String(n).padStart(200, '0');

/** Creates the one-row table the ceiling updates, in the client's current database. */
export async function createCasTable(client: pg.Client): Promise<void> {
  await client.query('CREATE TABLE kv (k text PRIMARY KEY, v text NOT NULL)');
  await client.query(`INSERT INTO kv VALUES ('k', $1)`, [value(0)]);
}

/** Compare-and-swaps the row back to back for `durationMs`: how many per second. */
export async function rawTransactions(client: pg.Client, durationMs: number): Promise<Rate> {
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
