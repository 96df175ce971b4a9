/**
 * The `server` part of `bench/results/latest.json` and its rows in the printed table (results.ts includes
 * both): Shuttle engines over PostgresStorage on a throwaway PostgreSQL server, beside their ceilings (the
 * same writes without the engine: one blind write per commit for one workflow, the engine's group size with
 * two commits in flight for fifty; bench/server/raw-cas.ts) and the peer (DBOS Transact, at its default pool
 * and a tuned one) measured in the same run (bench/server.ts). Pure: building, checking and formatting only.
 *
 * Every key is always present; a figure that was not measured (the part did not run, a runner failed) is
 * null, never a made-up 0.
 */
import type { TableRow } from './results';
import type { Spread } from './stats';
import {
  buildPeerFigure,
  buildThroughputFigure,
  checkFigure,
  measured,
  peerKeys,
  throughputKeys,
  type PeerFigure,
  type ThroughputFigure,
} from './throughput-figures';
import { checkExactKeys, checkNumber } from './schema-check';

/** DBOS beside Shuttle: each workload at DBOS's default pool, and the concurrent ones at a tuned pool. */
export type ServerPeerFigures = {
  one: PeerFigure;
  fifty: PeerFigure;
  io: PeerFigure;
  tunedFifty: PeerFigure;
  tunedIo: PeerFigure;
};

const peerWorkloads = ['one', 'fifty', 'io', 'tunedFifty', 'tunedIo'] as const;

/** The holding figures: one process with many parked workflows (bench/README.md says how each is measured). */
export type ServerHoldingFigures = {
  /** Workflows parked on durable timers days away in the holding process (the target is 100,000). */
  parkedWorkflows: number | null;
  /** How long starting them took (concurrent starts), in s. */
  startSeconds: number | null;
  /** Storage calls per renewal pass of a process holding 1,000 parked workflows. */
  callsPerPassAt1000: number | null;
  /** The same for the process holding `parkedWorkflows`. */
  callsPerPass: number | null;
  /** Claims the holding process lost during the watch window. */
  claimsLost: number | null;
  /** `claim-taken-over` entries in the holding store's timelines at the end (none may exist). */
  takeovers: number | null;
  /** Spawn of a second process on the holding store → its engine created and one workflow served, in ms. */
  secondProcessReadyMs: number | null;
};

/** latest.json's `server`. */
export type ServerFigures = {
  /** One workflow of zero-length steps; its ceiling: one blind write of its record size per commit. */
  one: ThroughputFigure;
  /** Fifty workflows at once; its ceiling: its own steps per commit in one write, two commits in flight. */
  fifty: ThroughputFigure;
  /** Fifty workflows of 10–100 steps each waiting 1–20 ms (simulated I/O): no ceiling. */
  io: ThroughputFigure;
  dbos: ServerPeerFigures;
  handoffMs: { kill: Spread; sigterm: Spread };
  crossProcessSignalMs: Spread;
  holding: ServerHoldingFigures;
  duplicateCommits: number | null;
};

/** What the server runner reports (bench/server.ts), before null-filling. */
export type ServerInput = Partial<Omit<ServerFigures, 'handoffMs' | 'holding' | 'dbos'>> & {
  dbos?: Partial<ServerPeerFigures>;
  handoffMs?: Partial<ServerFigures['handoffMs']>;
  holding?: Partial<ServerHoldingFigures>;
};

const throughputWorkloads = ['one', 'fifty', 'io'] as const;

/** Every key of `server`, in order. */
export const serverKeys = [
  ...throughputWorkloads,
  'dbos',
  'handoffMs',
  'crossProcessSignalMs',
  'holding',
  'duplicateCommits',
] as const satisfies readonly (keyof ServerFigures)[];

export const serverHoldingKeys = [
  'parkedWorkflows',
  'startSeconds',
  'callsPerPassAt1000',
  'callsPerPass',
  'claimsLost',
  'takeovers',
  'secondProcessReadyMs',
] as const satisfies readonly (keyof ServerHoldingFigures)[];

const handoffKinds = ['kill', 'sigterm'] as const;

/** The targets of the server part (docs/quality.md, Benchmarks). */
export const serverTargets = {
  /** Of each measurement's own ceiling: the same writes without the engine. */
  stepRatio: 0.8,
  parallelRatio: 0.8,
  killMs: 1_000,
  sigtermMs: 200,
  signalMs: 50,
  parkedWorkflows: 100_000,
  /** "Independent of N": calls per pass at the large N at most this multiple of those at 1,000. */
  callsGrowth: 1.5,
  secondProcessMs: 5_000,
} as const;

/** The peer's name in the table. */
export const serverPeerName = 'DBOS';

