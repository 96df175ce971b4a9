import { describe, expect, it } from 'vitest';
import { builtInInfo } from '../../../worker/built-ins';
import { compileDefinition } from '../../../host/authoring/compile';
import {
  blankDefinition,
  readDeclaration,
  templateFrom,
  unusedName,
  withName,
  withVersion,
} from './source-edits';

const source = `type Input = { name: string; version: number };
const label = { name: 'not-this-one' };
export default defineWorkflow({
  name: 'greeter',
  version: 3,
  *run(ctx, input: Input) {},
});
`;

describe('source edits', () => {
  it('reads the declared name and version inside defineWorkflow, not earlier look-alikes', () => {
    expect(readDeclaration(source)).toEqual({ name: 'greeter', version: 3 });
    expect(readDeclaration('export default 1;')).toEqual({ name: null, version: null });
  });

  it('bumps the version and renames in place, leaving everything else as it was', () => {
    const bumped = withVersion(source, 4)!;
    expect(bumped).toBe(source.replace('version: 3', 'version: 4'));
    const renamed = withName(source, 'welcomer')!;
    expect(renamed).toBe(source.replace("name: 'greeter'", "name: 'welcomer'"));
    expect(withVersion('export default {};', 2)).toBeNull();
    expect(withName('export default {};', 'x')).toBeNull();
  });

  it('turns a built-in demo into a template that imports shuttle and compiles under its new name', async () => {
    const template = templateFrom(builtInInfo.get('order')!.source!, 'my-order');
    expect(template).not.toContain("'../engine'");
    expect(template).toContain("from 'shuttle'");
    const compiled = await compileDefinition(template, 'my-order.ts');
    expect(compiled.ok && [compiled.definition.name, compiled.definition.version]).toEqual(['my-order', 1]);
  });

  it('starts a blank definition that compiles, and picks names nobody uses', async () => {
    const compiled = await compileDefinition(blankDefinition('hello'), 'hello.ts');
    expect(compiled.ok && compiled.definition.name).toBe('hello');
    expect(unusedName('hello', new Set())).toBe('hello');
    expect(unusedName('hello', new Set(['hello', 'hello-2']))).toBe('hello-3');
  });
});
