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
