/**
 * The `queues` part of `bench/results/latest.json` and its rows in the printed table (results.ts includes
 * both): workflow queues (issue #34) over PostgreSQL and in Chromium — start→run latency through a queue with
 * free slots beside a start without one, and the throughput of 50 workflows through a queue of concurrency 10
 * beside the same 50 run 10 at a time without a queue; over PostgreSQL also DBOS Transact's `WorkflowQueue`
 * (concurrency 10) on the same server (bench/queues.ts, bench/studio/queues.ts; bench/README.md says how).
 * Pure: building, checking and formatting only.
 *
 * Every key is always present; a figure that was not measured is null, never a made-up 0. The latency
 * difference is derived here from the two p50s, so it always matches them.
 */
import type { TableRow } from './results';
import { checkExactKeys, checkNumber } from './schema-check';

/** p50 and p95 in ms, and how many samples (`count`). */
export type LatencySpread = { p50: number | null; p95: number | null; count: number | null };

/** A rate of whole workflows, and the durable commits per second while it ran. */
export type WorkflowRate = { workflowsPerSecond: number | null; commitsPerSecond: number | null };

/** One half's figures (`queues.postgres` and `queues.browser` share them). */
export type QueuesHalfFigures = {
  /** `start` returned → the workflow's first activity running; queued onto a queue with free slots, and not. */
  latencyMs: { queued: LatencySpread; direct: LatencySpread; differenceMs: number | null };
  throughput: {
    /** 50 workflows started at once onto a queue of concurrency 10. */
    queued: WorkflowRate;
    /** The same 50, 10 at a time without a queue (start 10, wait for all, start the next 10 …). */
    batched: WorkflowRate;
    /** queued ÷ batched workflows/s, per round; the median (target ≥ 0.8). */
    ratio: number | null;
    /** The most of the queued workflows running at once in any round, from their timelines (≤ 10 or void). */
    maxConcurrent: number | null;
  };
};

/** DBOS Transact's `WorkflowQueue` (concurrency 10), the same 50 workflows, beside Shuttle's queued runs. */
export type QueuesPeerFigures = WorkflowRate & {
  /** Shuttle's queued ÷ DBOS's workflows/s, per round; the median. */
  shuttleRatio: number | null;
  /** The queue's polling interval (DBOS's `minPollingIntervalMs`; its default is 1,000). */
  pollIntervalMs: number | null;
  /** The most of its workflows running at once, from DBOS's own workflow_status rows. */
  maxConcurrent: number | null;
};

/** latest.json's `queues`. */
export type QueuesFigures = {
  postgres: QueuesHalfFigures & { dbos: QueuesPeerFigures; dbosDefaultPoll: QueuesPeerFigures };
  browser: QueuesHalfFigures;
};

/** What a half's runner reports, before null-filling; its own difference is ignored. */
export type QueuesHalfInput = {
  latencyMs?: { queued?: Partial<LatencySpread> | null; direct?: Partial<LatencySpread> | null } | null;
  throughput?: {
    queued?: Partial<WorkflowRate> | null;
    batched?: Partial<WorkflowRate> | null;
    ratio?: number | null;
    maxConcurrent?: number | null;
  } | null;
};

export type QueuesInput = {
  postgres?:
    | (QueuesHalfInput & {
        dbos?: Partial<QueuesPeerFigures> | null;
        dbosDefaultPoll?: Partial<QueuesPeerFigures> | null;
      })
    | null;
  browser?: QueuesHalfInput | null;
};

/** The targets of the part (issue #34). */
export const queuesTargets = {
  /** Queued throughput at least this fraction of 10-at-a-time without a queue. */
  throughputRatio: 0.8,
  /** The queue's concurrency: the audit's peak must not exceed it. */
  concurrency: 10,
} as const;

