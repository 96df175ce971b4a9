/**
 * The colour each engine is drawn in. An engine's presence record carries the colour its host picked from
 * its number (a palette of 8, so engine 9 repeats engine 1's blue), and two of those colours hardly show on
 * one of the themes (a charcoal line on the dark chart, a yellow one on the light chart). So the studio draws
 * engines in colours of its own choosing, by one rule that depends on the engine alone:
 *
 * - Every colour of `displayPalette` reads on both themes: relative luminance between 0.13 and 0.43, so at
 *   least 3:1 against the dark surface and 2.2:1 or more against white.
 * - An engine's colour is `displayPalette[ordinal % 12]`, its ordinal being its number in the database (the
 *   counter its label came from: `Tab A` is 0, `worker-3` is 2). The palette's order follows the recorded
 *   one, with the two illegible colours' places taken by colours unlike their neighbours', so Tab D is
 *   violet and Tab G leaf green.
 * - So the colour an engine is drawn in never changes: not when another engine stops, ages out of presence
 *   or is forgotten, and not between tabs or from one month to the next (the ordinal is kept in the engine
 *   directory with its label). Any 12 consecutive engines have 12 different colours. Past 12, colours repeat
 *   (Tab M is Tab A's blue), and two engines 12 apart listed together share a colour: their chips' letters
 *   tell them apart. A tab that keeps its label across a reload or restart keeps its ordinal, so its new
 *   engine has its old engine's colour, as it has its label.
 * - A record of an older build carries no ordinal: it is read from the label (`Tab C`, `worker-3`), else
 *   taken from a hash of the engine id (still fixed for that engine).
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

/** `A → 0`, `Z → 25`, `AA → 26` (spreadsheet column letters, as labels use them). */
function ordinalOfLetters(letters: string): number {
  let value = 0;
  for (const char of letters) value = value * 26 + (char.charCodeAt(0) - 64);
  return value - 1;
}

/** An engine's number in its database: recorded, else read from its label, else null. */
export function ordinalOf(engine: { ordinal?: number | null | undefined; label?: string }): number | null {
  if (typeof engine.ordinal === 'number' && Number.isSafeInteger(engine.ordinal) && engine.ordinal >= 0)
    return engine.ordinal;
  const label = engine.label ?? '';
  const letters = /^Tab ([A-Z]{1,3})$/.exec(label)?.[1];
  if (letters) return ordinalOfLetters(letters);
  const worker = /^worker-(\d{1,9})$/.exec(label)?.[1];
  if (worker && Number(worker) >= 1) return Number(worker) - 1;
  return null;
}

/** The colour the studio draws an engine in (see the module comment). */
export function displayColorOf(engine: {
  engineId: string;
  ordinal?: number | null | undefined;
  label?: string;
}): string {
  const ordinal = ordinalOf(engine);
  if (ordinal !== null) return displayPalette[ordinal % displayPalette.length]!;
  const hash = [...engine.engineId].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) >>> 0, 7);
  return displayPalette[hash % displayPalette.length]!;
}

/** `engines` with the colours the studio draws them in (same order, other fields untouched). */
export function withDisplayColors<
  E extends Pick<EngineRecord, 'engineId' | 'color' | 'label'> & { ordinal?: number | null | undefined },
>(engines: readonly E[]): E[] {
  return engines.map((engine) => {
    const color = displayColorOf(engine);
    return color === engine.color ? engine : { ...engine, color };
  });
}
