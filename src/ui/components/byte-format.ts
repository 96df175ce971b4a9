/**
 * Sizes in words: bytes in human units, as the Engines screen's storage card and the event detail's payload
 * headings show them.
 */

const units = ['bytes', 'KB', 'MB', 'GB', 'TB'] as const;

/** "0 bytes", "512 bytes", "1.5 KB", "23 MB", "1.07 GB" (powers of 1,024; three significant digits). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${Math.round(value)} ${value === 1 ? 'byte' : 'bytes'}`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${Number(value.toFixed(digits)).toLocaleString('en')} ${units[unit]}`;
}
