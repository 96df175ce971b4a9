/**
 * The key range a prefix scan covers, computed once for every adapter so they agree on the edges.
 *
 * Keys order by UTF-16 code units (JavaScript `<`, IndexedDB string order). The keys starting with `prefix`
 * are exactly the keys `k` with `prefix <= k < successor(prefix)`, where the successor drops trailing
 * U+FFFF code units and increments the last remaining one. This is exact for every string, unlike the common
 * `prefix + '\uffff'` upper bound, which misses keys such as `prefix + '\uffff\uffff'`. A prefix made only of
 * U+FFFF (or the empty prefix) has no upper bound.
 */

/** A half-open range of keys: from `lower` (inclusive unless `lowerOpen`) up to `upper` (exclusive). */
export type KeyRange = {
  lower: string;
  lowerOpen: boolean;
  /** Exclusive upper bound; `undefined` means unbounded. */
  upper: string | undefined;
};

/** The smallest string greater than every string that starts with `prefix`, or `undefined` if none exists. */
export function prefixSuccessor(prefix: string): string | undefined {
  let end = prefix.length;
  while (end > 0 && prefix.charCodeAt(end - 1) === 0xffff) end--;
  if (end === 0) return undefined;
  return prefix.slice(0, end - 1) + String.fromCharCode(prefix.charCodeAt(end - 1) + 1);
}

/**
 * The range of a scan: keys starting with `prefix`, and strictly after `after` in the scan direction (above
 * it going forward, below it in `reverse`). Returns `undefined` when the range is empty.
 */
export function scanRange(prefix: string, after: string | undefined, reverse: boolean): KeyRange | undefined {
  const range: KeyRange = { lower: prefix, lowerOpen: false, upper: prefixSuccessor(prefix) };
  if (after !== undefined) {
    if (!reverse && after >= range.lower) {
      range.lower = after;
      range.lowerOpen = true;
    }
    if (reverse && (range.upper === undefined || after < range.upper)) range.upper = after;
  }
  if (range.upper !== undefined && range.lower >= range.upper) return undefined;
  return range;
}
