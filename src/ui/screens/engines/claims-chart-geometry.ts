/**
 * The axes of the Engines screen's claims chart, without React, from d3-scale: time across (`scaleTime`,
 * at least ten seconds wide, ticks on round local clock times, none where it would run into the "now" label
 * at the right end), claims up (`scaleLinear` from 0 to at least 4, made nice, whole-number ticks only).
 */
import { scaleLinear, scaleTime } from 'd3-scale';

export type ChartFrame = {
  width: number;
  height: number;
  padding: { top: number; right: number; bottom: number; left: number };
};

/** The narrowest time span the chart shows, in ms. */
export const minSpanMs = 10_000;

/** Room kept free of clock ticks left of the plot's right end, in px, where "now" is written. */
export const nowLabelRoom = 56;

/** Clock ticks wanted per this many px of plot width. */
const pxPerTimeTick = 140;

export type ClaimsAxes = {
  /** x of a time. */
  x(at: number): number;
  /** y of a claim count. */
  y(claims: number): number;
  /** The time at the right end of the plot ("now"). */
  end: number;
  /** The top of the claims axis. */
  maxClaims: number;
  /** Clock times to label, in epoch ms. */
  timeTicks: number[];
  /** Claim counts to label. */
  claimTicks: number[];
};

/** The axes for samples from `start` to `end` (epoch ms) whose largest claim count is `maxClaims`. */
export function claimsAxes(frame: ChartFrame, start: number, end: number, maxClaims: number): ClaimsAxes {
  const { width, height, padding } = frame;
  const right = width - padding.right;
  const time = scaleTime()
    .domain([start, start + Math.max(minSpanMs, end - start)])
    .range([padding.left, right]);
  const claims = scaleLinear()
    .domain([0, Math.max(4, maxClaims)])
    .range([height - padding.bottom, padding.top])
    .nice(4);
  const timeTicks = time
    .ticks(Math.max(2, Math.floor((right - padding.left) / pxPerTimeTick)))
    .map((tick) => tick.getTime())
    .filter((at) => time(at) <= right - nowLabelRoom);
  return {
    x: (at) => time(at),
    y: (count) => claims(count),
    end: time.domain()[1]!.getTime(),
    maxClaims: claims.domain()[1]!,
    timeTicks,
    claimTicks: claims.ticks(4).filter((tick) => Number.isInteger(tick)),
  };
}
