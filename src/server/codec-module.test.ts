/**
 * `--codec MODULE` (codec-module.ts): a codec loaded from the operator's module, refused with one clear line
 * when the file is missing, exports nothing or exports something that is not a codec; and the operator
 * commands' engine (operator/open.ts) on an encoded embedded store — refused without the codec, reading the
 * payloads back with it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, defineWorkflow, PayloadCodecRequiredError } from '../engine';
import { loadCodecModule } from './codec-module';
import { openForOperator } from './operator/open';
import { openStore, StartupError } from './store';

const dir = mkdtempSync(join(tmpdir(), 'shuttle-codec-module-'));

function module(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

/** Base64 of the JSON text: not secret, but every stored payload visibly changed (encryption: payload-codec.test.ts). */
const codecFile = module(
  'codec.mjs',
  `export const codec = {
  name: 'base64-test',
  encode: (text) => Buffer.from(text, 'utf8').toString('base64'),
  decode: async (data) => Buffer.from(data, 'base64').toString('utf8'),
};
`,
);

const waiting = defineWorkflow({
  name: 'waiting',
  version: 1,
  *run(ctx, input: { card: string }) {
    yield* ctx.waitForSignal('go');
    return input.card;
  },
});

describe('--codec MODULE', () => {
  it('loads `codec` (or the default export) and refuses anything else with one line naming the file', async () => {
    const codec = await loadCodecModule(codecFile);
    expect(codec.name).toBe('base64-test');
    expect(await codec.decode(await codec.encode('{"a":1}'), codec.name)).toBe('{"a":1}');
    const byDefault = module(
      'default.mjs',
      'export default { name: "d", encode: (t) => t, decode: (d) => d };',
    );
    expect((await loadCodecModule(byDefault)).name).toBe('d');

    await expect(loadCodecModule(join(dir, 'missing.mjs'))).rejects.toThrow(StartupError);
    await expect(loadCodecModule(join(dir, 'missing.mjs'))).rejects.toThrow(
      /--codec .*missing\.mjs: no such file/,
    );
    const none = module('none.mjs', 'export const other = 1;');
    await expect(loadCodecModule(none)).rejects.toThrow(
      /exports no codec; export one as `export const codec/,
    );
    const bad = module('bad.mjs', 'export const codec = { name: "x", encode: "no" };');
    await expect(loadCodecModule(bad)).rejects.toThrow(/--codec .*bad\.mjs: options\.codec must be \{ name/);
    const throws = module('throws.mjs', 'throw new Error("no key in the environment");');
    await expect(loadCodecModule(throws)).rejects.toThrow(
      /the module threw while loading: Error: no key in the environment/,
    );
  });

  it('the operator commands open an encoded store with it, and are refused without it', async () => {
    const dataDir = join(dir, 'db');
    const store = await openStore({ dataDir });
    const engine = await createEngine({
      storage: store.storage,
      workflows: [waiting],
      codec: await loadCodecModule(codecFile),
    });
    await engine.start(waiting, { card: 'CARD-4242' }, { id: 'encoded' });
    await engine.shutdown();
    const raw = (await store.storage.scan('')).map((entry) => entry.value).join('\n');
    expect(raw).not.toContain('CARD-4242');
    expect(raw).toContain('"$shuttleCodec":"base64-test"');
    await store.close();

    await expect(openForOperator({ dataDir, workflows: [], demos: false })).rejects.toThrow(
      PayloadCodecRequiredError,
    );
    const opened = await openForOperator({ dataDir, workflows: [], demos: false, codec: codecFile });
    try {
      expect((await opened.engine.describe('encoded')).input).toEqual({ card: 'CARD-4242' });
    } finally {
      await opened.close();
    }
  }, 60_000);
});
