/**
 * Custody lanes and the operations timeline on one time axis.
 *
 * Top: one lane per engine that ever owned the workflow — a bar in the engine's colour from claim to
 * release, takeover or end (hatched where the claim was no longer renewed), a fence marker with the new
 * epoch at every takeover or handoff, amber shading where nobody owned it, and hollow red rings where a
 * deposed engine tried to write and storage refused. Bottom: the operations — activity attempts with their
 * durations and back-offs, timers, children, signals and updates, lifecycle events.
 *
 * Drag across the chart to zoom into a stretch of time; "Fit" shows it all again. By keyboard: + and − (or
 * the Zoom in / Zoom out buttons) zoom around the selected operation or the middle, ← and → pan while
 * zoomed, 0 fits. Selecting a mark (a click, or Enter / Space on a focused mark: every operation mark is a
 * tab stop) selects its operation, which the event list beside it highlights (and the other way round).
 * With thousands of entries, marks closer than a pixel merge (see chart-geometry.ts), so the chart stays
 * light.
 */
import { useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { EngineRecord } from '../../../public/browser';
import { Button } from '../../components/Button';
import { selfWord } from '../../data/studio-mode';
import { textColorOn } from '../../components/EngineChip';
import { formatAbsolute, formatClock, formatDuration } from '../../components/time-format';
import {
  aggregateMarks,
  formatOffset,
  niceTicks,
  packRows,
  panBy,
  timeScale,
  zoomBy,
  type TimeScale,
} from './chart-geometry';
import type { Custody, CustodyBar, CustodyLane } from '../../components/custody';
import styles from './CustodyTimeline.module.css';
import { trackLabels, type Operations, type Point, type Span, type Track } from './operations';

/** What a mark of several merged spans says: "3 children · zoom in", or only the count when narrow. */
function mergedLabel(count: number, track: string, width: number): string {
  const words = `${count.toLocaleString()} ${track.toLowerCase()} · zoom in`;
  return width > words.length * 6.2 + 10 ? words : count.toLocaleString();
}

export type CustodyTimelineProps = {
  custody: Custody;
  operations: Operations;
  engines: ReadonlyMap<string, EngineRecord>;
  selectedGroupKey: string | null;
  onSelectGroup: (groupKey: string | null) => void;
};

const labelWidth = 150;
/** Room on either side of the plot, so marks at its very start or end are drawn whole. */
const plotInset = 8;
const axisHeight = 28;
const laneHeight = 30;
const sectionGap = 26;
const rowHeight = 18;
const trackGap = 10;
const maxRowsPerTrack = 4;
const trackOrder: Track[] = ['activities', 'timers', 'children', 'messages', 'lifecycle'];

/** Enter or Space on a focused mark acts like a click. */
function activateOnKey(action: () => void) {
  return (event: KeyboardEvent<SVGGElement>) => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    event.preventDefault();
    action();
  };
}

function engineName(engines: ReadonlyMap<string, EngineRecord>, engineId: string): string {
  return engines.get(engineId)?.label ?? `Engine ${engineId.slice(0, 8)}`;
}

