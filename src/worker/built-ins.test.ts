import { describe, expect, it } from 'vitest';
import { builtInWorkflows } from '../workflows';
import { builtInInfo } from './built-ins';
import { compileDefinition } from '../host/authoring/compile';

describe('built-in definitions as the studio shows them', () => {
  it('has the source of every built-in, and each source compiles into that very definition', async () => {
    for (const definition of builtInWorkflows) {
      const info = builtInInfo.get(definition.name);
      expect(info?.source, definition.name).toEqual(expect.stringContaining('defineWorkflow'));
      const compiled = await compileDefinition(info!.source!, `${definition.name}.ts`);
      expect(compiled.ok && { name: compiled.definition.name, version: compiled.definition.version }).toEqual(
        { name: definition.name, version: definition.version },
      );
    }
  });

  it('titles the demos and marks the child types', () => {
    expect(builtInInfo.get('order')).toMatchObject({ title: 'Order fulfilment', childOnly: false });
    expect(builtInInfo.get('shipment')).toMatchObject({ title: null, childOnly: true });
    expect(builtInInfo.get('fan-out-task')).toMatchObject({ childOnly: true });
  });
});
