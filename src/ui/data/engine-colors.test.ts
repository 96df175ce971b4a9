import { describe, expect, it } from 'vitest';
import {
  displayColorOf,
  displayPalette,
  legibleOnBothThemes,
  ordinalOf,
  relativeLuminance,
  withDisplayColors,
} from './engine-colors';

/** Contrast ratio of two luminances. */
const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

describe('engine colours', () => {
  it('every display colour reads on both themes', () => {
    const white = 1;
    const darkSurface = relativeLuminance('#151a22')!;
    for (const color of displayPalette) {
      const luminance = relativeLuminance(color)!;
      expect(contrast(luminance, darkSurface), `${color} on the dark theme`).toBeGreaterThanOrEqual(3);
      expect(contrast(luminance, white), `${color} on the light theme`).toBeGreaterThanOrEqual(2.2);
    }
    expect(new Set(displayPalette).size).toBe(displayPalette.length);
  });

  it('draws an engine in the colour of its ordinal, whatever it recorded and whoever else is listed', () => {
    expect(legibleOnBothThemes('#3D3D3D')).toBe(false); // charcoal on the dark chart
    expect(legibleOnBothThemes('#F0E442')).toBe(false); // yellow on the light chart
    const a = { engineId: 'a', label: 'Tab A', color: '#0072B2', ordinal: 0 };
    const d = { engineId: 'd', label: 'Tab D', color: '#F0E442', ordinal: 3 };
    const g = { engineId: 'g', label: 'Tab G', color: '#3D3D3D', ordinal: 6 };
    const viewer = { engineId: 'viewer', label: 'Tab I', color: '#0072B2', ordinal: 8 };
    const all = withDisplayColors([viewer, a, d, g]);
    expect(all.map((entry) => entry.color)).toEqual([
      displayPalette[8],
      displayPalette[0],
      displayPalette[3],
      displayPalette[6],
    ]);
    for (const entry of all) expect(legibleOnBothThemes(entry.color)).toBe(true);
    // Tab A ages out of the list: nobody else changes colour (the old rule recoloured every later engine).
    const later = withDisplayColors([viewer, d, g]);
    expect(later.map((entry) => entry.color)).toEqual([
      displayPalette[8],
      displayPalette[3],
      displayPalette[6],
    ]);
    // Nor does a colour move to another engine: whatever else is listed, each keeps its own.
    expect(withDisplayColors([g])[0]!.color).toBe(displayPalette[6]);
    // The list keeps its order.
    expect(all.map((entry) => entry.engineId)).toEqual(['viewer', 'a', 'd', 'g']);
  });

  it('gives any twelve consecutive engines twelve colours; the thirteenth repeats the first', () => {
    for (const first of [0, 5, 100]) {
      const engines = Array.from({ length: 12 }, (_, index) => ({
        engineId: `e${first + index}`,
        label: `Tab ${first + index}`,
        color: '#0072B2',
        ordinal: first + index,
      }));
      expect(new Set(withDisplayColors(engines).map((entry) => entry.color)).size).toBe(12);
    }
    expect(displayColorOf({ engineId: 'm', ordinal: 12 })).toBe(
      displayColorOf({ engineId: 'a', ordinal: 0 }),
    );
  });

  it('reads the ordinal of an older record from its label, else keeps a colour fixed by its id', () => {
    expect(ordinalOf({ label: 'Tab A' })).toBe(0);
    expect(ordinalOf({ label: 'Tab AB' })).toBe(27);
    expect(ordinalOf({ label: 'worker-3' })).toBe(2);
    expect(ordinalOf({ label: 'eu-west' })).toBeNull();
    expect(ordinalOf({ label: 'Tab C', ordinal: 7 })).toBe(7);
    expect(displayColorOf({ engineId: 'x', label: 'Tab C' })).toBe(displayPalette[2]);
    const named = displayColorOf({ engineId: 'e-1234', label: 'eu-west' });
    expect(displayPalette).toContain(named);
    expect(displayColorOf({ engineId: 'e-1234', label: 'eu-west' })).toBe(named);
  });
});
