import { describe, expect, it } from 'vitest';
import { groupBySection, matchCommands, type PaletteCommand } from './palette-commands';

const command = (
  id: string,
  section: PaletteCommand['section'],
  title: string,
  keywords?: string,
): PaletteCommand => ({
  id,
  section,
  title,
  ...(keywords ? { keywords } : {}),
  run: () => undefined,
});

describe('command palette matching', () => {
  const commands = [
    command('a', 'Actions', 'Open another engine tab', 'new window'),
    command('b', 'Screens', 'Engines'),
    command('c', 'Actions', 'Toggle light / dark theme', 'theme mode'),
    command('w', 'Workflows', 'order-7'),
  ];

  it('keeps commands whose title or keywords hold every word, titles starting with the text first', () => {
    // Workflows were matched by id prefix in the engine already: they always stay.
    expect(matchCommands(commands, 'eng').map((item) => item.id)).toEqual(['b', 'a', 'w']);
    expect(matchCommands(commands, 'dark mode').map((item) => item.id)).toEqual(['c', 'w']);
    expect(matchCommands(commands, 'zzz').map((item) => item.id)).toEqual(['w']);
  });

  it('groups sections in a fixed order, workflows found by id first', () => {
    expect(groupBySection(matchCommands(commands, '')).map((group) => group.section)).toEqual([
      'Workflows',
      'Screens',
      'Actions',
    ]);
  });
});
