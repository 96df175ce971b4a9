/**
 * The payload codec (`createEngine({ codec })`): with an AES-GCM codec built on WebCrypto (the tested example
 * of docs/engine.md, "Payload codec"), every payload a workflow's life stores — input, activity results, an
 * external completion, a heartbeat, signals, update arguments and results, workflow state, a child's input and
 * result, continue-as-new's input, a schedule's input, the result — is encrypted in the store (no stored
 * byte holds the plaintext), and comes back decrypted through the engine. Engines hand workflows over through
 * the codec (conditions on decoded text); an engine without the codec is refused by the store's marker; a
 * failing codec writes nothing. Over MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { CommitGroup, Condition, Operation, Storage } from '../storage/types';
import { createEngine } from './engine';
import { fencing, TestWorld } from './engine.test-support';
import { InvalidOptionsError, PayloadCodecError, PayloadCodecRequiredError } from './errors';
import { type PayloadCodec } from './payload-codec';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow, type WorkflowContext } from './workflow';

/** The example: AES-256-GCM with a random 12-byte IV per value, base64 `iv.ciphertext`. */
async function aesGcmCodec(
  name: string,
  rawKey?: Uint8Array<ArrayBuffer>,
): Promise<PayloadCodec & { key: CryptoKey }> {
  const key = await crypto.subtle.importKey(
    'raw',
    (rawKey ?? crypto.getRandomValues(new Uint8Array(32))) as Uint8Array<ArrayBuffer>,
    'AES-GCM',
    false,
    ['encrypt', 'decrypt'],
  );
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  return {
    name,
    key,
    async encode(text) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const sealed = await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv },
        key,
        new TextEncoder().encode(text),
      );
      return `${base64(iv)}.${base64(new Uint8Array(sealed))}`;
    },
    async decode(data) {
      const [iv, sealed] = data.split('.').map((part) => Buffer.from(part, 'base64'));
      const opened = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: iv! }, key, sealed!);
      return new TextDecoder().decode(opened);
    },
  };
}

/**
 * `storage` recording every value written to it (below the engine's codec): transient records — a buffered
 * signal, a heartbeat, an update request, an external completion — are deleted once used, so the test
 * checks every write, not only what is left at the end.
 */
