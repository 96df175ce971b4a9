import { describe, expect, it } from 'vitest';
import { TestWorld } from '../../engine/engine.test-support';
import { deleteDefinition, listStoredDefinitions, saveDefinition } from './definition-store';
import { compileDefinition } from './compile';

const source = (
  version: number,
  body = `yield* ctx.waitForSignal('go'); return 'v${version}';`,
) => `import { defineWorkflow } from 'shuttle';
export default defineWorkflow({
  name: 'authored',
  version: ${version},
  *run(ctx) {
    ${body}
  },
});
`;

describe('authored definitions in the store', () => {
  const options = (now = 1) => ({ savedBy: 'engine-A', reservedNames: new Set(['order']), now });

  it('saves, lists and refuses reserved names and invalid sources', async () => {
    const world = new TestWorld();
    const engine = await world.engine([]);
    const saved = await saveDefinition(world.storage, engine, source(1), options());
    expect(saved.outcome).toEqual({ ok: true, name: 'authored', version: 1, created: true });
    expect((await listStoredDefinitions(world.storage)).map((d) => `${d.name}@${d.version}`)).toEqual([
      'authored@1',
    ]);
    const reserved = await saveDefinition(
      world.storage,
      engine,
      source(1).replace("'authored'", "'order'"),
      options(),
    );
    expect(reserved.outcome).toMatchObject({ ok: false, reason: 'reserved' });
    const invalid = await saveDefinition(world.storage, engine, 'export default 1 +', options());
    expect(invalid.outcome).toMatchObject({ ok: false, reason: 'invalid' });
    expect(await listStoredDefinitions(world.storage)).toHaveLength(1);
  });

  it('refuses to change a version that unfinished workflows use, unless forced, and keeps old versions', async () => {
    const world = new TestWorld();
    const engine = await world.engine([]);
    await saveDefinition(world.storage, engine, source(1), options());
    const compiled = await compileDefinition(source(1), 'x.ts');
    if (!compiled.ok) throw new Error('compile');
    engine.register(compiled.definition);
    await engine.start('authored', undefined, { id: 'running-v1' });
    await world.idle();
    const changed = source(1, `yield* ctx.sleep(5); return 'changed';`);
    const refused = await saveDefinition(world.storage, engine, changed, options());
    expect(refused.outcome).toMatchObject({
      ok: false,
      reason: 'version-in-use',
      unfinished: 1,
      suggestedVersion: 2,
    });
    const bumped = source(2, `yield* ctx.sleep(5); return 'changed';`);
    expect((await saveDefinition(world.storage, engine, bumped, options())).outcome).toMatchObject({
      ok: true,
      version: 2,
    });
    expect((await listStoredDefinitions(world.storage)).map((d) => d.version)).toEqual([1, 2]);
    expect(await deleteDefinition(world.storage, engine, 'authored', 1)).toMatchObject({
      ok: false,
      reason: 'in-use',
    });
    expect(
      (await saveDefinition(world.storage, engine, changed, { ...options(), force: true })).outcome,
    ).toMatchObject({ ok: true, created: false });
    await engine.terminate('running-v1');
    expect(await deleteDefinition(world.storage, engine, 'authored', 1)).toEqual({ ok: true });
    expect((await listStoredDefinitions(world.storage)).map((d) => d.version)).toEqual([2]);
  });
});
