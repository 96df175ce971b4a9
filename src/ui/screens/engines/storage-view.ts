/**
 * Storage usage in words: the share of the quota, the largest parts (bytes in human units are
 * src/ui/components/byte-format.ts).
 */
import type { Result } from '../../../public/browser';

type StorageUsage = Result<'storageUsage'>;

/** The share of the quota used, as a percentage to show ("0.4%", "<0.1%", "37%"), or null without a quota. */
export function quotaShare(usage: Pick<StorageUsage, 'bytes' | 'quotaBytes'>): string | null {
  if (!usage.quotaBytes || usage.quotaBytes <= 0) return null;
  const percent = (usage.bytes / usage.quotaBytes) * 100;
  if (percent > 0 && percent < 0.1) return '<0.1%';
  return `${percent < 10 ? Number(percent.toFixed(1)) : Math.round(percent)}%`;
}

/** The largest `count` parts, largest first, each with its share of the total (0–1, for a bar). */
export function largestParts(
  usage: Pick<StorageUsage, 'bytes' | 'parts'>,
  count = 6,
): { name: string; bytes: number; share: number }[] {
  const total = Math.max(usage.bytes, ...usage.parts.map((part) => part.bytes), 1);
  return [...usage.parts]
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count)
    .map((part) => ({ ...part, share: part.bytes / total }));
}