export function CustodyTimeline({
  custody,
  operations,
  engines,
  selectedGroupKey,
  onSelectGroup,
}: CustodyTimelineProps) {
  const containerRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(900);
  const [zoom, setZoom] = useState<{ start: number; end: number } | null>(null);
  const [brush, setBrush] = useState<{ from: number; to: number } | null>(null);

  useLayoutEffect(() => {
    const element = containerRef.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.max(320, Math.floor(entry.contentRect.width)));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const plotWidth = Math.max(100, width - labelWidth - 24);
  const view = zoom ?? { start: custody.start, end: custody.end };
  const scale = timeScale(view.start, view.end, plotWidth);

  const tracks = useMemo(() => layoutTracks(operations), [operations]);
  const custodyHeight = Math.max(1, custody.lanes.length) * laneHeight;
  const opsTop = axisHeight + custodyHeight + sectionGap;
  const opsHeight = tracks.reduce((sum, track) => sum + track.rows * rowHeight + trackGap, 0);
  const height = opsTop + Math.max(opsHeight, rowHeight) + 8;
  const ticks = niceTicks(view.start, view.end, plotWidth);
  const selectedGroup = operations.groups.find((group) => group.key === selectedGroupKey);
  const full = { start: custody.start, end: custody.end };
  const zoomIn = () =>
    setZoom(
      zoomBy(view, full, 0.5, selectedGroup ? (selectedGroup.start + selectedGroup.end) / 2 : undefined),
    );
  const zoomOut = () => setZoom(zoomBy(view, full, 2));
  // Keys of the chart (they reach here from any focused mark, or the zoom buttons).
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === '+' || event.key === '=') zoomIn();
    else if (event.key === '-' || event.key === '_') zoomOut();
    else if (event.key === '0') setZoom(null);
    else if (zoom && event.key === 'ArrowLeft') setZoom(panBy(view, full, -0.25));
    else if (zoom && event.key === 'ArrowRight') setZoom(panBy(view, full, 0.25));
    else return;
    event.preventDefault();
  };
  const atFullZoomIn = view.end - view.start <= 20;

  const toTime = (event: PointerEvent<SVGElement>) => {
    const svg = (event.currentTarget as SVGElement).ownerSVGElement ?? (event.currentTarget as SVGSVGElement);
    const box = svg.getBoundingClientRect();
    return scale.at(Math.min(plotWidth, Math.max(0, event.clientX - box.left - labelWidth - plotInset)));
  };

  return (
    <div className={styles.chart} data-testid="detail.custody-timeline" onKeyDown={onKeyDown}>
      <div className={styles.toolbar}>
        <Legend />
        <div className={styles.zoom} role="group" aria-label="Zoom the chart">
          <span className={styles.range} data-testid="detail.zoom-range" aria-live="polite">
            {formatClock(view.start, { millis: false })} – {formatClock(view.end, { millis: false })} ·{' '}
            {formatDuration(view.end - view.start)}
          </span>
          {zoom ? null : <span className={styles.hint}>Drag across the chart, or press +, to zoom</span>}
          <Button
            size="sm"
            variant="ghost"
            onClick={zoomIn}
            disabled={atFullZoomIn}
            title="Zoom in (+)"
            aria-keyshortcuts="+"
            testId="detail.zoom-in"
          >
            Zoom in
          </Button>
          <Button
            size="sm"
            variant="ghost"
            onClick={zoomOut}
            disabled={!zoom}
            title="Zoom out (−)"
            aria-keyshortcuts="-"
            testId="detail.zoom-out"
          >
            Zoom out
          </Button>
          {zoom ? (
            <Button
              size="sm"
              variant="secondary"
              onClick={() => setZoom(null)}
              title="Show it all (0)"
              aria-keyshortcuts="0"
              testId="detail.zoom-fit"
            >
              Fit
            </Button>
          ) : null}
        </div>
      </div>
      <div ref={containerRef} className={styles.canvas}>
        <svg
          width={width}
          height={height}
          role="group"
          aria-label="Custody lanes and timeline of the workflow. Operations are buttons: Enter selects one. + and − zoom, arrows pan, 0 fits."
          className={styles.svg}
          data-zoomed={zoom ? 'true' : undefined}
        >
          <defs>
            <pattern
              id="hatch-silent"
              width="6"
              height="6"
              patternUnits="userSpaceOnUse"
              patternTransform="rotate(45)"
            >
              <rect width="6" height="6" fill="var(--color-surface)" opacity="0.45" />
              <line x1="0" y1="0" x2="0" y2="6" stroke="var(--color-surface)" strokeWidth="3" opacity="0.8" />
            </pattern>
            <pattern
              id="hatch-gap"
              width="7"
              height="7"
              patternUnits="userSpaceOnUse"
              patternTransform="rotate(45)"
            >
              <line x1="0" y1="0" x2="0" y2="7" stroke="var(--chart-gap-stroke)" strokeWidth="1.4" />
            </pattern>
            <pattern
              id="hatch-interrupted"
              width="5"
              height="5"
              patternUnits="userSpaceOnUse"
              patternTransform="rotate(45)"
            >
              <rect width="5" height="5" fill="var(--color-warning-soft)" />
              <line x1="0" y1="0" x2="0" y2="5" stroke="var(--color-warning)" strokeWidth="1.6" />
            </pattern>
            <clipPath id="plot-clip">
              <rect x={-plotInset} y={0} width={plotWidth + plotInset * 2} height={height} />
            </clipPath>
          </defs>

          {/* Section labels */}
          <text x={0} y={axisHeight - 10} className={styles.section}>
            CUSTODY
          </text>
          <text x={0} y={opsTop - 8} className={styles.section}>
            OPERATIONS
          </text>

          <g transform={`translate(${labelWidth + plotInset},0)`}>
            {/* Grid and axis */}
            {ticks.offsets.map((offset) => {
              const x = scale.x(view.start + offset);
              return (
                <g key={offset}>
                  <line x1={x} x2={x} y1={axisHeight - 4} y2={height - 4} className={styles.grid} />
                  <text x={x + 3} y={axisHeight - 10} className={styles.tick}>
                    {formatOffset(offset, ticks.step)}
                  </text>
                </g>
              );
            })}

            {/* Drag-to-zoom surface, behind the marks */}
            <rect
              x={0}
              y={axisHeight - 4}
              width={plotWidth}
              height={height - axisHeight}
              fill="transparent"
              className={styles.surface}
              onPointerDown={(event) => {
                event.currentTarget.setPointerCapture(event.pointerId);
                const at = toTime(event);
                setBrush({ from: at, to: at });
              }}
              onPointerMove={(event) => {
                if (brush) setBrush({ ...brush, to: toTime(event) });
              }}
              onPointerUp={() => {
                if (brush && Math.abs(scale.x(brush.to) - scale.x(brush.from)) > 6)
                  setZoom({ start: Math.min(brush.from, brush.to), end: Math.max(brush.from, brush.to) });
                else if (brush) onSelectGroup(null);
                setBrush(null);
              }}
              style={{ pointerEvents: 'all' }}
            />
            <g clipPath="url(#plot-clip)">
              {/* Selection band */}
              {selectedGroup ? (
                <rect
                  x={scale.x(selectedGroup.start) - 2}
                  width={Math.max(4, scale.x(selectedGroup.end) - scale.x(selectedGroup.start) + 4)}
                  y={axisHeight - 4}
                  height={height - axisHeight}
                  className={styles.selection}
                />
              ) : null}

              {/* Gaps: nobody owned it */}
              {custody.gaps.map((gap) => {
                if (scale.x(gap.end) < 0 || scale.x(gap.start) > plotWidth) return null;
                const x0 = Math.max(0, scale.x(gap.start));
                const x1 = Math.min(plotWidth, scale.x(gap.end));
                return (
                  <g
                    key={`${gap.start}-${gap.kind}`}
                    data-testid="detail.custody-gap"
                    data-kind={gap.kind}
                    data-queue={gap.queue}
                  >
                    <rect
                      x={x0}
                      width={Math.max(1.5, x1 - x0)}
                      y={axisHeight}
                      height={custodyHeight}
                      className={styles.gap}
                    />
                    <rect
                      x={x0}
                      width={Math.max(1.5, x1 - x0)}
                      y={axisHeight}
                      height={custodyHeight}
                      fill="url(#hatch-gap)"
                    />
                    {gap.kind === 'queued' && x1 - x0 > 150 && custody.lanes.length > 0 ? (
                      <text x={x0 + 6} y={axisHeight + 19} className={styles.gapLabel}>
                        waiting in queue {gap.queue}
                      </text>
                    ) : null}
                    <title>
                      {gap.kind === 'suspended'
                        ? 'Suspended'
                        : gap.kind === 'scheduled'
                          ? 'Waiting for its delayed start'
                          : gap.kind === 'queued'
                            ? `Waiting in queue ${gap.queue ?? ''} to be admitted`
                            : 'Nobody owned it'}{' '}
                      for {formatDuration(gap.end - gap.start)}
                    </title>
                  </g>
                );
              })}

              {/* Custody bars */}
              {custody.lanes.map((lane, index) => (
                <LaneBars
                  key={lane.engineId}
                  lane={lane}
                  y={axisHeight + index * laneHeight}
                  scale={scale}
                  engines={engines}
                />
              ))}

              {/* Fences */}
              {custody.fences.map((fence) => {
                const x = scale.x(fence.at);
                return (
                  <g
                    key={`${fence.at}-${fence.epoch}`}
                    className={`${styles.fence} ${styles[`fence-${fence.kind}`]}`}
                    data-testid="detail.fence"
                    data-epoch={fence.epoch}
                  >
                    <line x1={x} x2={x} y1={axisHeight - 2} y2={axisHeight + custodyHeight + 2} />
                    <rect x={x - 13} y={axisHeight + custodyHeight + 3} width={26} height={15} rx={4} />
                    <text x={x} y={axisHeight + custodyHeight + 14} textAnchor="middle">
                      e{fence.epoch}
                    </text>
                    <title>
                      {fence.kind === 'takeover'
                        ? `Takeover (${fence.reason}) at ${formatAbsolute(fence.at)}: ${fence.fromEngineId ? engineName(engines, fence.fromEngineId) : 'the old holder'} → ${fence.toEngineId ? engineName(engines, fence.toEngineId) : '?'}`
                        : fence.kind === 'handoff'
                          ? `Handoff at ${formatAbsolute(fence.at)}: ${fence.fromEngineId ? engineName(engines, fence.fromEngineId) : 'nobody'} → ${fence.toEngineId ? engineName(engines, fence.toEngineId) : '?'}`
                          : `Rotation (${fence.reason}) at ${formatAbsolute(fence.at)}`}
                      {`. Epoch ${fence.epoch}: every write under an older epoch is refused from here on.`}
                    </title>
                  </g>
                );
              })}

              {/* Refused writes of deposed engines */}
              {custody.lanes.map((lane, index) =>
                lane.rejections.map((rejection, rejectionIndex) => (
                  <g
                    key={`${lane.engineId}-r-${rejectionIndex}`}
                    data-testid="detail.rejected-write"
                    data-engine-id={lane.engineId}
                  >
                    <circle
                      cx={scale.x(rejection.at)}
                      cy={axisHeight + index * laneHeight + laneHeight / 2}
                      r={6}
                      className={styles.rejection}
                    />
                    <title>
                      {`Write refused at ${formatAbsolute(rejection.at)}: ${engineName(engines, lane.engineId)} held epoch ${rejection.heldEpoch}, the workflow was at ${rejection.currentEpoch ?? '?'} — ${rejection.what}`}
                    </title>
                  </g>
                )),
              )}

              {/* Operations */}
              {tracks.map((track) => (
                <TrackMarks
                  key={track.track}
                  track={track}
                  y={opsTop + track.offset}
                  scale={scale}
                  engines={engines}
                  selectedGroupKey={selectedGroupKey}
                  onSelectGroup={onSelectGroup}
                />
              ))}

              {/* Now */}
              {custody.live && view.end >= custody.end - 1 ? (
                <line
                  x1={scale.x(custody.end)}
                  x2={scale.x(custody.end)}
                  y1={axisHeight - 4}
                  y2={height - 4}
                  className={styles.now}
                />
              ) : null}

              {/* Brush */}
              {brush ? (
                <rect
                  x={Math.min(scale.x(brush.from), scale.x(brush.to))}
                  width={Math.abs(scale.x(brush.to) - scale.x(brush.from))}
                  y={axisHeight - 4}
                  height={height - axisHeight}
                  className={styles.brush}
                />
              ) : null}
            </g>
          </g>

          {/* Lane labels */}
          {custody.lanes.map((lane, index) => (
            <LaneLabel
              key={lane.engineId}
              lane={lane}
              y={axisHeight + index * laneHeight}
              engine={engines.get(lane.engineId)}
              sharesLabel={custody.lanes.some(
                (other) =>
                  other.engineId !== lane.engineId &&
                  engines.get(other.engineId)?.label === engines.get(lane.engineId)?.label,
              )}
            />
          ))}
          {custody.lanes.length === 0 ? (
            <text x={labelWidth + 8} y={axisHeight + 19} className={styles.emptyLane}>
              {custody.gaps[0]?.kind === 'queued'
                ? `Waiting in queue ${custody.gaps[0].queue ?? ''}: nobody runs it until it is admitted.`
                : 'Nobody has claimed this workflow yet.'}
            </text>
          ) : null}
          {tracks.map((track) => (
            <text key={track.track} x={0} y={opsTop + track.offset + 13} className={styles.trackLabel}>
              {trackLabels[track.track]}
            </text>
          ))}
          {tracks.length === 0 ? (
            <text x={labelWidth + 8} y={opsTop + 13} className={styles.emptyLane}>
              No operations yet.
            </text>
          ) : null}
        </svg>
      </div>
    </div>
  );
}