function recordingWrites(storage: Storage, written: string[]): Storage {
  const record = (operations: readonly Operation[]) => {
    for (const operation of operations)
      if (operation.type === 'put') written.push(`${operation.key}=${operation.value}`);
  };
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'batch')
        return (operations: readonly Operation[]) => {
          record(operations);
          return target.batch(operations);
        };
      if (property === 'conditionalBatch')
        return (conditions: readonly Condition[], operations: readonly Operation[]) => {
          record(operations);
          return target.conditionalBatch(conditions, operations);
        };
      if (property === 'commitGroups' && target.commitGroups)
        return (groups: readonly CommitGroup[]) => {
          for (const group of groups) record(group.operations);
          return target.commitGroups!(groups);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Every stored key and value, raw. */
async function everything(storage: Storage): Promise<string> {
  const entries = await storage.scan('');
  return entries.map((entry) => `${entry.key}=${entry.value}`).join('\n');
}

const secret = 'CANARY-4111-1111-1111-1111';

const child = defineWorkflow({
  name: 'codec-child',
  version: 1,
  *run(_ctx, input: { card: string }) {
    return { charged: input.card };
  },
});

type State = { note?: string };

const order = defineWorkflow({
  name: 'codec-order',
  version: 1,
  *run(ctx: WorkflowContext<State>, input: { card: string; round?: number }) {
    const looked = yield* ctx.activity('look-up', () => ({ card: input.card, found: true }));
    const beat = yield* ctx.activity('slow', async (context) => {
      context.heartbeat({ progress: `${input.card} half-way` });
      await new Promise((resolve) => setTimeout(resolve, 5));
      return 'slow done';
    });
    const approved = yield* ctx.waitForSignal<{ by: string }>('approve');
    const charged = yield* ctx.startChild(child, { card: looked.card }, { id: `${ctx.workflowId}-child` });
    const external = yield* ctx.activity('bank', () => undefined, { completion: 'external' });
    if ((input.round ?? 1) < 2) return yield* ctx.continueAsNew({ ...input, round: 2 });
    return { looked, beat, approved, charged, external, note: ctx.state.note };
  },
  updates: {
    annotate: {
      handle: (state: State, arg) => {
        state.note = arg as string;
        return `noted ${arg as string}`;
      },
    },
  },
});

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('the payload codec on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  it('encrypts every payload a workflow stores, and the engine reads them back decrypted', async () => {
    const storage = await store.open();
    const codec = await aesGcmCodec('aes-256-gcm:test');
    const written: string[] = [];
    const engine = await createEngine({
      storage: recordingWrites(storage, written),
      workflows: [order, child],
      codec,
      ownership: 'workflow-lease',
    });
    const handle = await engine.start(order, { card: secret }, { id: 'order-1' });
    const finish = async (run: number) => {
      await engine.signal('order-1', 'approve', { by: `${secret} approver` });
      expect(await engine.update('order-1', 'annotate', `${secret} note ${run}`)).toBe(
        `noted ${secret} note ${run}`,
      );
      // The external activity: wait for it to be pending, then complete it with a secret.
      for (;;) {
        const pending = (await engine.describe('order-1')).pending;
        const leaf = pending?.kind === 'activity' ? pending.leaves[0] : undefined;
        if (leaf?.completionToken) {
          await engine.completeActivity(leaf.completionToken, `${secret} bank ${run}`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await finish(1);
    // Run 2 (continued as new with the secret in its input): the same again.
    for (;;) {
      if ((await engine.describe('order-1')).run === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await finish(2);
    const result = await handle.result();
    expect(result).toEqual({
      looked: { card: secret, found: true },
      beat: 'slow done',
      approved: { by: `${secret} approver` },
      charged: { charged: secret },
      external: `${secret} bank 2`,
      note: `${secret} note 2`,
    });
    await engine.schedule('nightly', { cron: '0 3 * * *', workflow: 'codec-order', input: { card: secret } });

    // Read back through the engine: decrypted.
    expect((await engine.describe('order-1')).input).toEqual({ card: secret, round: 2 });
    expect((await engine.history('order-1')).entries.length).toBeGreaterThan(0);
    expect(JSON.stringify(await engine.history('order-1'))).toContain(secret);
    expect((await engine.describeSchedule('nightly')).spec.input).toEqual({ card: secret });
    await engine.shutdown();

    // Every value ever written, and the store at the end: not one byte of the secret; envelopes naming the
    // codec instead.
    expect(written.length).toBeGreaterThan(20);
    expect(written.filter((entry) => entry.includes('CANARY'))).toEqual([]);
    for (const prefix of [
      'sig:',
      'act-hb:',
      'upd:',
      'upr:',
      'act-done:',
      'wf:',
      'wf-tl:',
      'wf-run:',
      'sched:',
    ])
      expect(
        written.some((entry) => entry.startsWith(prefix) && entry.includes('$shuttleCodec')),
        `an encoded ${prefix} value was written`,
      ).toBe(true);
    const raw = await everything(storage);
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain('CANARY');
    expect(raw).toContain('"$shuttleCodec":"aes-256-gcm:test"');
    // What operators need stays readable: ids, types, statuses.
    expect(raw).toContain('"status":"completed"');
    expect(raw).toContain('codec-order');
  });

  it('hands a workflow over between engines with the codec (conditions on decoded text), and refuses an engine without it', async () => {
    const storage = await store.open();
    const codec = await aesGcmCodec('aes-256-gcm:test');
    const world = new TestWorld({ storage });
    const first = await world.engine([order, child], { ...fencing, codec });
    await first.start(order, { card: secret, round: 2 }, { id: 'order-2' });
    for (;;) {
      if ((await first.describe('order-2')).pending?.kind === 'signal') break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const second = await world.engine([order, child], { ...fencing, codec });
    await first.shutdown();
    await second.signal('order-2', 'approve', { by: 'second' });
    for (;;) {
      const leaf = (await second.describe('order-2')).pending?.leaves?.[0];
      if (leaf?.completionToken) {
        await second.completeActivity(leaf.completionToken, 'ok');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await second.handle('order-2').result()).toMatchObject({
      looked: { card: secret },
      external: 'ok',
    });
    const owners = (await second.timeline('order-2')).filter((entry) => entry.kind === 'claim-taken-over');
    expect(owners.length).toBeGreaterThan(0);
    await world.shutdownAll();

    const before = await everything(storage);
    await expect(
      createEngine({ storage, workflows: [order, child], ownership: 'workflow-lease' }),
    ).rejects.toThrow(PayloadCodecRequiredError);
    await expect(
      createEngine({ storage, workflows: [order, child], ownership: 'workflow-lease' }),
    ).rejects.toThrow(/encoded by the codec 'aes-256-gcm:test'/);
    expect(await everything(storage)).toBe(before);
  });

  it('a codec that fails to encode writes nothing; one that cannot decode says which key', async () => {
    const storage = await store.open();
    const good = await aesGcmCodec('aes-256-gcm:one');
    const engine = await createEngine({ storage, workflows: [order, child], codec: good });
    await engine.start(order, { card: secret, round: 2 }, { id: 'kept' });
    await engine.shutdown();
    const broken: PayloadCodec = {
      name: 'broken',
      encode: () => {
        throw new Error('the key service is down');
      },
      decode: () => {
        throw new Error('the key service is down');
      },
    };
    const failing = await createEngine({ storage, workflows: [order, child], codec: broken, recover: false });
    const before = await everything(storage);
    const attempt = failing.start(order, { card: 'x' }, { id: 'never' });
    await expect(attempt).rejects.toThrow(PayloadCodecError);
    await expect(failing.start(order, { card: 'x' }, { id: 'never' })).rejects.toThrow(
      /failed to encode a payload of stored key 'wf:never'.*the key service is down.*Nothing was written/,
    );
    expect(await everything(storage)).toBe(before);
    await expect(failing.describe('kept')).rejects.toThrow(
      /failed to decode a payload of stored key 'wf:kept'/,
    );
    await failing.shutdown();
  });

  it('decodes values of an older key after a rotation, and reads payloads stored before the codec as they are', async () => {
    const storage = await store.open();
    const plain = await createEngine({ storage, workflows: [order, child] });
    await plain.start(order, { card: 'plain-card', round: 2 }, { id: 'before' });
    await plain.shutdown();
    const rawKey = crypto.getRandomValues(new Uint8Array(32));
    const old = await aesGcmCodec('aes:2026-11', rawKey);
    const withOld = await createEngine({ storage, workflows: [order, child], codec: old });
    expect((await withOld.describe('before')).input).toEqual({ card: 'plain-card', round: 2 });
    await withOld.start(order, { card: secret, round: 2 }, { id: 'old-key' });
    await withOld.shutdown();
    const current = await aesGcmCodec('aes:2026-12');
    const rotated: PayloadCodec = {
      name: current.name,
      encode: (text) => current.encode(text),
      decode: (data, name) => (name === 'aes:2026-11' ? old.decode(data, name) : current.decode(data, name)),
    };
    const engine = await createEngine({ storage, workflows: [order, child], codec: rotated });
    expect((await engine.describe('old-key')).input).toEqual({ card: secret, round: 2 });
    await engine.signal('old-key', 'approve', { by: 'rotated' });
    await engine.shutdown();
    const raw = await everything(storage);
    expect(raw).toContain('"$shuttleCodec":"aes:2026-11"');
    expect(raw).toContain('"$shuttleCodec":"aes:2026-12"');
    expect(raw).not.toContain(secret);
  });
});

describe('the codec option', () => {
  it('is refused when it is not { name, encode, decode }', async () => {
    const storage = (await testStores()[0]!.open()) as Storage;
    for (const codec of [
      null,
      {},
      { name: '', encode: () => '', decode: () => '' },
      { name: 'x', encode: 'no' },
    ])
      await expect(createEngine({ storage, codec: codec as never })).rejects.toThrow(InvalidOptionsError);
    await expect(createEngine({ storage, codec: {} as never })).rejects.toThrow(
      /options.codec must be \{ name, encode\(text\), decode\(data, name\) \}/,
    );
  });
});
