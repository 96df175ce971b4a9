import { describe, expect, it } from 'vitest';
import {
  buildLatestResults,
  checkLatestShape,
  formatTable,
  freezeWindowMs,
  tableRows,
  type BrowserFigures,
  type LatestResults,
} from './results';
import { scaleCaseKeys, type ScaleCaseFigures } from './scale-results';
import { serverHoldingKeys, serverKeys, type ServerFigures, type ServerInput } from './server-results';
import { summarizeThroughput } from './throughput-summary';
import { buildLongLivedFigures, longLivedKeys, longLivedRows } from './long-lived-results';
import { buildQueuesFigures, queuesRows, type QueuesInput } from './queues-results';
import { mergeResults, unmeasuredPart } from './report';
import { throughputKeys, type PeerFigure, type ThroughputFigure } from './throughput-figures';

const throughput = (steps: number, ceiling: number, groupSize: number): ThroughputFigure => ({
  stepsPerSecond: steps,
  commitsPerSecond: Math.round(steps / groupSize),
  stepsPerCommit: groupSize,
  ceilingPerSecond: ceiling,
  ceilingCommitsPerSecond: Math.round(ceiling / groupSize),
  ceilingGroupSize: groupSize,
  ratio: Math.round((steps / ceiling) * 1000) / 1000,
});

const browserFigures: BrowserFigures = {
  one: throughput(700, 1000, 1),
  fifty: throughput(2500, 5000, 20),
  handoffMs: {
    graceful: { p50: 80, p95: 120 },
    crash: { p50: 250, p95: 400 },
    freeze: { p50: null, p95: null },
    lifecycleFreeze: { p50: 150, p95: 280 },
  },
  startupMs: { p50: 2_500, p95: 3_000 },
  crossTabSignalMs: { p50: 20, p95: 60 },
  crossTabResultMs: { p50: 70, p95: 90 },
  duplicateCommits: 0,
};

function sample(): LatestResults {
  return buildLatestResults({
    generatedAt: '2026-01-02T03:04:05.000Z',
    node: {
      stepsPerSecond: 20_000,
      workflowsPerSecond: 900,
      recoveryMsPer1000Workflows: 120,
      heapBytesPerParkedWorkflow: 3_000,
    },
    browser: browserFigures,
  });
}