function figure(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function spread(value: Partial<Spread> | null | undefined): Spread {
  return { p50: figure(value?.p50), p95: figure(value?.p95) };
}

/** `server` of latest.json from the runner's figures (all null when the part did not run). */
export function buildServerFigures(input: ServerInput | null | undefined): ServerFigures {
  const server = input ?? {};
  const holding = server.holding ?? {};
  return {
    one: buildThroughputFigure(server.one),
    fifty: buildThroughputFigure(server.fifty),
    io: buildThroughputFigure(server.io),
    dbos: {
      one: buildPeerFigure(server.dbos?.one),
      fifty: buildPeerFigure(server.dbos?.fifty),
      io: buildPeerFigure(server.dbos?.io),
      tunedFifty: buildPeerFigure(server.dbos?.tunedFifty),
      tunedIo: buildPeerFigure(server.dbos?.tunedIo),
    },
    handoffMs: { kill: spread(server.handoffMs?.kill), sigterm: spread(server.handoffMs?.sigterm) },
    crossProcessSignalMs: spread(server.crossProcessSignalMs),
    holding: {
      parkedWorkflows: figure(holding.parkedWorkflows),
      startSeconds: figure(holding.startSeconds),
      callsPerPassAt1000: figure(holding.callsPerPassAt1000),
      callsPerPass: figure(holding.callsPerPass),
      claimsLost: figure(holding.claimsLost),
      takeovers: figure(holding.takeovers),
      secondProcessReadyMs: figure(holding.secondProcessReadyMs),
    },
    duplicateCommits: figure(server.duplicateCommits),
  };
}

function checkSpread(where: string, value: unknown, problems: string[]): void {
  if (!checkExactKeys(where, value, ['p50', 'p95'], problems)) return;
  checkNumber(`${where}.p50`, value.p50, problems);
  checkNumber(`${where}.p95`, value.p95, problems);
}

/** Appends to `problems` every way `value` differs from the schema of `server`. */
export function checkServerShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('server', value, serverKeys, problems)) return;
  for (const key of throughputWorkloads) checkFigure(`server.${key}`, value[key], throughputKeys, problems);
  if (checkExactKeys('server.dbos', value.dbos, peerWorkloads, problems))
    for (const key of peerWorkloads) checkFigure(`server.dbos.${key}`, value.dbos[key], peerKeys, problems);
  if (checkExactKeys('server.handoffMs', value.handoffMs, handoffKinds, problems))
    for (const kind of handoffKinds) checkSpread(`server.handoffMs.${kind}`, value.handoffMs[kind], problems);
  checkSpread('server.crossProcessSignalMs', value.crossProcessSignalMs, problems);
  if (checkExactKeys('server.holding', value.holding, serverHoldingKeys, problems))
    for (const key of serverHoldingKeys) checkNumber(`server.holding.${key}`, value.holding[key], problems);
  checkNumber('server.duplicateCommits', value.duplicateCommits, problems);
}

// -----------------------------------------------------------------------------------------------------------
// The table

