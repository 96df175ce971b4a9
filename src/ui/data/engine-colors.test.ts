import { describe, expect, it } from 'vitest';
import { displayPalette, legibleOnBothThemes, relativeLuminance, withDisplayColors } from './engine-colors';

const engine = (engineId: string, color: string, startedAt: number) => ({ engineId, color, startedAt });

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

  it('keeps an engine’s own colour unless an earlier engine has it or it does not read on a theme', () => {
    expect(legibleOnBothThemes('#3D3D3D')).toBe(false); // charcoal on the dark chart
    expect(legibleOnBothThemes('#F0E442')).toBe(false); // yellow on the light chart
    const colored = withDisplayColors([
      engine('viewer', '#0072B2', 30), // the ninth engine: Tab A's blue again
      engine('a', '#0072B2', 10),
      engine('b', '#E69F00', 20),
      engine('g', '#3D3D3D', 25),
      engine('d', '#F0E442', 22),
    ]);
    const byId = new Map(colored.map((entry) => [entry.engineId, entry.color]));
    expect(byId.get('a')).toBe('#0072B2');
    expect(byId.get('b')).toBe('#E69F00');
    expect(byId.get('viewer')).not.toBe('#0072B2');
    for (const color of byId.values()) expect(legibleOnBothThemes(color)).toBe(true);
    expect(new Set(byId.values()).size).toBe(5);
    // The list keeps its order.
    expect(colored.map((entry) => entry.engineId)).toEqual(['viewer', 'a', 'b', 'g', 'd']);
  });

  it('gives twelve engines twelve colours, whatever they recorded, and every tab the same ones', () => {
    const engines = Array.from({ length: 12 }, (_, index) => engine(`e${index}`, '#0072B2', index));
    const colors = withDisplayColors(engines).map((entry) => entry.color);
    expect(new Set(colors).size).toBe(12);
    expect(withDisplayColors([...engines].reverse()).map((entry) => entry.color)).toEqual(
      [...colors].reverse(),
    );
  });
});
