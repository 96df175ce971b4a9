/**
 * Positions in compiled code mapped back to the author's source, through the source map sucrase produces.
 *
 * Sucrase keeps line numbers but not columns (it removes type annotations), and maps the start of every
 * token it emits to the token's place in the source. A position of the compiled code is mapped through the
 * last mapped token at or before it on the same line: exact for a token's start, which is where syntax-tree
 * nodes start.
 */

const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const digitOf = new Map([...base64].map((char, index) => [char, index]));

/** One mapped token: its column in the compiled line, and its line and column in the source (all 0-based). */
type Segment = { column: number; sourceLine: number; sourceColumn: number };

/** Decodes the base64 VLQ numbers of one segment of a source map's `mappings`. */
function decodeSegment(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = digitOf.get(char);
    if (digit === undefined) throw new TypeError(`Invalid source map character ${JSON.stringify(char)}.`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
    value = 0;
    shift = 0;
  }
  return values;
}

/** Where positions of a compiled file came from in its source. */
export class SourcePositions {
  readonly #lines: Segment[][] = [];

  /** @param mappings the `mappings` field of a version 3 source map of a single source */
  constructor(mappings: string) {
    let sourceLine = 0;
    let sourceColumn = 0;
    for (const line of mappings.split(';')) {
      const segments: Segment[] = [];
      let column = 0;
      for (const text of line.split(',')) {
        if (text === '') continue;
        const [columnDelta = 0, , lineDelta, columnDeltaInSource] = decodeSegment(text);
        column += columnDelta;
        if (lineDelta === undefined || columnDeltaInSource === undefined) continue; // unmapped
        sourceLine += lineDelta;
        sourceColumn += columnDeltaInSource;
        segments.push({ column, sourceLine, sourceColumn });
      }
      this.#lines.push(segments.sort((a, b) => a.column - b.column));
    }
  }

  /**
   * The source position of a compiled position. Lines are 1-based and columns 0-based, as acorn counts them;
   * a position before any mapped token of its line keeps its line and column.
   */
  original(line: number, column: number): { line: number; column: number } {
    const segments = this.#lines[line - 1] ?? [];
    let found: Segment | undefined;
    for (const segment of segments) {
      if (segment.column > column) break;
      found = segment;
    }
    if (!found) return { line, column };
    return { line: found.sourceLine + 1, column: found.sourceColumn + (column - found.column) };
  }
}
