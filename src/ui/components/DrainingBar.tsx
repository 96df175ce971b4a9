/**
 * A claim's remaining life as a bar that drains smoothly towards its expiry, refilling whenever the owner
 * renews (a new `expiresAt`). Green while comfortably alive, amber in its last third, red once expired — and
 * the text beside it says the same ("expires in 4 s" / "expired 2 s ago"), so colour is never the only cue.
 */
import { useState } from 'react';
import { useNow } from '../state/now';
import styles from './DrainingBar.module.css';
import { formatAbsolute, formatDuration } from './time-format';

export type DrainingBarProps = {
  expiresAt: number;
  /** The full length of the bar, in ms (the claim TTL). */
  totalMs: number;
  /** Show the text beside the bar. Default true. */
  showText?: boolean;
  testId?: string;
};

export function DrainingBar({ expiresAt, totalMs, showText = true, testId }: DrainingBarProps) {
  const now = useNow();
  const remaining = expiresAt - now;
  const fraction = Math.max(0, Math.min(1, remaining / totalMs));
  const tone = (remaining <= 0 ? styles.expired : fraction < 1 / 3 ? styles.low : styles.ok) ?? '';
  const text =
    expiresAt - now > 0
      ? `in ${formatDuration(Math.max(0, expiresAt - now), { coarse: true })}`
      : `expired ${formatDuration(now - expiresAt, { coarse: true })} ago`;
  return (
    <span className={styles.wrap} data-testid={testId} title={`Expires at ${formatAbsolute(expiresAt)}`}>
      <span
        className={styles.track}
        role="meter"
        aria-label="Time left on the claim"
        aria-valuemin={0}
        aria-valuemax={totalMs}
        aria-valuenow={Math.max(0, Math.round(remaining))}
      >
        <Fill key={`${expiresAt}:${totalMs}`} expiresAt={expiresAt} totalMs={totalMs} className={tone} />
      </span>
      {showText ? <span className={styles.text}>{text}</span> : null}
    </span>
  );
}

/**
 * The coloured part: sized once, when a new expiry arrives, then shrunk by a CSS animation that reaches zero
 * exactly at the expiry — smooth, and no re-render per frame.
 */
function Fill({ expiresAt, totalMs, className }: { expiresAt: number; totalMs: number; className: string }) {
  const [start] = useState(() => {
    const remaining = Math.max(0, expiresAt - Date.now());
    return { remaining, fraction: Math.min(1, remaining / totalMs) };
  });
  return (
    <span
      className={`${styles.fill} ${className}`}
      style={{ width: `${start.fraction * 100}%`, animationDuration: `${start.remaining}ms` }}
    />
  );
}
