import { describe, expect, it } from 'vitest';
import type { DefinitionInfo } from '../../public/browser';
import {
  findDefinition,
  groupDefinitions,
  startableDefinitions,
  takenNames,
  typeChoices,
} from './definition-catalog';

function definition(name: string, version: number, extra: Partial<DefinitionInfo> = {}): DefinitionInfo {
  return {
    name,
    version,
    description: null,
    sampleInput: null,
    queries: [],
    updates: [],
    builtIn: false,
    title: null,
    childOnly: false,
    source: `// ${name} v${version}`,
    savedAt: 1,
    savedBy: 'e',
    registered: true,
    loadProblems: null,
    ...extra,
  };
}

const all = [
  definition('order', 1, { builtIn: true }),
  definition('countdown', 1, { builtIn: true }),
  definition('zeta', 1),
  definition('greeter', 1),
  definition('greeter', 3, { registered: false }),
  definition('greeter', 2),
];

describe('the definition catalog', () => {
  it('groups saved versions by name, newest first, apart from the built-ins', () => {
    const { saved, builtIns } = groupDefinitions(all);
    expect(saved.map((group) => [group.name, group.versions.map((d) => d.version)])).toEqual([
      ['greeter', [3, 2, 1]],
      ['zeta', [1]],
    ]);
    expect(builtIns.map((d) => d.name)).toEqual(['order', 'countdown']);
  });

  it('finds a version, the newest one, or a built-in by name', () => {
    expect(findDefinition(all, 'greeter', 2)?.version).toBe(2);
    expect(findDefinition(all, 'greeter', null)?.version).toBe(3);
    expect(findDefinition(all, 'order', null)?.builtIn).toBe(true);
    expect(findDefinition(all, 'greeter', 9)).toBeNull();
    expect(findDefinition(all, 'nope', null)).toBeNull();
  });

  it('offers to start one entry per name: its newest registered version', () => {
    expect(startableDefinitions(all).map((d) => `${d.name}@${d.version}`)).toEqual([
      'order@1',
      'countdown@1',
      'greeter@2',
      'zeta@1',
    ]);
    expect(takenNames(all)).toEqual(new Set(['order', 'countdown', 'zeta', 'greeter']));
  });
});

describe('typeChoices', () => {
  it('lists each name once, built-ins first, and names the versions of a name defined more than once', () => {
    expect(typeChoices(all)).toEqual([
      { name: 'order', versions: [1], label: 'order' },
      { name: 'countdown', versions: [1], label: 'countdown' },
      { name: 'greeter', versions: [1, 2, 3], label: 'greeter · v1, v2, v3' },
      { name: 'zeta', versions: [1], label: 'zeta' },
    ]);
  });
});
