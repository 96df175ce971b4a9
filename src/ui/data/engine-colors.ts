/**
 * The colour each engine is drawn in. An engine's presence record carries the colour its host picked from
 * its number (a palette of 8, so engine 9 repeats engine 1's blue — a viewer tab opened after eight others
 * has Tab A's colour), and two of those colours hardly show on one of the themes (a charcoal line on the
 * dark chart, a yellow one on the light chart). So the studio draws engines in colours of its own choosing:
 *
 * - Every colour of `displayPalette` reads on both themes: relative luminance between 0.13 and 0.43, so at
 *   least 3:1 against the dark surface and 2.2:1 or more against white.
 * - An engine keeps its recorded colour when that colour reads on both themes and no engine listed before it
 *   (earlier start, then id) has it; otherwise it gets the first palette colour no engine before it has. The
 *   palette's order follows the recorded one, with the two illegible colours' places taken by colours unlike
 *   their neighbours', so Tab D is violet and Tab G leaf green.
 *   Engines listed together therefore never share a colour while there are at most 12, and every tab of the
 *   database assigns the same colours (the same list, the same rule). An engine's colour changes only when
 *   an engine listed before it stops being listed (10 minutes after it died).
 * - Chips still carry the label's letters: nobody has to tell engines apart by colour alone.
 */
import type { EngineRecord } from '../../public/browser';

/** Colours for engines, each legible on the light and the dark theme, told apart by hue and lightness. */
export const displayPalette: readonly string[] = [
  '#0072B2', // blue
  '#E69F00', // orange
  '#009E73', // bluish green
  '#8E6BBF', // violet (the fourth engine's yellow hardly shows on white, and a darker one reads as orange)
  '#D55E00', // vermillion
  '#56B4E9', // sky blue
  '#66A61E', // leaf green (the seventh engine's charcoal vanishes on the dark theme)
  '#CC79A7', // reddish purple
  '#A6761D', // brown
  '#E7298A', // magenta
  '#B8A000', // mustard
  '#737373', // grey
];

/** WCAG relative luminance of a `#rrggbb` colour, or null when it is not one. */
export function relativeLuminance(color: string): number | null {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color.trim());
  if (!match) return null;
  const [r, g, b] = match.slice(1).map((hex) => {
    const channel = parseInt(hex, 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Whether a colour reads on both themes (see the module comment). */
export function legibleOnBothThemes(color: string): boolean {
  const luminance = relativeLuminance(color);
  return luminance !== null && luminance >= 0.13 && luminance <= 0.43;
}

/** `engines` with the colours the studio draws them in (same order, other fields untouched). */
export function withDisplayColors<E extends Pick<EngineRecord, 'engineId' | 'color' | 'startedAt'>>(
  engines: readonly E[],
): E[] {
  const order = [...engines].sort((a, b) =>
    a.startedAt !== b.startedAt ? a.startedAt - b.startedAt : a.engineId < b.engineId ? -1 : 1,
  );
  const taken = new Set<string>();
  const colors = new Map<string, string>();
  for (const engine of order) {
    const own = engine.color.trim().toUpperCase();
    let color: string;
    if (legibleOnBothThemes(own) && !taken.has(own)) color = own;
    else
      color =
        displayPalette.find((candidate) => !taken.has(candidate)) ??
        displayPalette[colors.size % displayPalette.length]!;
    taken.add(color);
    colors.set(engine.engineId, color);
  }
  return engines.map((engine) => {
    const color = colors.get(engine.engineId)!;
    return color === engine.color ? engine : { ...engine, color };
  });
}