function formatNumber(value: number | null, unit = ''): string {
  if (value === null) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`;
}

function formatSpread(value: Spread): string {
  if (value.p50 === null) return '—';
  return `p50 ${formatNumber(value.p50)} · p95 ${formatNumber(value.p95)} ms`;
}

function verdict(measured: number | null, passes: (value: number) => boolean): TableRow['verdict'] {
  return measured === null ? 'n/a' : passes(measured) ? 'pass' : 'miss';
}

/** The rows of the server part; none when it did not run (every figure null). */
export function serverRows(server: ServerFigures): TableRow[] {
  const ran =
    throughputWorkloads.some((key) => measured(server[key])) ||
    server.handoffMs.kill.p50 !== null ||
    server.handoffMs.sigterm.p50 !== null ||
    server.crossProcessSignalMs.p50 !== null ||
    serverHoldingKeys.some((key) => server.holding[key] !== null);
  if (!ran) return [];
  const t = serverTargets;
  const latency = (name: string, value: Spread, limit: number): TableRow => ({
    figure: name,
    value: formatSpread(value),
    ceiling: '',
    ratio: '',
    target: `p50 ≤ ${formatNumber(limit)} ms`,
    verdict: verdict(value.p50, (p50) => p50 <= limit),
  });
  const peer = (name: string, shuttle: ThroughputFigure, other: PeerFigure): TableRow => ({
    figure: name,
    value: `${formatNumber(shuttle.stepsPerSecond)} (${formatNumber(shuttle.commitsPerSecond)} commits/s)`,
    ceiling: `${serverPeerName} ${formatNumber(other.stepsPerSecond)} (${formatNumber(other.commitsPerSecond)} commits/s)`,
    ratio: formatNumber(other.shuttleRatio),
    target: '(reported)',
    verdict: '',
  });
  const holding = server.holding;
  const growth =
    holding.callsPerPass !== null && holding.callsPerPassAt1000 !== null && holding.callsPerPassAt1000 > 0
      ? holding.callsPerPass / holding.callsPerPassAt1000
      : null;
  return [
    throughputRow('server, 1 workflow', server.one, t.stepRatio),
    throughputRow('server, 50 workflows', server.fifty, t.parallelRatio),
    {
      figure: 'server, 50 I/O-bound workflows',
      value: `${formatNumber(server.io.stepsPerSecond)} steps/s · ${formatNumber(server.io.commitsPerSecond)} commits/s · ${formatNumber(server.io.stepsPerCommit)} steps/commit`,
      ceiling: '',
      ratio: '',
      target: '',
      verdict: '',
    },
    peer(`server vs ${serverPeerName}, 1 workflow`, server.one, server.dbos.one),
    peer(`server vs ${serverPeerName}, 50 workflows`, server.fifty, server.dbos.fifty),
    peer(`server vs ${serverPeerName} (pool 50), 50`, server.fifty, server.dbos.tunedFifty),
    peer(`server vs ${serverPeerName}, 50 I/O-bound`, server.io, server.dbos.io),
    peer(`server vs ${serverPeerName} (pool 50), 50 I/O`, server.io, server.dbos.tunedIo),
    latency('server handoff, kill -9', server.handoffMs.kill, t.killMs),
    latency('server handoff, SIGTERM', server.handoffMs.sigterm, t.sigtermMs),
    latency('server cross-process signal', server.crossProcessSignalMs, t.signalMs),
    {
      figure: 'server holding: parked in one process',
      value:
        holding.parkedWorkflows === null
          ? '—'
          : `${formatNumber(holding.parkedWorkflows)} in ${formatNumber(holding.startSeconds)} s`,
      ceiling: '',
      ratio: '',
      target: `≥ ${formatNumber(t.parkedWorkflows)}`,
      verdict: verdict(holding.parkedWorkflows, (count) => count >= t.parkedWorkflows),
    },
    {
      figure: 'server holding: storage calls per pass',
      value:
        holding.callsPerPass === null
          ? '—'
          : `${formatNumber(holding.callsPerPassAt1000)} → ${formatNumber(holding.callsPerPass)}`,
      ceiling: '',
      ratio: formatNumber(growth),
      target: `N=1,000 → N: ≤ ${t.callsGrowth}×`,
      verdict: verdict(growth, (value) => value <= t.callsGrowth),
    },
    {
      figure: 'server holding: claims lost / takeovers',
      value:
        holding.claimsLost === null
          ? '—'
          : `${formatNumber(holding.claimsLost)} / ${formatNumber(holding.takeovers)}`,
      ceiling: '',
      ratio: '',
      target: '= 0',
      verdict:
        holding.claimsLost === null || holding.takeovers === null
          ? 'n/a'
          : holding.claimsLost === 0 && holding.takeovers === 0
            ? 'pass'
            : 'miss',
    },
    {
      figure: 'server holding: 2nd process serving',
      value: formatNumber(holding.secondProcessReadyMs, ' ms'),
      ceiling: '',
      ratio: '',
      target: `≤ ${formatNumber(t.secondProcessMs)} ms`,
      verdict: verdict(holding.secondProcessReadyMs, (ms) => ms <= t.secondProcessMs),
    },
    {
      figure: 'server duplicate commits',
      value: formatNumber(server.duplicateCommits),
      ceiling: '',
      ratio: '',
      target: '= 0',
      verdict: verdict(server.duplicateCommits, (count) => count === 0),
    },
  ];
}

/**
 * A throughput row: steps/s, commits/s and steps per commit; the ceiling's rows/s (and its group size); the
 * ratio and its target (shared with results.ts's browser rows).
 */
export function throughputRow(name: string, value: ThroughputFigure, target: number): TableRow {
  return {
    figure: name,
    value: `${formatNumber(value.stepsPerSecond)} steps/s · ${formatNumber(value.commitsPerSecond)} commits/s · ${formatNumber(value.stepsPerCommit)} steps/commit`,
    ceiling:
      value.ceilingPerSecond === null
        ? '—'
        : `${formatNumber(value.ceilingPerSecond)} rows/s (${formatNumber(value.ceilingGroupSize)} a commit)`,
    ratio: formatNumber(value.ratio),
    target: `ratio ≥ ${target}`,
    verdict: verdict(value.ratio, (ratio) => ratio >= target),
  };
}
