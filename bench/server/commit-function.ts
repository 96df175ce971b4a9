/**
 * The commit paths alone, beside their ceiling: `node --import tsx bench/server/commit-function.ts`.
 *
 * On a throwaway PostgreSQL server with fsync on, one connection commits an engine step (1 condition: the
 * new commit record absent, its anchor; 1 put: that record, carrying the checkpoint, about 790 bytes) back
 * to back, as one group and as 50 groups of 50 workflows, two ways: through the commit function
 * (`<schema>.commit`, every commit's general path) and through the append statements (the paths the
 * adapter takes for this shape: the one-key statement for one group, the general one for fifty;
 * docs/postgres.md), between windows of the ceiling (the bare conditional UPDATE of bench/server.ts). No
 * engine: what is left is each path's own cost. Prints each round and the medians; `SHUTTLE_BENCH_ROUNDS`
 * (default 3) and `SHUTTLE_BENCH_WINDOW_MS` (default 1,000) change the run. A diagnostic, not part of
 * `npm run bench`.
 */
import pg from 'pg';
import { startLocalPostgres } from '../../src/server/local-postgres';
import { PostgresStorage } from '../../src/storage/postgres';
import { appendCommit, commitRequest, schemaNames, statements } from '../../src/storage/postgres-sql';
import { median } from '../stats';
import { createCasTable, roundTrips } from './raw-cas';

const rounds = Number(process.env.SHUTTLE_BENCH_ROUNDS ?? 3);
const windowMs = Number(process.env.SHUTTLE_BENCH_WINDOW_MS ?? 1_000);
const engineId = '529030ee-b6f1-409e-b69b-c7843ea4c199';

/** The groups of one commit: step `n` of each of `ids` (as the engine writes it; see docs/postgres.md). */
function stepGroups(ids: readonly string[], n: number) {
  return ids.map((id) => {
    const record = `wf-tl:${id}:000001:${String(n).padStart(10, '0')}:0000000001`;
    const at = Date.now();
    const timeline = JSON.stringify({
      t: [
        {
          seq: 2 * n + 3,
          at,
          engineId,
          epoch: 1,
          kind: 'activity-completed',
          detail: { pos: n, member: 0, name: 'step', attempt: 1, durationMs: 0 },
        },
        {
          seq: 2 * n + 4,
          at,
          engineId,
          epoch: 1,
          kind: 'activity-started',
          detail: { pos: n + 1, member: 0, name: 'step', attempt: 1 },
        },
      ],
      h: [{ t: 'op', pos: n, kind: 'activity', name: 'step', ok: true, value: n }],
    });
    const checkpoint = JSON.stringify({
      v: 1,
      run: 1,
      historyLength: n + 1,
      timelineLength: 2 * n + 5,
      position: n + 1,
      state: {},
      frontier: {
        pos: n + 1,
        kind: 'activity',
        name: 'step',
        since: at,
        leaves: [{ member: 0, kind: 'activity', name: 'step', done: false, attempt: 1, started: true }],
      },
      cancel: null,
      linkedChildren: [],
      updatedAt: at,
      commits: n + 1,
    });
    return {
      conditions: [{ key: record, expected: null }],
      // The record carries the checkpoint (src/engine/checkpoint.ts): `c`, with the epoch `e`.
      operations: [
        { type: 'put' as const, key: record, value: `${timeline.slice(0, -1)},"c":${checkpoint},"e":1}` },
      ],
    };
  });
}

const server = await startLocalPostgres({ durable: true });
const client = new pg.Client({ connectionString: server.url });
try {
  await client.connect();
  const storage = await PostgresStorage.open({ connectionString: server.url, schema: 'commit_bench' });
  const ids = Array.from({ length: 50 }, (_, index) => `bench-${index}`);
  await storage.batch(ids.map((id) => ({ type: 'put', key: `wf-owner-epoch:${id}`, value: '1' })));
  await storage.close();
  await createCasTable(client);
  const ceiling = async (): Promise<number> => (await roundTrips(client, windowMs)).perSecond;
  let step = 0;
  const sql = statements(schemaNames('commit_bench'));
  /** Steps committed per second with `groups` groups per call, through the function or the statement. */
  const commits = async (groups: number, path: 'function' | 'append'): Promise<number> => {
    let done = 0;
    const started = performance.now();
    while (performance.now() - started < windowMs) {
      step++;
      const commit = stepGroups(ids.slice(0, groups), step);
      if (path === 'function') {
        const { rows } = await client.query<{ results: boolean[] }>({
          name: `commit-${groups}`,
          text: 'select commit_bench.commit($1::jsonb) as results',
          values: [JSON.stringify(commitRequest(commit))],
        });
        if (!rows[0]!.results.every(Boolean)) throw new Error(`a condition failed at step ${step}`);
      } else {
        const append = appendCommit(commit)!; // one group: the one-key statement; fifty: the general one
        const { rows } = await client.query<{ held: string | null }>({
          name: append.statement,
          text: sql[append.statement],
          values: append.params,
        });
        if (rows[0]!.held?.split(',').length !== groups)
          throw new Error(`a condition failed at step ${step}`);
      }
      done += groups;
    }
    return (done / (performance.now() - started)) * 1000;
  };

  const ratios = {
    one: [] as number[],
    fifty: [] as number[],
    appendOne: [] as number[],
    appendFifty: [] as number[],
  };
  const format = (list: number[]) => `×${list.at(-1)!.toFixed(2)}`;
  for (let round = 1; round <= rounds; round++) {
    const before = await ceiling();
    const one = await commits(1, 'function');
    const appendOne = await commits(1, 'append');
    const middle = await ceiling();
    const fifty = await commits(50, 'function');
    const appendFifty = await commits(50, 'append');
    const after = await ceiling();
    ratios.one.push(one / ((before + middle) / 2));
    ratios.appendOne.push(appendOne / ((before + middle) / 2));
    ratios.fifty.push(fifty / ((middle + after) / 2));
    ratios.appendFifty.push(appendFifty / ((middle + after) / 2));
    console.log(
      `round ${round}/${rounds}: ceiling ${Math.round(before)} ${Math.round(middle)} ${Math.round(after)}/s; ` +
        `one group: function ${Math.round(one)}/s (${format(ratios.one)}), append ${Math.round(appendOne)}/s ` +
        `(${format(ratios.appendOne)}); 50 groups: function ${Math.round(fifty)} steps/s (${format(ratios.fifty)}), ` +
        `append ${Math.round(appendFifty)} steps/s (${format(ratios.appendFifty)})`,
    );
  }
  const medianOf = (list: number[]) => median(list)?.toFixed(2);
  console.log(
    `median ratio to the ceiling: one group ${medianOf(ratios.one)} (function), ${medianOf(ratios.appendOne)} ` +
      `(append); 50 groups ${medianOf(ratios.fifty)} (function), ${medianOf(ratios.appendFifty)} (append)`,
  );
} finally {
  await client.end().catch(() => undefined);
  await server.stop();
}