/**
 * A lane's chip and name. Two engines of one browser tab (before and after a reload or restart) share the
 * tab's label: their lanes then add the start of the engine id.
 */
function LaneLabel({
  lane,
  y,
  engine,
  sharesLabel,
}: {
  lane: CustodyLane;
  y: number;
  engine: EngineRecord | undefined;
  sharesLabel: boolean;
}) {
  const color = engine?.color ?? '#8a93a1';
  const short = engine?.shortLabel ?? '?';
  const label = engine?.label ?? `Engine ${lane.engineId.slice(0, 8)}`;
  const shown = sharesLabel && engine ? `${label} · ${lane.engineId.slice(0, 4)}` : label;
  return (
    <g data-testid="detail.custody-lane" data-engine-id={lane.engineId} data-label={label}>
      <rect
        x={0}
        y={y + 6}
        width={Math.max(20, 8 + short.length * 7)}
        height={18}
        rx={4}
        fill={color}
        className={styles.chip}
      />
      <text
        x={Math.max(20, 8 + short.length * 7) / 2}
        y={y + 19}
        textAnchor="middle"
        className={styles.chipText}
        fill={textColorOn(color)}
      >
        {short}
      </text>
      <text x={Math.max(20, 8 + short.length * 7) + 8} y={y + 19} className={styles.laneLabel}>
        {shown}
        {selfWord(engine) ? ` · ${selfWord(engine)}` : ''}
      </text>
      <title>{`${label} — engine ${lane.engineId}`}</title>
    </g>
  );
}

