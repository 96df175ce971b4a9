/**
 * What the command palette offers, and how typed text picks from it. Commands are plain data with a `run`
 * function; matching is pure: every word typed must appear in the title or keywords (case-insensitive), and
 * titles that start with the text rank first. Workflows matched by id prefix come from the engine and are
 * always shown in their own section.
 */

import type { IconName } from '../components/icons';

export type CommandSection = 'Workflows' | 'Screens' | 'Engines' | 'Actions' | 'Start a demo';

export type PaletteCommand = {
  id: string;
  section: CommandSection;
  title: string;
  /** A second line: what it does, or details. */
  subtitle?: string;
  keywords?: string;
  /** The icon beside it (default: its section's). */
  icon?: IconName;
  /** An engine chip to show beside it. */
  chip?: { color: string; shortLabel: string };
  run: () => void;
};

/** The score of `command` for `query`; null when it does not match. Higher is better. */
export function scoreCommand(
  command: Pick<PaletteCommand, 'title' | 'keywords' | 'section'>,
  query: string,
): number | null {
  const text = query.trim().toLowerCase();
  if (!text) return 0;
  const title = command.title.toLowerCase();
  const haystack = `${title} ${command.keywords?.toLowerCase() ?? ''} ${command.section.toLowerCase()}`;
  const words = text.split(/\s+/);
  if (!words.every((word) => haystack.includes(word))) return null;
  if (title.startsWith(text)) return 3;
  if (title.split(/[\s'’(—-]+/).some((part) => part.startsWith(words[0]!))) return 2;
  return 1;
}

/** The commands matching `query`, best first, keeping section order stable among equals. */
export function matchCommands(commands: readonly PaletteCommand[], query: string): PaletteCommand[] {
  const scored: { command: PaletteCommand; score: number; index: number }[] = [];
  commands.forEach((command, index) => {
    const score = command.section === 'Workflows' ? 0 : scoreCommand(command, query);
    if (score !== null) scored.push({ command, score, index });
  });
  if (!query.trim()) return scored.map((item) => item.command);
  return scored.sort((a, b) => b.score - a.score || a.index - b.index).map((item) => item.command);
}

const sectionOrder: readonly CommandSection[] = [
  'Workflows',
  'Screens',
  'Engines',
  'Actions',
  'Start a demo',
];

/** Commands grouped by section, sections in a fixed order (workflows found by id first). */
export function groupBySection(
  commands: readonly PaletteCommand[],
): { section: CommandSection; commands: PaletteCommand[] }[] {
  const groups = new Map<CommandSection, PaletteCommand[]>();
  for (const command of commands) {
    const list = groups.get(command.section) ?? [];
    list.push(command);
    groups.set(command.section, list);
  }
  return sectionOrder
    .filter((section) => groups.has(section))
    .map((section) => ({ section, commands: groups.get(section)! }));
}
