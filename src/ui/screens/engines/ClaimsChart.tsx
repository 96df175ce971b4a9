/**
 * Claims held per engine over time: one step line per engine in its colour, labelled at its end with the
 * engine's short label, from the samples the studio takes of `engines()` (the last five minutes). A small
 * hand-drawn SVG over d3 scales (claims-chart-geometry.ts). Handoffs read as one line dropping while another
 * rises.
 */
import { useLayoutEffect, useRef, useState } from 'react';
import type { EngineRecord } from '../../../public/browser';
import { textColorOn } from '../../components/EngineChip';
import { formatClock } from '../../components/time-format';
import type { EngineSample } from '../../data/engine-samples';
import styles from './ClaimsChart.module.css';
import { claimsAxes } from './claims-chart-geometry';

const height = 190;
const padding = { top: 12, right: 44, bottom: 24, left: 34 };
const windowMs = 5 * 60_000;

export type ClaimsChartProps = {
  samples: readonly EngineSample[];
  engines: ReadonlyMap<string, EngineRecord>;
  now: number;
};

/** The series of one engine: its claims at each sample (null where it was not live). */
export function seriesOf(
  samples: readonly EngineSample[],
  engineId: string,
): { at: number; claims: number | null }[] {
  return samples.map((sample) => ({ at: sample.at, claims: sample.claims[engineId] ?? null }));
}

export function ClaimsChart({ samples, engines, now }: ClaimsChartProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(800);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    const observer = new ResizeObserver(
      ([entry]) => entry && setWidth(Math.max(300, Math.floor(entry.contentRect.width))),
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const end = Math.max(now, samples.at(-1)?.at ?? now);
  const start = Math.max(samples[0]?.at ?? end, end - windowMs);
  const visible = samples.filter((sample) => sample.at >= start - 2_000);
  const ids = [...new Set(visible.flatMap((sample) => Object.keys(sample.claims)))];
  const axes = claimsAxes(
    { width, height, padding },
    start,
    end,
    Math.max(0, ...visible.flatMap((sample) => Object.values(sample.claims))),
  );
  const { x, y } = axes;

  const series = ids.map((engineId) => {
    const engine = engines.get(engineId);
    const points = seriesOf(visible, engineId);
    let path = '';
    let previous: { at: number; claims: number | null } | null = null;
    for (const point of points) {
      if (point.claims !== null) {
        const px = x(Math.max(point.at, start));
        const py = y(point.claims);
        path += !previous || previous.claims === null ? `M ${px} ${py} ` : `H ${px} V ${py} `;
      }
      previous = point;
    }
    const last = [...points].reverse().find((point) => point.claims !== null);
    return { engineId, engine, color: engine?.color ?? '#8a93a1', path, last };
  });
  const labels: EndLabel[] = series.flatMap(({ engineId, engine, color, last }) =>
    last && last.claims !== null
      ? [
          {
            engineId,
            color,
            text: engine?.shortLabel ?? '?',
            width: Math.max(18, 8 + (engine?.shortLabel.length ?? 1) * 7),
            x: x(last.at),
            anchorY: y(last.claims),
            y: y(last.claims),
            title: `${engine?.label ?? engineId}: ${last.claims} claim${last.claims === 1 ? '' : 's'} at its last sample`,
          },
        ]
      : [],
  );
  return (
    <div ref={ref} className={styles.wrap} data-testid="engines.claims-chart">
      {visible.length < 2 ? (
        <p className={styles.empty}>
          Collecting samples… the chart fills in as the engines renew their claims.
        </p>
      ) : null}
      <svg
        width={width}
        height={height}
        role="img"
        aria-label="Claims held per engine over the last minutes"
        className={styles.svg}
      >
        {axes.claimTicks.map((tick) => (
          <g key={tick}>
            <line
              x1={padding.left}
              x2={width - padding.right}
              y1={y(tick)}
              y2={y(tick)}
              className={styles.grid}
            />
            <text x={padding.left - 8} y={y(tick) + 4} textAnchor="end" className={styles.tick}>
              {tick}
            </text>
          </g>
        ))}
        {axes.timeTicks.map((tick) => (
          <text key={tick} x={x(tick)} y={height - 6} textAnchor="middle" className={styles.tick}>
            {formatClock(tick, { millis: false })}
          </text>
        ))}
        <text x={x(axes.end)} y={height - 6} textAnchor="end" className={styles.tick}>
          now
        </text>
        {series.map(({ engineId, color, path }) => (
          <path
            key={engineId}
            d={path}
            fill="none"
            stroke={color}
            strokeWidth={2.25}
            strokeLinejoin="round"
            className={styles.line}
            data-testid="engines.chart-series"
            data-engine-id={engineId}
          >
            <title>{`${engines.get(engineId)?.label ?? engineId}`}</title>
          </path>
        ))}
        {spreadLabels(labels, padding.top, height - padding.bottom).map((label) => (
          <g key={label.engineId}>
            {Math.abs(label.y - label.anchorY) > 1 ? (
              <line
                x1={label.x}
                x2={label.x + 6}
                y1={label.anchorY}
                y2={label.y}
                stroke={label.color}
                strokeWidth={1.5}
              />
            ) : null}
            <rect
              x={label.x + 6}
              y={label.y - 9}
              width={label.width}
              height={18}
              rx={4}
              fill={label.color}
              className={styles.chip}
            />
            <text
              x={label.x + 6 + label.width / 2}
              y={label.y + 4}
              textAnchor="middle"
              fill={textColorOn(label.color)}
              className={styles.chipText}
            >
              {label.text}
            </text>
            <title>{label.title}</title>
          </g>
        ))}
      </svg>
    </div>
  );
}

type EndLabel = {
  engineId: string;
  color: string;
  text: string;
  width: number;
  x: number;
  /** Where its line ends. */
  anchorY: number;
  /** Where the label goes, after spreading. */
  y: number;
  title: string;
};

/**
 * Moves labels that end at about the same place apart, so each stays readable: labels ending near each other
 * (within 12 px horizontally) are spread to at least 20 px apart vertically, within [top, bottom].
 */
export function spreadLabels<T extends { x: number; y: number }>(
  labels: readonly T[],
  top: number,
  bottom: number,
): T[] {
  const placed = labels.map((label) => ({ ...label })).sort((a, b) => a.y - b.y);
  const gap = 20;
  for (let index = 1; index < placed.length; index++) {
    const previous = placed[index - 1]!;
    const label = placed[index]!;
    if (Math.abs(label.x - previous.x) < 12 && label.y - previous.y < gap) label.y = previous.y + gap;
  }
  const overflow = (placed.at(-1)?.y ?? 0) - bottom;
  if (overflow > 0) for (const label of placed) label.y = Math.max(top, label.y - overflow);
  return placed;
}
