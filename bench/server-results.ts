/**
 * The `server` part of `bench/results/latest.json` and its rows in the printed table (results.ts includes
 * both): Shuttle engines over PostgresStorage on a throwaway PostgreSQL server, beside the ceiling (raw
 * conditional UPDATE transactions) and the peer (DBOS Transact) measured in the same run (bench/server.ts).
 * Pure: building, checking and formatting only.
 *
 * Every key is always present; a figure that was not measured (the part did not run, a runner failed) is
 * null, never a made-up 0.
 */
import type { TableRow } from './results';
import type { Spread } from './stats';

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
  rawTransactionsPerSecond: number | null;
  engineStepsPerSecond: number | null;
  stepRatio: number | null;
  parallelEngineStepsPerSecond: number | null;
  parallelRatio: number | null;
  /**
   * The peer's steps per second, one workflow; `peerStepRatio` is Shuttle ÷ peer, each first divided by the
   * ceiling measured around it (per round; the median of the rounds).
   */
  peerStepsPerSecond: number | null;
  peerStepRatio: number | null;
  peerParallelStepsPerSecond: number | null;
  peerParallelRatio: number | null;
  handoffMs: { kill: Spread; sigterm: Spread };
  crossProcessSignalMs: Spread;
  holding: ServerHoldingFigures;
  duplicateCommits: number | null;
};

/** What the server runner reports (bench/server.ts), before null-filling. */
export type ServerInput = Partial<Omit<ServerFigures, 'handoffMs' | 'holding'>> & {
  handoffMs?: Partial<ServerFigures['handoffMs']>;
  holding?: Partial<ServerHoldingFigures>;
};

const numberKeys = [
  'rawTransactionsPerSecond',
  'engineStepsPerSecond',
  'stepRatio',
  'parallelEngineStepsPerSecond',
  'parallelRatio',
  'peerStepsPerSecond',
  'peerStepRatio',
  'peerParallelStepsPerSecond',
  'peerParallelRatio',
] as const satisfies readonly (keyof ServerFigures)[];

/** Every key of `server`, in order. */
export const serverKeys = [
  ...numberKeys,
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
  stepRatio: 0.5,
  parallelRatio: 3,
  /** Shuttle ÷ peer, both figures (the aim is 2). */
  peerRatio: 1,
  peerRatioAim: 2,
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
    rawTransactionsPerSecond: figure(server.rawTransactionsPerSecond),
    engineStepsPerSecond: figure(server.engineStepsPerSecond),
    stepRatio: figure(server.stepRatio),
    parallelEngineStepsPerSecond: figure(server.parallelEngineStepsPerSecond),
    parallelRatio: figure(server.parallelRatio),
    peerStepsPerSecond: figure(server.peerStepsPerSecond),
    peerStepRatio: figure(server.peerStepRatio),
    peerParallelStepsPerSecond: figure(server.peerParallelStepsPerSecond),
    peerParallelRatio: figure(server.peerParallelRatio),
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkNumber(where: string, value: unknown, problems: string[]): void {
  if (value !== null && (typeof value !== 'number' || !Number.isFinite(value)))
    problems.push(`${where} must be a finite number or null`);
}

function checkExactKeys(
  where: string,
  value: unknown,
  expected: readonly string[],
  problems: string[],
): value is Record<string, unknown> {
  if (!isRecord(value)) {
    problems.push(`${where} must be an object`);
    return false;
  }
  for (const key of expected) if (!(key in value)) problems.push(`${where}.${key} is missing`);
  for (const key of Object.keys(value))
    if (!expected.includes(key)) problems.push(`${where}.${key} is not in the schema`);
  return true;
}

function checkSpread(where: string, value: unknown, problems: string[]): void {
  if (!checkExactKeys(where, value, ['p50', 'p95'], problems)) return;
  checkNumber(`${where}.p50`, value.p50, problems);
  checkNumber(`${where}.p95`, value.p95, problems);
}

/** Appends to `problems` every way `value` differs from the schema of `server`. */
export function checkServerShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('server', value, serverKeys, problems)) return;
  for (const key of numberKeys) checkNumber(`server.${key}`, value[key], problems);
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
    numberKeys.some((key) => server[key] !== null) ||
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
  const peer = (name: string, shuttle: number | null, peerRate: number | null, ratio: number | null) => ({
    figure: name,
    value: formatNumber(shuttle),
    ceiling: `${serverPeerName} ${formatNumber(peerRate)}`,
    ratio: formatNumber(ratio),
    target: `ratio ≥ ${t.peerRatio} (aim ${t.peerRatioAim})`,
    verdict: verdict(ratio, (value) => value >= t.peerRatio),
  });
  const holding = server.holding;
  const growth =
    holding.callsPerPass !== null && holding.callsPerPassAt1000 !== null && holding.callsPerPassAt1000 > 0
      ? holding.callsPerPass / holding.callsPerPassAt1000
      : null;
  return [
    {
      figure: 'server raw conditional UPDATE tx/s',
      value: formatNumber(server.rawTransactionsPerSecond),
      ceiling: '(the ceiling)',
      ratio: '',
      target: '',
      verdict: '',
    },
    {
      figure: 'server steps/s, 1 workflow',
      value: formatNumber(server.engineStepsPerSecond),
      ceiling: formatNumber(server.rawTransactionsPerSecond),
      ratio: formatNumber(server.stepRatio),
      target: `ratio ≥ ${t.stepRatio}`,
      verdict: verdict(server.stepRatio, (ratio) => ratio >= t.stepRatio),
    },
    {
      figure: 'server steps/s, 50 workflows',
      value: formatNumber(server.parallelEngineStepsPerSecond),
      ceiling: formatNumber(server.rawTransactionsPerSecond),
      ratio: formatNumber(server.parallelRatio),
      target: `ratio ≥ ${t.parallelRatio}`,
      verdict: verdict(server.parallelRatio, (ratio) => ratio >= t.parallelRatio),
    },
    peer(
      `server vs ${serverPeerName}, 1 workflow`,
      server.engineStepsPerSecond,
      server.peerStepsPerSecond,
      server.peerStepRatio,
    ),
    peer(
      `server vs ${serverPeerName}, 50 workflows`,
      server.parallelEngineStepsPerSecond,
      server.peerParallelStepsPerSecond,
      server.peerParallelRatio,
    ),
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
