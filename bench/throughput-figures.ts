/**
 * The throughput figures of latest.json, the same shape in the browser and on the server (results.ts,
 * server-results.ts): for each measurement, its rate of steps, the durable commits it took (and so steps per
 * commit), the ceiling it is compared with — the same work done without the engine, measured around it in
 * the same run (bench/README.md, "Ceilings") — and the ratio. Pure: building and checking only.
 */

/** One measurement's figures: medians over the rounds; the ratio is the median of the per-round ratios. */
export type ThroughputFigure = {
  stepsPerSecond: number | null;
  /** Durable commits per second while it ran (storage transactions that wrote). */
  commitsPerSecond: number | null;
  stepsPerCommit: number | null;
  /** The ceiling's rows (one per step) per second, and its commits per second; null when it has none. */
  ceilingPerSecond: number | null;
  ceilingCommitsPerSecond: number | null;
  /** Rows of the ceiling per commit: 1 for one workflow; the engine's steps per commit for fifty. */
  ceilingGroupSize: number | null;
  /** stepsPerSecond ÷ ceilingPerSecond, per round; the median. */
  ratio: number | null;
};

/** A peer's figures beside one of Shuttle's: `shuttleRatio` is Shuttle ÷ peer (steps/s, same round). */
export type PeerFigure = {
  stepsPerSecond: number | null;
  commitsPerSecond: number | null;
  stepsPerCommit: number | null;
  shuttleRatio: number | null;
};

export const throughputKeys = [
  'stepsPerSecond',
  'commitsPerSecond',
  'stepsPerCommit',
  'ceilingPerSecond',
  'ceilingCommitsPerSecond',
  'ceilingGroupSize',
  'ratio',
] as const satisfies readonly (keyof ThroughputFigure)[];

export const peerKeys = [
  'stepsPerSecond',
  'commitsPerSecond',
  'stepsPerCommit',
  'shuttleRatio',
] as const satisfies readonly (keyof PeerFigure)[];

function figure(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function buildThroughputFigure(value: Partial<ThroughputFigure> | null | undefined): ThroughputFigure {
  const v = value ?? {};
  return {
    stepsPerSecond: figure(v.stepsPerSecond),
    commitsPerSecond: figure(v.commitsPerSecond),
    stepsPerCommit: figure(v.stepsPerCommit),
    ceilingPerSecond: figure(v.ceilingPerSecond),
    ceilingCommitsPerSecond: figure(v.ceilingCommitsPerSecond),
    ceilingGroupSize: figure(v.ceilingGroupSize),
    ratio: figure(v.ratio),
  };
}

export function buildPeerFigure(value: Partial<PeerFigure> | null | undefined): PeerFigure {
  const v = value ?? {};
  return {
    stepsPerSecond: figure(v.stepsPerSecond),
    commitsPerSecond: figure(v.commitsPerSecond),
    stepsPerCommit: figure(v.stepsPerCommit),
    shuttleRatio: figure(v.shuttleRatio),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Appends to `problems` every way `value` differs from a figure with exactly `keys`, each a number or null. */
export function checkFigure(
  where: string,
  value: unknown,
  keys: readonly string[],
  problems: string[],
): void {
  if (!isRecord(value)) {
    problems.push(`${where} must be an object`);
    return;
  }
  for (const key of keys) if (!(key in value)) problems.push(`${where}.${key} is missing`);
  for (const key of Object.keys(value))
    if (!keys.includes(key)) problems.push(`${where}.${key} is not in the schema`);
  for (const key of keys) {
    const entry = value[key];
    if (entry !== null && entry !== undefined && (typeof entry !== 'number' || !Number.isFinite(entry)))
      problems.push(`${where}.${key} must be a finite number or null`);
  }
}

/** Whether any number of a figure was measured. */
export function measured(value: ThroughputFigure | PeerFigure): boolean {
  return Object.values(value).some((entry) => entry !== null);
}