function figure(value: number | null | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function latency(value: Partial<LatencySpread> | null | undefined): LatencySpread {
  return { p50: figure(value?.p50), p95: figure(value?.p95), count: figure(value?.count) };
}

function rate(value: Partial<WorkflowRate> | null | undefined): WorkflowRate {
  return {
    workflowsPerSecond: figure(value?.workflowsPerSecond),
    commitsPerSecond: figure(value?.commitsPerSecond),
  };
}

function buildHalf(input: QueuesHalfInput | null | undefined): QueuesHalfFigures {
  const queued = latency(input?.latencyMs?.queued);
  const direct = latency(input?.latencyMs?.direct);
  return {
    latencyMs: {
      queued,
      direct,
      differenceMs:
        queued.p50 !== null && direct.p50 !== null ? Math.round((queued.p50 - direct.p50) * 100) / 100 : null,
    },
    throughput: {
      queued: rate(input?.throughput?.queued),
      batched: rate(input?.throughput?.batched),
      ratio: figure(input?.throughput?.ratio),
      maxConcurrent: figure(input?.throughput?.maxConcurrent),
    },
  };
}

function buildPeer(input: Partial<QueuesPeerFigures> | null | undefined): QueuesPeerFigures {
  return {
    ...rate(input),
    shuttleRatio: figure(input?.shuttleRatio),
    pollIntervalMs: figure(input?.pollIntervalMs),
    maxConcurrent: figure(input?.maxConcurrent),
  };
}

/** `queues` of latest.json from the runners' figures (all null for a half that did not run). */
export function buildQueuesFigures(input: QueuesInput | null | undefined): QueuesFigures {
  return {
    postgres: {
      ...buildHalf(input?.postgres),
      dbos: buildPeer(input?.postgres?.dbos),
      dbosDefaultPoll: buildPeer(input?.postgres?.dbosDefaultPoll),
    },
    browser: buildHalf(input?.browser),
  };
}

// -----------------------------------------------------------------------------------------------------------
// The schema check

function checkNumbers(where: string, value: unknown, keys: readonly string[], problems: string[]): void {
  if (!checkExactKeys(where, value, keys, problems)) return;
  for (const key of keys) if (key in value) checkNumber(`${where}.${key}`, value[key], problems);
}

const halfKeys = ['latencyMs', 'throughput'] as const;
const rateKeys = ['workflowsPerSecond', 'commitsPerSecond'] as const;
const peerKeys = [...rateKeys, 'shuttleRatio', 'pollIntervalMs', 'maxConcurrent'] as const;

function checkHalf(where: string, value: Record<string, unknown>, problems: string[]): void {
  const latencyMs = value.latencyMs;
  if (checkExactKeys(`${where}.latencyMs`, latencyMs, ['queued', 'direct', 'differenceMs'], problems)) {
    for (const mode of ['queued', 'direct'])
      checkNumbers(`${where}.latencyMs.${mode}`, latencyMs[mode], ['p50', 'p95', 'count'], problems);
    checkNumber(`${where}.latencyMs.differenceMs`, latencyMs.differenceMs, problems);
  }
  const throughput = value.throughput;
  if (
    checkExactKeys(
      `${where}.throughput`,
      throughput,
      ['queued', 'batched', 'ratio', 'maxConcurrent'],
      problems,
    )
  ) {
    checkNumbers(`${where}.throughput.queued`, throughput.queued, rateKeys, problems);
    checkNumbers(`${where}.throughput.batched`, throughput.batched, rateKeys, problems);
    checkNumber(`${where}.throughput.ratio`, throughput.ratio, problems);
    checkNumber(`${where}.throughput.maxConcurrent`, throughput.maxConcurrent, problems);
  }
}

/** Appends to `problems` every way `value` differs from the schema of `queues`. */
export function checkQueuesShape(value: unknown, problems: string[]): void {
  if (!checkExactKeys('queues', value, ['postgres', 'browser'], problems)) return;
  if (checkExactKeys('queues.postgres', value.postgres, [...halfKeys, 'dbos', 'dbosDefaultPoll'], problems)) {
    checkHalf('queues.postgres', value.postgres, problems);
    checkNumbers('queues.postgres.dbos', value.postgres.dbos, peerKeys, problems);
    checkNumbers('queues.postgres.dbosDefaultPoll', value.postgres.dbosDefaultPoll, peerKeys, problems);
  }
  if (checkExactKeys('queues.browser', value.browser, halfKeys, problems))
    checkHalf('queues.browser', value.browser, problems);
}

// -----------------------------------------------------------------------------------------------------------
// The table

function formatNumber(value: number | null, unit = ''): string {
  if (value === null) return '—';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits })}${unit}`;
}

function formatLatency(value: LatencySpread): string {
  if (value.p50 === null) return '—';
  return `p50 ${formatNumber(value.p50)} · p95 ${formatNumber(value.p95)} ms (n ${formatNumber(value.count)})`;
}

function formatRate(value: WorkflowRate): string {
  if (value.workflowsPerSecond === null) return '—';
  return `${formatNumber(value.workflowsPerSecond)} workflows/s, ${formatNumber(value.commitsPerSecond)} commits/s`;
}

function halfRan(half: QueuesHalfFigures): boolean {
  return (
    half.latencyMs.queued.p50 !== null ||
    half.latencyMs.direct.p50 !== null ||
    half.throughput.queued.workflowsPerSecond !== null ||
    half.throughput.batched.workflowsPerSecond !== null
  );
}

function halfRows(where: string, half: QueuesHalfFigures): TableRow[] {
  const { throughput } = half;
  const limitHeld =
    throughput.maxConcurrent === null ? null : throughput.maxConcurrent <= queuesTargets.concurrency;
  return [
    {
      figure: `queue start → first activity, ${where}`,
      value: formatLatency(half.latencyMs.queued),
      ceiling: `no queue: ${formatLatency(half.latencyMs.direct)}`,
      ratio: `+${formatNumber(half.latencyMs.differenceMs)} ms`,
      target: '(reported)',
      verdict: '',
    },
    {
      figure: `queue of 10, 50 workflows, ${where}`,
      value: formatRate(throughput.queued),
      ceiling: `10 at a time: ${formatRate(throughput.batched)}`,
      ratio: formatNumber(throughput.ratio),
      target: `≥ ${queuesTargets.throughputRatio}, ≤ ${queuesTargets.concurrency} at once (${formatNumber(throughput.maxConcurrent)})`,
      verdict:
        throughput.ratio === null || limitHeld === null
          ? 'n/a'
          : throughput.ratio >= queuesTargets.throughputRatio && limitHeld
            ? 'pass'
            : 'miss',
    },
  ];
}

function peerRow(label: string, peer: QueuesPeerFigures): TableRow {
  return {
    figure: `DBOS WorkflowQueue of 10 (poll ${formatNumber(peer.pollIntervalMs)} ms), 50 workflows`,
    value: formatRate(peer),
    ceiling: label,
    ratio: formatNumber(peer.shuttleRatio),
    target: '(Shuttle ÷ DBOS, reported)',
    verdict: '',
  };
}

/** The rows of the queues part; none for a half that did not run. */
export function queuesRows(part: QueuesFigures): TableRow[] {
  const rows: TableRow[] = [];
  if (halfRan(part.postgres)) {
    rows.push(...halfRows('PostgreSQL', part.postgres));
    for (const peer of [part.postgres.dbos, part.postgres.dbosDefaultPoll])
      if (peer.workflowsPerSecond !== null) rows.push(peerRow('same PostgreSQL server', peer));
  }
  if (halfRan(part.browser)) rows.push(...halfRows('Chromium (IndexedDB)', part.browser));
  return rows;
}
