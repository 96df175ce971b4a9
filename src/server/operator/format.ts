/**
 * How the operator commands print: aligned tables for people, one JSON document for scripts (`--json`).
 * Pure functions of what the engine returned, so the tests check the words without a terminal.
 */

/** `rows` as a table with a header, columns padded to their widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `label: value` lines, the labels aligned. */
export function fields(entries: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...entries.map(([label]) => label.length));
  return entries.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`).join('\n');
}

/** An instant as an ISO time in UTC without milliseconds, or `-` when there is none. */
export function time(at: number | null | undefined): string {
  if (at === null || at === undefined || !Number.isFinite(at)) return '-';
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A duration in the largest unit that keeps it readable: `850ms`, `12s`, `4m 10s`, `3h 2m`, `2d 5h`. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** A JSON value on one line, shortened to `max` characters with `…`. */
export function brief(value: unknown, max = 80): string {
  if (value === undefined) return '-';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A short form of an engine id (`3f2a9c1d`), as the studio shows unknown engines. */
export function shortEngineId(engineId: string): string {
  return engineId.length > 8 ? engineId.slice(0, 8) : engineId;
}
