/**
 * `npm run soak:cluster`: the cluster fault suite (cluster.test.ts) under random fault schedules — each seed
 * a fresh database, three fresh workers and 150 orders (300 workflows with their children), and a random
 * interleaving of the four faults (each kind at least once, up to three more; random processes, delays and
 * durations; some overlapping), then every check of the suite.
 *
 * `SHUTTLE_CLUSTER_SEEDS=n` runs seeds 1…n (default 20; `SHUTTLE_CLUSTER_FIRST_SEED` moves the start);
 * `SHUTTLE_SEED=n` replays one seed. Every seed's schedule and outcome are printed, and a failing seed says
 * how to replay it. Needs root (network namespaces); without it the run says why and skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeReport,
  describeSchedule,
  planSchedule,
  runSchedule,
  startCluster,
  type Cluster,
  type ScheduleReport,
} from './testing/cluster-harness.test-support';
import { namespaceSupport } from './testing/cluster-network.test-support';

const support = namespaceSupport();
const single = process.env.SHUTTLE_SEED === undefined ? null : Number(process.env.SHUTTLE_SEED);
const count = Number(process.env.SHUTTLE_CLUSTER_SEEDS ?? 20);
const first = Number(process.env.SHUTTLE_CLUSTER_FIRST_SEED ?? 1);
const orders = Number(process.env.SHUTTLE_CLUSTER_ORDERS ?? 150);
const seeds = single !== null ? [single] : Array.from({ length: count }, (_, i) => first + i);

if (!support.ok) console.warn(`The cluster fault soak is skipped: ${support.reason}.`);

describe.runIf(support.ok)(`cluster fault soak: ${seeds.length} random schedules`, () => {
  let cluster: Cluster;
  const reports: ScheduleReport[] = [];
  const failed: number[] = [];
  let began = 0;

  beforeAll(async () => {
    began = Date.now();
    cluster = await startCluster({ output: (line) => console.log(line) });
  });

  afterAll(async () => {
    await cluster?.stop();
    const violations = reports.reduce((sum, report) => sum + report.violations.length, 0);
    const takeovers = reports.reduce((sum, report) => sum + report.figures.takeovers, 0);
    const rejections = reports.reduce((sum, report) => sum + report.figures.rejections, 0);
    const faults = reports.reduce((sum, report) => sum + report.faults.length, 0);
    const fenced = reports.reduce((sum, report) => sum + report.figures.zombies.fenced, 0);
    const selfDropped = reports.reduce((sum, report) => sum + report.figures.zombies.selfDropped, 0);
    console.log(
      `\ncluster soak: ${reports.length} of ${seeds.length} seeds ran (${seeds[0]}…${seeds.at(-1)}), ${faults} faults, ` +
        `${violations} violations, ${takeovers} takeovers, ${rejections} refused writes, ` +
        `zombies: ${fenced} refused by the fence, ${selfDropped} dropped their workflow themselves, ` +
        `${((Date.now() - began) / 60_000).toFixed(1)} min` +
        (failed.length > 0
          ? `\nfailed seeds: ${failed.join(', ')} (replay one: SHUTTLE_SEED=<seed> npm run soak:cluster)`
          : ''),
    );
  });

  for (const seed of seeds) {
    const schedule = planSchedule({ seed, orders });
    it(describeSchedule(schedule), async () => {
      let report: ScheduleReport;
      try {
        report = await runSchedule(cluster, schedule);
      } catch (error) {
        failed.push(seed);
        console.error(
          `seed ${seed} FAILED (replay: SHUTTLE_SEED=${seed} npm run soak:cluster): ${String(error)}`,
        );
        throw error;
      }
      reports.push(report);
      if (!report.ok) {
        failed.push(seed);
        console.error(`seed ${seed} FAILED (replay: SHUTTLE_SEED=${seed} npm run soak:cluster)`);
      }
      expect(report.violations, describeReport(report)).toEqual([]);
    });
  }
});

if (!support.ok)
  describe('the cluster fault soak', () => {
    it.skip(`is skipped: ${support.reason}`, () => undefined);
  });