function LaneBars({
  lane,
  y,
  scale,
  engines,
}: {
  lane: CustodyLane;
  y: number;
  scale: TimeScale;
  engines: ReadonlyMap<string, EngineRecord>;
}) {
  const engine = engines.get(lane.engineId);
  const color = engine?.color ?? '#8a93a1';
  return (
    <g>
      <line x1={0} x2={scale.width} y1={y + laneHeight} y2={y + laneHeight} className={styles.laneLine} />
      {lane.bars.map((bar) => (
        <Bar
          key={`${bar.start}-${bar.epoch}`}
          bar={bar}
          y={y}
          scale={scale}
          color={color}
          name={engine?.label ?? `Engine ${lane.engineId.slice(0, 8)}`}
        />
      ))}
    </g>
  );
}

const endWords: Record<CustodyBar['endReason'], string> = {
  released: 'released its claim',
  finished: 'finished the workflow',
  'taken-over': 'was deposed by a takeover',
  rotated: 'was deposed by a rotation',
  suspended: 'suspended it',
  live: 'still owns it',
  lapsed: 'let its claim lapse',
};

function Bar({
  bar,
  y,
  scale,
  color,
  name,
}: {
  bar: CustodyBar;
  y: number;
  scale: TimeScale;
  color: string;
  name: string;
}) {
  const rawX0 = scale.x(bar.start);
  const rawX1 = scale.x(bar.end);
  if (rawX1 < 0 || rawX0 > scale.width) return null;
  const x0 = Math.max(0, rawX0);
  const x1 = Math.max(x0 + 2, Math.min(scale.width, rawX1));
  const silentX = bar.silentFrom !== null ? Math.max(x0, scale.x(bar.silentFrom)) : null;
  const text = `${name} · e${bar.epoch}`;
  const fits = x1 - x0 > text.length * 6.6 + 12;
  return (
    <g data-testid="detail.custody-bar" data-epoch={bar.epoch} data-end={bar.endReason}>
      <rect
        x={x0}
        y={y + 5}
        width={x1 - x0}
        height={laneHeight - 10}
        rx={4}
        fill={color}
        className={styles.bar}
      />
      {silentX !== null && x1 - silentX > 1 ? (
        <rect
          x={silentX}
          y={y + 5}
          width={x1 - silentX}
          height={laneHeight - 10}
          rx={0}
          fill="url(#hatch-silent)"
        />
      ) : null}
      {bar.endReason === 'live' ? (
        <rect x={x1 - 3} y={y + 3} width={3} height={laneHeight - 6} rx={1.5} className={styles.liveEdge} />
      ) : null}
      {fits ? (
        <text
          x={Math.max(x0, 0) + 7}
          y={y + laneHeight / 2 + 4}
          className={styles.barText}
          fill={textColorOn(color)}
        >
          {text}
        </text>
      ) : null}
      <title>
        {`${name} owned it at epoch ${bar.epoch} (${bar.how}) from ${formatAbsolute(bar.start)} for ${formatDuration(bar.end - bar.start)}, then ${endWords[bar.endReason]}.`}
        {bar.silentFrom !== null
          ? ` Its claim was not renewed from about ${formatClock(bar.silentFrom)}.`
          : ''}
        {bar.expiresAt !== null ? ` The claim expires at ${formatClock(bar.expiresAt)} unless renewed.` : ''}
      </title>
    </g>
  );
}

