/**
 * Positions in compiled code mapped back to the author's source, through the source map sucrase produces.
 *
 * Sucrase keeps line numbers but not columns (it removes type annotations), and maps the start of every
 * token it emits to the token's place in the source. A position of the compiled code is mapped through the
 * last mapped token at or before it on the same line: exact for a token's start, which is where syntax-tree
 * nodes start. The mappings are decoded by `@jridgewell/sourcemap-codec`.
 */
import { decode } from '@jridgewell/sourcemap-codec';

/** One mapped token: its column in the compiled line, and its line and column in the source (all 0-based). */
type Segment = { column: number; sourceLine: number; sourceColumn: number };

/** Where positions of a compiled file came from in its source. */
export class SourcePositions {
  readonly #lines: Segment[][] = [];

  /** @param mappings the `mappings` field of a version 3 source map of a single source */
  constructor(mappings: string) {
    for (const line of decode(mappings)) {
      const segments: Segment[] = [];
      for (const [column, , sourceLine, sourceColumn] of line)
        if (sourceLine !== undefined && sourceColumn !== undefined)
          segments.push({ column, sourceLine, sourceColumn }); // a segment without a source is unmapped
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
