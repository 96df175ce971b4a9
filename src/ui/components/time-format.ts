/**
 * How the studio writes times: relative for scanning ("4 s ago"), absolute (local, to the millisecond) on
 * hover, since handoffs are about milliseconds.
 */

/**
 * "just now", "12 s ago", "3 min ago", "2 h ago", "5 d ago"; "in 4 s" for future times. `now` may lag the
 * real time by up to a second (the shared clock ticks once a second), so anything within about a second
 * either way reads "just now".
 */
export function formatRelative(at: number, now: number): string {
  const deltaMs = now - at;
  if (deltaMs > -1_500 && deltaMs < 2_000) return 'just now';
  const future = deltaMs < 0;
  const seconds = Math.round(Math.abs(deltaMs) / 1000);
  let text: string;
  if (seconds < 60) text = `${seconds} s`;
  else if (seconds < 3600) text = `${Math.floor(seconds / 60)} min`;
  else if (seconds < 86_400) text = `${Math.floor(seconds / 3600)} h`;
  else text = `${Math.floor(seconds / 86_400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

/** "2025-12-02 11:38:31.204" in local time. */
export function formatAbsolute(at: number): string {
  const date = new Date(at);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
  );
}

/**
 * A duration for people: "340 ms", "1.2 s", "14 s", "2 min 05 s", "1 h 03 min". `coarse` drops the
 * milliseconds under a minute ("4 s"), for countdowns that tick once a second.
 */
export function formatDuration(ms: number, options: { coarse?: boolean } = {}): string {
  if (!Number.isFinite(ms)) return '—';
  const value = Math.max(0, ms);
  if (value < 1_000) return options.coarse ? `${Math.floor(value / 1000)} s` : `${Math.round(value)} ms`;
  if (value < 10_000 && !options.coarse) return `${(value / 1000).toFixed(1)} s`;
  if (value < 60_000) return `${Math.floor(value / 1000)} s`;
  const totalSeconds = Math.floor(value / 1000);
  if (totalSeconds < 3600) {
    const minutes = Math.floor(totalSeconds / 60);
    return `${minutes} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  }
  const hours = Math.floor(totalSeconds / 3600);
  return `${hours} h ${String(Math.floor((totalSeconds % 3600) / 60)).padStart(2, '0')} min`;
}

/** A time of day to the millisecond ("11:38:31.204"), for axes and event lists. */
export function formatClock(at: number, options: { millis?: boolean } = {}): string {
  const date = new Date(at);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const base = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return options.millis === false ? base : `${base}.${pad(date.getMilliseconds(), 3)}`;
}