type TrackLayout = {
  track: Track;
  rows: number;
  offset: number;
  spans: { span: Span; row: number }[];
  points: Point[];
};

function layoutTracks(operations: Operations): TrackLayout[] {
  const layouts: TrackLayout[] = [];
  let offset = 0;
  for (const track of trackOrder) {
    const spans = operations.spans.filter((span) => span.track === track);
    const points = operations.points.filter((point) => point.track === track);
    if (spans.length === 0 && points.length === 0) continue;
    const packed = packRows(spans, maxRowsPerTrack);
    const rows = spans.length > 0 ? packed.count : 1;
    layouts.push({
      track,
      rows,
      offset,
      spans: spans.map((span, index) => ({ span, row: packed.rows[index]! })),
      points,
    });
    offset += rows * rowHeight + trackGap;
  }
  return layouts;
}

const spanClass: Record<Span['status'], string> = {
  ok: styles.spanOk!,
  failed: styles.spanFailed!,
  running: styles.spanRunning!,
  interrupted: styles.spanInterrupted!,
  waiting: styles.spanWaiting!,
  backoff: styles.spanBackoff!,
};

function TrackMarks({
  track,
  y,
  scale,
  engines,
  selectedGroupKey,
  onSelectGroup,
}: {
  track: TrackLayout;
  y: number;
  scale: TimeScale;
  engines: ReadonlyMap<string, EngineRecord>;
  selectedGroupKey: string | null;
  onSelectGroup: (groupKey: string | null) => void;
}) {
  const rows = Array.from({ length: track.rows }, (_, row) =>
    track.spans.filter((item) => item.row === row).map((item) => item.span),
  );
  const pointMarks = aggregateMarks(
    track.points.map((point) => ({ point, start: point.at, end: point.at })),
    scale,
    3,
  );
  return (
    <g data-testid="detail.track" data-track={track.track}>
      <rect
        x={0}
        y={y - 2}
        width={scale.width}
        height={track.rows * rowHeight + 4}
        className={styles.trackBand}
      />
      {rows.map((spans, row) =>
        aggregateMarks(spans, scale).map((mark) => {
          const single = mark.items.length === 1 ? mark.items[0]! : null;
          const selected = mark.items.some((span) => span.groupKey === selectedGroupKey);
          const status = single
            ? single.status
            : mark.items.some((span) => span.status === 'failed')
              ? 'failed'
              : mark.items.at(-1)!.status;
          const width = Math.max(2, mark.x1 - mark.x0);
          const spanWords = single
            ? `${single.label} — ${single.status}, ${formatDuration(single.end - single.start)} from ${formatClock(single.start)} on ${engineName(engines, single.engineId)}`
            : `${mark.items.length.toLocaleString()} ${trackLabels[track.track].toLowerCase()} between ${formatClock(mark.items[0]!.start)} and ${formatClock(mark.items.at(-1)!.end)} (zoom in to see each)`;
          return (
            <g
              key={`${row}-${mark.items[0]!.id}`}
              className={`${styles.spanGroup} ${selected ? styles.selectedMark : ''}`}
              onPointerDown={(event) => event.stopPropagation()}
              onClick={() => onSelectGroup(mark.items[0]!.groupKey)}
              onKeyDown={activateOnKey(() => onSelectGroup(mark.items[0]!.groupKey))}
              tabIndex={0}
              role="button"
              aria-pressed={selected}
              aria-label={spanWords}
              data-testid="detail.span"
              data-status={status}
              data-count={mark.items.length}
            >
              <rect
                x={mark.x0}
                y={y + row * rowHeight + 2}
                width={width}
                height={rowHeight - 4}
                rx={3}
                className={spanClass[status]}
                fill={status === 'interrupted' ? 'url(#hatch-interrupted)' : undefined}
              />
              {single && width > single.label.length * 6.2 + 10 ? (
                <text x={mark.x0 + 5} y={y + row * rowHeight + 13} className={styles.spanText}>
                  {single.label}
                </text>
              ) : !single && width > 40 ? (
                <text x={mark.x0 + 5} y={y + row * rowHeight + 13} className={styles.spanText}>
                  {mergedLabel(mark.items.length, trackLabels[track.track], width)}
                </text>
              ) : null}
              <title>{spanWords}</title>
            </g>
          );
        }),
      )}
      {pointMarks.map((mark) => {
        const first = mark.items[0]!.point;
        const selected = mark.items.some((item) => item.point.groupKey === selectedGroupKey);
        const cx = (mark.x0 + mark.x1) / 2;
        const cy = y + rowHeight / 2;
        const pointWords =
          mark.items.length === 1
            ? `${first.label} at ${formatClock(first.at)}`
            : `${mark.items.length} events: ${mark.items
                .slice(0, 5)
                .map((item) => item.point.label)
                .join('; ')}${mark.items.length > 5 ? '…' : ''}`;
        return (
          <g
            key={`p-${first.id}`}
            className={`${styles.pointGroup} ${selected ? styles.selectedMark : ''}`}
            onPointerDown={(event) => event.stopPropagation()}
            onClick={() => onSelectGroup(first.groupKey)}
            onKeyDown={activateOnKey(() => onSelectGroup(first.groupKey))}
            tabIndex={0}
            role="button"
            aria-pressed={selected}
            aria-label={pointWords}
            data-testid="detail.point"
            data-kind={first.kind}
          >
            <path
              d={`M ${cx} ${cy - 6} L ${cx + 6} ${cy} L ${cx} ${cy + 6} L ${cx - 6} ${cy} Z`}
              className={styles[`tone-${first.tone}`]}
            />
            {mark.items.length > 1 ? (
              <text x={cx + 8} y={cy + 4} className={styles.pointCount}>
                ×{mark.items.length}
              </text>
            ) : null}
            <title>{pointWords}</title>
          </g>
        );
      })}
    </g>
  );
}

function Legend() {
  return (
    <ul className={styles.legend} aria-label="Legend">
      <li>
        <span className={`${styles.swatch} ${styles.swatchBar}`} aria-hidden /> owned
      </li>
      <li>
        <span className={`${styles.swatch} ${styles.swatchSilent}`} aria-hidden /> not renewed
      </li>
      <li>
        <span className={`${styles.swatch} ${styles.swatchGap}`} aria-hidden /> unowned
      </li>
      <li>
        <span className={styles.swatchFence} aria-hidden>
          e2
        </span>{' '}
        fence (new epoch)
      </li>
      <li>
        <span className={styles.swatchRejection} aria-hidden /> refused write
      </li>
    </ul>
  );
}
