import { describe, expect, it } from 'vitest';
import { drillDefinitions } from './drills';

describe('the drills’ texts', () => {
  it('say both ways a start that lost the race is refused: the id exists, or the winner holds its claim', () => {
    const race = drillDefinitions.find((drill) => drill.id === 'race')!;
    expect(race.description).toContain('the id exists');
    expect(race.description).toContain('the winner holds its claim');
    expect(race.description).not.toMatch(/told the id exists/);
  });
});