describe('buildLatestResults', () => {
  it('produces exactly the schema of results.ts, keys in order', () => {
    const latest = sample();
    expect(Object.keys(latest)).toEqual([
      'generatedAt',
      'node',
      'browser',
      'scale',
      'server',
      'longLived',
      'queues',
    ]);
    expect(Object.keys(latest.node)).toEqual([
      'stepsPerSecond',
      'workflowsPerSecond',
      'recoveryMsPer1000Workflows',
      'heapBytesPerParkedWorkflow',
    ]);
    expect(Object.keys(latest.browser)).toEqual([
      'one',
      'fifty',
      'handoffMs',
      'startupMs',
      'crossTabSignalMs',
      'crossTabResultMs',
      'duplicateCommits',
    ]);
    expect(Object.keys(latest.browser.handoffMs)).toEqual(['graceful', 'crash', 'freeze', 'lifecycleFreeze']);
    expect(Object.keys(latest.browser.one)).toEqual([...throughputKeys]);
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('drops whatever extra detail the runners carry', () => {
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: { stepsPerSecond: 1, details: { samples: [1] } } as never,
      browser: {
        ...browserFigures,
        samples: [1, 2],
        handoffMs: { ...browserFigures.handoffMs, graceful: { p50: 1, p95: 2, n: 5 } as never },
      } as never,
    });
    expect(JSON.stringify(latest)).not.toMatch(/samples|details|"n"/);
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('reports figures that were not measured as null, never as 0', () => {
    const latest = buildLatestResults({ generatedAt: '2026-01-02T03:04:05.000Z', node: null, browser: null });
    expect(latest.node.stepsPerSecond).toBeNull();
    expect(latest.browser.handoffMs.freeze).toEqual({ p50: null, p95: null });
    expect(latest.browser.handoffMs.lifecycleFreeze).toEqual({ p50: null, p95: null });
    expect(latest.browser.startupMs).toEqual({ p50: null, p95: null });
    expect(latest.browser.duplicateCommits).toBeNull();
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('turns non-finite numbers into null', () => {
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: { stepsPerSecond: Number.NaN },
      browser: { one: { ratio: Number.POSITIVE_INFINITY } },
    });
    expect(latest.node.stepsPerSecond).toBeNull();
    expect(latest.browser.one.ratio).toBeNull();
    expect(latest.browser.fifty).toEqual(Object.fromEntries(throughputKeys.map((key) => [key, null])));
  });
});

describe('checkLatestShape', () => {
  it('names missing, extra and mistyped keys', () => {
    const latest = sample() as unknown as Record<string, Record<string, unknown>>;
    const broken = {
      ...latest,
      node: { ...latest.node, extra: 1 },
      browser: {
        ...latest.browser,
        one: { ...(latest.browser!.one as object), ratio: 'fast' },
        handoffMs: { graceful: { p50: 1, p95: 2 } },
      },
    };
    delete (broken.node as Record<string, unknown>).stepsPerSecond;
    expect(checkLatestShape(broken)).toEqual([
      'node.stepsPerSecond is missing',
      'node.extra is not in the schema',
      'node.stepsPerSecond must be a finite number or null',
      'browser.one.ratio must be a finite number or null',
      'browser.handoffMs.crash is missing',
      'browser.handoffMs.freeze is missing',
      'browser.handoffMs.lifecycleFreeze is missing',
      'browser.handoffMs.crash must be an object',
      'browser.handoffMs.freeze must be an object',
      'browser.handoffMs.lifecycleFreeze must be an object',
    ]);
  });

  it('rejects a date that is not a date', () => {
    expect(checkLatestShape({ ...sample(), generatedAt: 'yesterday' })).toContain(
      'results.generatedAt must be an ISO date string',
    );
  });
});

describe('the table', () => {
  it('shows each figure with its ceiling, ratio, target and verdict', () => {
    const rows = tableRows(sample());
    const row = (figure: string) => rows.find((candidate) => candidate.figure === figure)!;
    expect(row('browser, 1 workflow')).toMatchObject({
      value: '700 steps/s · 700 commits/s · 1 steps/commit',
      ceiling: '1,000 rows/s (1 a commit)',
      ratio: '0.7',
      target: 'ratio ≥ 0.8',
      verdict: 'miss',
    });
    expect(row('browser, 50 workflows')).toMatchObject({
      value: '2,500 steps/s · 125 commits/s · 20 steps/commit',
      ceiling: '5,000 rows/s (20 a commit)',
      ratio: '0.5',
      verdict: 'miss',
    });
    expect(row('handoff, graceful close')).toMatchObject({ value: 'p50 80 · p95 120 ms', verdict: 'pass' });
    expect(row('handoff, freeze').verdict).toBe('n/a');
    expect(row('handoff, lifecycle freeze (CDP)')).toMatchObject({
      value: 'p50 150 · p95 280 ms',
      target: 'p50 ≤ 300 ms',
      verdict: 'pass',
    });
    expect(row('tab start-up → first commit')).toMatchObject({ target: 'p50 ≤ 2,000 ms', verdict: 'miss' });
    expect(row('cross-tab result').verdict).toBe('miss');
    expect(row('duplicate commits').verdict).toBe('pass');
    expect(row('node steps/s (memory store)').verdict).toBe('pass');
  });

  it('judges the freeze handoff against TTL + grace ± a renew interval', () => {
    expect(freezeWindowMs({ ttlMs: 6_000, renewIntervalMs: 1_000 })).toEqual({ low: 7_000, high: 10_000 });
    const frozen = sample();
    frozen.browser.handoffMs.freeze = { p50: 12_000, p95: 13_000 };
    expect(tableRows(frozen).find((row) => row.figure === 'handoff, freeze')!.verdict).toBe('miss');
    frozen.browser.handoffMs.freeze = { p50: 8_500, p95: 9_000 };
    expect(tableRows(frozen).find((row) => row.figure === 'handoff, freeze')!.verdict).toBe('pass');
  });

  it('aligns the columns under a header', () => {
    const lines = formatTable(tableRows(sample())).split('\n');
    expect(lines[0]).toMatch(/^figure\s+value\s+ceiling\s+ratio\s+target\s+result$/);
    expect(lines[1]).toMatch(/^─+(\s+─+){5}$/);
    const column = lines[0]!.indexOf('value');
    for (const line of lines.slice(2)) expect(line.slice(column - 2, column)).toBe('  ');
  });
});

describe('summarizeThroughput', () => {
  const engine = (steps: number, transactions: number) => ({
    operations: steps,
    elapsedMs: 1000,
    perSecond: steps,
    workflows: 1,
    stepsPerWorkflow: steps,
    transactions,
  });
  const ceiling = (rows: number, groupSize: number) => ({
    operations: rows,
    elapsedMs: 1000,
    perSecond: rows,
    commits: rows / groupSize,
    commitsPerSecond: rows / groupSize,
    groupSize,
  });
  const round = (one: number, sequential: number, batched: number, parallel: number, groupSize: number) => ({
    sequential: engine(sequential, sequential),
    parallel: engine(parallel, parallel / groupSize),
    ceilings: { sequential: ceiling(one, 1), parallel: ceiling(batched, groupSize) },
    groupSize,
    stepRatio: sequential / one,
    parallelRatio: parallel / batched,
  });

  it('takes medians of the rates and the median of the per-round ratios, with commits and steps per commit', () => {
    const { figures } = summarizeThroughput([
      round(1000, 500, 10_000, 2000, 20),
      round(500, 400, 8_000, 4000, 20),
      round(900, 450, 9_000, 1800, 18),
    ]);
    expect(figures.one).toEqual({
      stepsPerSecond: 450,
      commitsPerSecond: 450,
      stepsPerCommit: 1,
      ceilingPerSecond: 900,
      ceilingCommitsPerSecond: 900,
      ceilingGroupSize: 1,
      // Per round: 0.5, 0.8, 0.5 — the slow round is judged against its own slow ceiling.
      ratio: 0.5,
    });
    expect(figures.fifty).toMatchObject({
      stepsPerSecond: 2000,
      commitsPerSecond: 100,
      stepsPerCommit: 20,
      ceilingPerSecond: 9000,
      ceilingGroupSize: 20,
      ratio: 0.2, // 0.2, 0.5, 0.2
    });
  });

  it('reports nulls when no round ran', () => {
    expect(summarizeThroughput([]).figures.one.ratio).toBeNull();
  });
});

describe('the scale part', () => {
  const entry = (parked: number, changes: Partial<ScaleCaseFigures> = {}): ScaleCaseFigures => ({
    parked,
    startsPerSecondFirstTenth: 200,
    startsPerSecondLastTenth: 190,
    startsPerSecond: 200,
    probeStartsPerSecond: 180,
    storageRequestsPerRenewal: 30,
    storageTransactionsPerRenewal: 6,
    minClaimMarginMs: 4_500,
    minClaimMarginDuringStartsMs: 3_000,
    minClaimMarginDuringStartupMs: 2_000,
    takeoversFromLiveHolder: 0,
    describeMs: { p50: 4, p95: 9 },
    startupEngineRunningMs: 900,
    startupFirstRowsMs: 1_100,
    dueTimersRunningElsewhereMs: 300,
    allReachableMs: 2_000,
    unreachableAfterTimeout: 0,
    ...changes,
  });
  const withScale = (parked: ScaleCaseFigures[]) =>
    buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: null,
      browser: null,
      scale: { parked },
    });
  const rowOf = (latest: LatestResults, figure: string) =>
    tableRows(latest).find((row) => row.figure === figure)!;

  it('is an empty list with no ratio when the part did not run, and still matches the schema', () => {
    const latest = buildLatestResults({ generatedAt: '2026-01-02T03:04:05.000Z', node: null, browser: null });
    expect(latest.scale).toEqual({ startRateRatio: null, parked: [] });
    expect(checkLatestShape(latest)).toEqual([]);
    expect(tableRows(latest).some((row) => row.figure.startsWith('scale'))).toBe(false);
  });

  it('keeps exactly the schema keys of each N, in increasing N, dropping the runner’s extra detail', () => {
    const latest = withScale([
      { ...entry(10_000), samples: [1, 2] } as never,
      entry(100, { describeMs: { p50: 4, p95: 9, n: 3 } as never }),
    ]);
    expect(latest.scale.parked.map((item) => item.parked)).toEqual([100, 10_000]);
    for (const item of latest.scale.parked) expect(Object.keys(item)).toEqual([...scaleCaseKeys]);
    expect(JSON.stringify(latest.scale)).not.toMatch(/samples|"n"/);
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('compares the probe at the largest N with the probe at the smallest, and shows the tenths beside', () => {
    const latest = withScale([
      entry(100, { probeStartsPerSecond: 250, startsPerSecond: 400 }),
      entry(10_000, { probeStartsPerSecond: 150, startsPerSecondLastTenth: 150 }),
    ]);
    expect(latest.scale.startRateRatio).toBe(0.6);
    expect(rowOf(latest, 'scale N=10,000: starts/s with N parked (probe)')).toMatchObject({
      value: '150',
      ceiling: 'N=100: 250',
      ratio: '0.6',
      verdict: 'miss',
    });
    expect(rowOf(latest, 'scale N=10,000: starts/s, first → last tenth')).toMatchObject({
      value: '200 → 150 (all 200)',
      ratio: '',
      verdict: '',
    });
    const passing = withScale([entry(100, { probeStartsPerSecond: 200 }), entry(10_000)]);
    expect(rowOf(passing, 'scale N=10,000: starts/s with N parked (probe)').verdict).toBe('pass');
  });

  it('judges storage requests per renewal pass against the smallest N, and each limit by its target', () => {
    const latest = withScale([
      entry(100, { storageRequestsPerRenewal: 20 }),
      entry(1_000, {
        storageRequestsPerRenewal: 29,
        minClaimMarginMs: -1,
        minClaimMarginDuringStartupMs: -2_500,
        takeoversFromLiveHolder: 3,
      }),
      entry(10_000, {
        storageRequestsPerRenewal: 31,
        startupEngineRunningMs: 2_500,
        dueTimersRunningElsewhereMs: 1_001,
        allReachableMs: null,
        unreachableAfterTimeout: 120,
      }),
    ]);
    expect(rowOf(latest, 'scale N=100: storage requests / renewal pass').verdict).toBe('');
    expect(rowOf(latest, 'scale N=1,000: storage requests / renewal pass').verdict).toBe('pass');
    expect(rowOf(latest, 'scale N=10,000: storage requests / renewal pass').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=1,000: min claim margin, 60 s window').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=1,000: takeovers from the live holder').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=1,000: min claim margin while new tabs start').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=100: min claim margin while new tabs start').verdict).toBe('pass');
    expect(rowOf(latest, 'scale N=100: takeovers from the live holder').verdict).toBe('pass');
    expect(rowOf(latest, 'scale N=10,000: new tab → engine running').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=10,000: close → due timers run elsewhere').verdict).toBe('miss');
    expect(rowOf(latest, 'scale N=10,000: close → every workflow reachable').value).toBe(
      '120 not after 60 s',
    );
  });

  it('names what is wrong in a malformed scale entry', () => {
    const latest = withScale([entry(100)]) as unknown as { scale: { parked: Record<string, unknown>[] } };
    const broken = {
      ...latest,
      scale: { parked: [{ ...latest.scale.parked[0], parked: 0, describeMs: { p50: 'slow' }, extra: 1 }] },
    };
    expect(checkLatestShape(broken)).toEqual([
      'scale.startRateRatio is missing',
      'scale.startRateRatio must be a finite number or null',
      'scale.parked[0].extra is not in the schema',
      'scale.parked[0].parked must be a positive integer',
      'scale.parked[0].describeMs.p95 is missing',
      'scale.parked[0].describeMs.p50 must be a finite number or null',
      'scale.parked[0].describeMs.p95 must be a finite number or null',
    ]);
  });
});

describe('the server part', () => {
  const peer = (steps: number, shuttleRatio: number): PeerFigure => ({
    stepsPerSecond: steps,
    commitsPerSecond: steps,
    stepsPerCommit: 1,
    shuttleRatio,
  });
  const serverFigures: ServerFigures = {
    one: throughput(1_800, 2_000, 1),
    fifty: throughput(5_000, 25_000, 25),
    io: {
      ...throughput(2_000, 1, 3),
      ceilingPerSecond: null,
      ceilingCommitsPerSecond: null,
      ceilingGroupSize: null,
      ratio: null,
    },
    dbos: {
      one: peer(500, 3.6),
      fifty: peer(6_000, 0.83),
      io: peer(900, 2.2),
      tunedFifty: peer(600, 8.3),
      tunedIo: peer(700, 2.9),
    },
    handoffMs: { kill: { p50: 400, p95: 900 }, sigterm: { p50: 30, p95: 40 } },
    crossProcessSignalMs: { p50: 8, p95: 20 },
    holding: {
      parkedWorkflows: 100_000,
      startSeconds: 120,
      callsPerPassAt1000: 10,
      callsPerPass: 11,
      claimsLost: 0,
      takeovers: 0,
      secondProcessReadyMs: 6_000,
    },
    duplicateCommits: 0,
  };
  const withServer = (server: ServerInput | null) =>
    buildLatestResults({ generatedAt: '2026-01-02T03:04:05.000Z', node: null, browser: null, server });
  const rowOf = (latest: LatestResults, figure: string) =>
    tableRows(latest).find((row) => row.figure === figure)!;

  it('is all nulls and no rows when the part did not run, and still matches the schema', () => {
    const latest = withServer(null);
    expect(Object.keys(latest.server)).toEqual([...serverKeys]);
    expect(Object.keys(latest.server.holding)).toEqual([...serverHoldingKeys]);
    expect(latest.server.one.ratio).toBeNull();
    expect(latest.server.dbos.tunedIo.shuttleRatio).toBeNull();
    expect(latest.server.handoffMs.kill).toEqual({ p50: null, p95: null });
    expect(latest.server.holding.takeovers).toBeNull();
    expect(checkLatestShape(latest)).toEqual([]);
    expect(tableRows(latest).some((row) => row.figure.startsWith('server'))).toBe(false);
  });

  it('keeps exactly the schema keys, dropping what the runner adds and turning non-finite numbers into null', () => {
    const latest = withServer({
      ...serverFigures,
      details: { rounds: [] },
      one: { ...serverFigures.one, ratio: Number.NaN, rounds: [1] },
      handoffMs: { kill: { p50: 1, p95: 2, n: 7 } as never, sigterm: { p50: 3, p95: 4 } },
      holding: { ...serverFigures.holding, samples: [1] } as never,
    } as never);
    expect(JSON.stringify(latest.server)).not.toMatch(/details|samples|rounds|"n"/);
    expect(latest.server.one.ratio).toBeNull();
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('names missing, extra and mistyped keys', () => {
    const latest = withServer(serverFigures) as unknown as { server: Record<string, unknown> };
    const broken = {
      ...latest,
      server: {
        ...latest.server,
        extra: 1,
        fifty: { ...(latest.server.fifty as object), ratio: 'fast' },
        handoffMs: { kill: { p50: 1, p95: 2 } },
        holding: { ...(latest.server.holding as object), claimsLost: '0' },
      },
    };
    delete (broken.server as Record<string, unknown>).one;
    expect(checkLatestShape(broken)).toEqual([
      'server.one is missing',
      'server.extra is not in the schema',
      'server.one must be an object',
      'server.fifty.ratio must be a finite number or null',
      'server.handoffMs.sigterm is missing',
      'server.handoffMs.sigterm must be an object',
      'server.holding.claimsLost must be a finite number or null',
    ]);
  });

  it('shows each figure beside its ceiling or the peer, with ratio, target and verdict', () => {
    const latest = withServer(serverFigures);
    expect(rowOf(latest, 'server, 1 workflow')).toMatchObject({
      value: '1,800 steps/s · 1,800 commits/s · 1 steps/commit',
      ceiling: '2,000 rows/s (1 a commit)',
      ratio: '0.9',
      target: 'ratio ≥ 0.8',
      verdict: 'pass',
    });
    expect(rowOf(latest, 'server, 50 workflows')).toMatchObject({ ratio: '0.2', verdict: 'miss' });
    expect(rowOf(latest, 'server, 50 I/O-bound workflows').value).toBe(
      '2,000 steps/s · 667 commits/s · 3 steps/commit',
    );
    expect(rowOf(latest, 'server vs DBOS, 1 workflow')).toMatchObject({
      value: '1,800 (1,800 commits/s)',
      ceiling: 'DBOS 500 (500 commits/s)',
      ratio: '3.6',
      target: '(reported)',
    });
    expect(rowOf(latest, 'server vs DBOS (pool 50), 50 I/O').ratio).toBe('2.9');
    expect(rowOf(latest, 'server handoff, kill -9')).toMatchObject({
      target: 'p50 ≤ 1,000 ms',
      verdict: 'pass',
    });
    expect(rowOf(latest, 'server handoff, SIGTERM').verdict).toBe('pass');
    expect(rowOf(latest, 'server cross-process signal').verdict).toBe('pass');
    expect(rowOf(latest, 'server holding: parked in one process')).toMatchObject({
      value: '100,000 in 120 s',
      verdict: 'pass',
    });
    expect(rowOf(latest, 'server holding: storage calls per pass')).toMatchObject({
      value: '10 → 11',
      ratio: '1.1',
      verdict: 'pass',
    });
    expect(rowOf(latest, 'server holding: claims lost / takeovers')).toMatchObject({
      value: '0 / 0',
      verdict: 'pass',
    });
    expect(rowOf(latest, 'server holding: 2nd process serving').verdict).toBe('miss');
    expect(rowOf(latest, 'server duplicate commits').verdict).toBe('pass');
  });

  it('judges fewer parked workflows than the target, growing calls per pass and any takeover as misses', () => {
    const latest = withServer({
      ...serverFigures,
      holding: { ...serverFigures.holding, parkedWorkflows: 30_000, callsPerPass: 40, takeovers: 2 },
    });
    expect(rowOf(latest, 'server holding: parked in one process').verdict).toBe('miss');
    expect(rowOf(latest, 'server holding: storage calls per pass')).toMatchObject({
      ratio: '4',
      verdict: 'miss',
    });
    expect(rowOf(latest, 'server holding: claims lost / takeovers').verdict).toBe('miss');
  });
});

describe('the long-lived part', () => {
  const figures = {
    handoffMs: { long: { p50: 9, p95: 12 }, short: { p50: 8, p95: 10 } },
    iterations: 1_000_000,
    chainRuns: 1_000,
    buildIterationsPerSecond: 450_000,
    replayOpsPerSecond: 500_000,
    recordOpsPerSecond: 50_000,
  };

  it('is all nulls and no rows when the part did not run, and still matches the schema', () => {
    const latest = sample();
    expect(Object.keys(latest.longLived)).toEqual([...longLivedKeys]);
    expect(latest.longLived.handoffMs).toEqual({
      long: { p50: null, p95: null },
      short: { p50: null, p95: null },
    });
    expect(latest.longLived.handoffRatio).toBeNull();
    expect(longLivedRows(latest.longLived)).toEqual([]);
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('derives the ratio from the two p50s, ignoring whatever ratio the runner sent, and drops extra keys', () => {
    const part = buildLongLivedFigures({ ...figures, handoffRatio: 99, trials: [] } as never);
    expect(part.handoffRatio).toBe(1.13);
    expect(Object.keys(part)).toEqual([...longLivedKeys]);
    expect(
      buildLongLivedFigures({ ...figures, handoffMs: { long: figures.handoffMs.long } }).handoffRatio,
    ).toBeNull();
    expect(
      buildLongLivedFigures({ ...figures, replayOpsPerSecond: Number.NaN }).replayOpsPerSecond,
    ).toBeNull();
  });

  it('names missing, extra and mistyped keys', () => {
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: null,
      browser: null,
      longLived: figures,
    });
    expect(checkLatestShape(latest)).toEqual([]);
    const broken = {
      ...latest,
      longLived: {
        ...latest.longLived,
        handoffMs: { long: { p50: 'slow', p95: 1 } },
        chainRuns: '1000',
        extra: 1,
      },
    };
    expect(checkLatestShape(broken)).toEqual([
      'longLived.extra is not in the schema',
      'longLived.handoffMs.short is missing',
      'longLived.handoffMs.long.p50 must be a finite number or null',
      'longLived.handoffMs.short must be an object',
      'longLived.chainRuns must be a finite number or null',
    ]);
  });

  it('shows the long chain beside the one-run workflow, and replay beside the engine running the same workflow', () => {
    const rows = longLivedRows(buildLongLivedFigures(figures));
    expect(rows[0]).toMatchObject({
      figure: 'long-lived handoff in Node (memory), 1,000,000 iterations / 1,000 runs',
      value: 'p50 9 · p95 12 ms',
      ceiling: '1 run of 1,000: p50 8 · p95 10 ms',
      ratio: '1.13',
      target: 'ratio ≤ 1.2',
      verdict: 'pass',
    });
    expect(rows[2]).toMatchObject({
      value: '500,000 ops/s',
      ceiling: 'engine run 50,000 ops/s',
      ratio: '10',
    });
    const slow = longLivedRows(
      buildLongLivedFigures({ ...figures, handoffMs: { ...figures.handoffMs, long: { p50: 20, p95: 30 } } }),
    );
    expect(slow[0]).toMatchObject({ ratio: '2.5', verdict: 'miss' });
    expect(rows).toHaveLength(3);
  });

  it('adds the browser half when it ran (alone or with the Node half), its ratio from its own p50s', () => {
    const browser = {
      handoffMs: { long: { p50: 30, p95: 40 }, short: { p50: 20, p95: 25 } },
      chainRuns: 1_000,
      buildIterationsPerSecond: 300_000,
    };
    const both = buildLongLivedFigures({ ...figures, browser });
    expect(both.browser.handoffRatio).toBe(1.5);
    const rows = longLivedRows(both);
    expect(rows).toHaveLength(5);
    expect(rows[3]).toMatchObject({
      figure: 'long-lived handoff in Chromium (IndexedDB, two tabs), 1,000 runs',
      value: 'p50 30 · p95 40 ms',
      ceiling: '1 run of 1,000: p50 20 · p95 25 ms',
      ratio: '1.5',
      verdict: 'miss',
    });
    const alone = buildLongLivedFigures({ browser });
    expect(alone.handoffRatio).toBeNull();
    expect(longLivedRows(alone).map((row) => row.figure)).toEqual([
      'long-lived handoff in Chromium (IndexedDB, two tabs), 1,000 runs',
      'long-lived build in Chromium (one tab)',
    ]);
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: null,
      browser: null,
      longLived: { browser },
    });
    expect(checkLatestShape(latest)).toEqual([]);
    expect(
      checkLatestShape({
        ...latest,
        longLived: {
          ...latest.longLived,
          browser: { ...latest.longLived.browser, handoffRatio: 'fast', extra: 1 },
        },
      }),
    ).toEqual([
      'longLived.browser.extra is not in the schema',
      'longLived.browser.handoffRatio must be a finite number or null',
    ]);
  });
});

describe('the queues part', () => {
  const half = {
    latencyMs: { queued: { p50: 12.5, p95: 30, count: 40 }, direct: { p50: 8, p95: 20, count: 40 } },
    throughput: {
      queued: { workflowsPerSecond: 90, commitsPerSecond: 400 },
      batched: { workflowsPerSecond: 100, commitsPerSecond: 300 },
      ratio: 0.9,
      maxConcurrent: 10,
    },
  };
  const peer = {
    workflowsPerSecond: 60,
    commitsPerSecond: 250,
    shuttleRatio: 1.5,
    pollIntervalMs: 20,
    maxConcurrent: 10,
  };
  const input: QueuesInput = {
    postgres: {
      ...half,
      dbos: peer,
      dbosDefaultPoll: { ...peer, workflowsPerSecond: 10, pollIntervalMs: 1000 },
    },
    browser: half,
  };

  it('is all nulls and no rows when the part did not run, and still matches the schema', () => {
    const latest = sample();
    expect(latest.queues.postgres.latencyMs).toEqual({
      queued: { p50: null, p95: null, count: null },
      direct: { p50: null, p95: null, count: null },
      differenceMs: null,
    });
    expect(latest.queues.postgres.dbos.shuttleRatio).toBeNull();
    expect(latest.queues.browser.throughput.ratio).toBeNull();
    expect(queuesRows(latest.queues)).toEqual([]);
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('derives the latency difference from the two p50s and drops what the runners add', () => {
    const part = buildQueuesFigures({
      ...input,
      postgres: {
        ...input.postgres,
        rounds: [],
        latencyMs: { ...half.latencyMs, differenceMs: 99 },
      } as never,
    });
    expect(part.postgres.latencyMs.differenceMs).toBe(4.5);
    expect(Object.keys(part.postgres)).toEqual(['latencyMs', 'throughput', 'dbos', 'dbosDefaultPoll']);
    expect(Object.keys(part.browser)).toEqual(['latencyMs', 'throughput']);
    expect(
      buildQueuesFigures({ browser: { ...half, throughput: { ...half.throughput, ratio: Number.NaN } } })
        .browser.throughput.ratio,
    ).toBeNull();
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: null,
      browser: null,
      queues: input,
    });
    expect(checkLatestShape(latest)).toEqual([]);
  });

  it('names missing, extra and mistyped keys', () => {
    const latest = buildLatestResults({
      generatedAt: '2026-01-02T03:04:05.000Z',
      node: null,
      browser: null,
      queues: input,
    });
    const broken = {
      ...latest,
      queues: {
        postgres: {
          ...latest.queues.postgres,
          latencyMs: { ...latest.queues.postgres.latencyMs, queued: { p50: 'fast', p95: 1 } },
          dbos: { ...latest.queues.postgres.dbos, extra: 1 },
        },
        browser: { latencyMs: latest.queues.browser.latencyMs },
        extra: {},
      },
    };
    expect(checkLatestShape(broken)).toEqual([
      'queues.extra is not in the schema',
      'queues.postgres.latencyMs.queued.count is missing',
      'queues.postgres.latencyMs.queued.p50 must be a finite number or null',
      'queues.postgres.dbos.extra is not in the schema',
      'queues.browser.throughput is missing',
      'queues.browser.throughput must be an object',
    ]);
  });

  it('shows the queue beside the same work without one, judged on the ratio and on the limit holding', () => {
    const rows = queuesRows(buildQueuesFigures(input));
    expect(rows.map((row) => row.figure)).toEqual([
      'queue start → first activity, PostgreSQL',
      'queue of 10, 50 workflows, PostgreSQL',
      'DBOS WorkflowQueue of 10 (poll 20 ms), 50 workflows',
      'DBOS WorkflowQueue of 10 (poll 1,000 ms), 50 workflows',
      'queue start → first activity, Chromium (IndexedDB)',
      'queue of 10, 50 workflows, Chromium (IndexedDB)',
    ]);
    expect(rows[0]).toMatchObject({
      value: 'p50 12.5 · p95 30 ms (n 40)',
      ceiling: 'no queue: p50 8 · p95 20 ms (n 40)',
      ratio: '+4.5 ms',
    });
    expect(rows[1]).toMatchObject({
      value: '90 workflows/s, 400 commits/s',
      ceiling: '10 at a time: 100 workflows/s, 300 commits/s',
      ratio: '0.9',
      verdict: 'pass',
    });
    expect(rows[2]).toMatchObject({ value: '60 workflows/s, 250 commits/s', ratio: '1.5' });
    const slow = queuesRows(
      buildQueuesFigures({ browser: { ...half, throughput: { ...half.throughput, ratio: 0.5 } } }),
    );
    expect(slow.map((row) => row.verdict)).toEqual(['', 'miss']);
    const overLimit = queuesRows(
      buildQueuesFigures({ browser: { ...half, throughput: { ...half.throughput, maxConcurrent: 11 } } }),
    );
    expect(overLimit[1]!.verdict).toBe('miss');
  });
});

describe('merging a run of some parts into the previous results', () => {
  it('keeps every part this run measured nothing of, with its details, and says from which run', () => {
    const previous = sample();
    const previousDetails = {
      run: { only: null },
      machine: { cpus: 2 },
      node: { samples: [1] },
      browser: { b: 1 },
    };
    const measured = buildLatestResults({
      generatedAt: '2026-02-02T00:00:00.000Z',
      node: null,
      browser: null,
      queues: { browser: { throughput: { ratio: 0.9 } } },
    });
    expect(unmeasuredPart(measured.node)).toBe(true);
    expect(unmeasuredPart(measured.scale)).toBe(true);
    expect(unmeasuredPart(measured.queues)).toBe(false);
    const details: Record<string, unknown> = {
      node: null,
      browser: { chromium: '156', failures: {} },
      queues: { browser: {} },
    };
    const merged = mergeResults(measured, details, { latest: previous, details: previousDetails });
    expect(merged.generatedAt).toBe('2026-02-02T00:00:00.000Z');
    expect(merged.node).toEqual(previous.node);
    expect(merged.browser).toEqual(previous.browser);
    expect(merged.queues.browser.throughput.ratio).toBe(0.9);
    expect(details.node).toEqual({ samples: [1] });
    expect(details.browser).toEqual({ b: 1 });
    expect(details.merged).toMatchObject({ thisRunsDetails: { browser: { chromium: '156', failures: {} } } });
    expect(details.queues).toEqual({ browser: {} });
    expect(details.merged).toMatchObject({
      keptParts: ['node', 'browser', 'scale', 'server', 'longLived'],
      sources: { node: { generatedAt: '2026-01-02T03:04:05.000Z', run: { only: null } } },
    });
    expect(checkLatestShape(merged)).toEqual([]);
    // Merged again: the kept parts still name the run they were measured in, not the merged file's.
    const again = buildLatestResults({
      generatedAt: '2026-03-03T00:00:00.000Z',
      node: null,
      browser: null,
      queues: { browser: { throughput: { ratio: 0.7 } } },
    });
    const detailsAgain: Record<string, unknown> = {};
    mergeResults(again, detailsAgain, { latest: merged, details: { ...details, run: { only: ['queues'] } } });
    expect(detailsAgain.merged).toMatchObject({
      sources: { node: { generatedAt: '2026-01-02T03:04:05.000Z', run: { only: null } } },
    });
  });

  it('replaces a part the run measured anything of, and keeps a part the previous file lacks as measured', () => {
    const { queues: _none, ...older } = sample();
    const measured = buildLatestResults({
      generatedAt: '2026-02-02T00:00:00.000Z',
      node: { stepsPerSecond: 1 },
      browser: null,
    });
    const details: Record<string, unknown> = {};
    const merged = mergeResults(measured, details, { latest: older, details: {} });
    expect(merged.node.stepsPerSecond).toBe(1);
    expect(merged.node.workflowsPerSecond).toBeNull();
    expect(merged.queues).toEqual(measured.queues);
    expect((details.merged as { keptParts: string[] }).keptParts).not.toContain('queues');
  });
});
