/**
 * The payload codec (`createEngine({ codec })`): user code that transforms every payload — workflow inputs
 * and results, activity results, signal payloads, update arguments and results, heartbeat details, workflow
 * state, schedule inputs — on its way into the store and back, e.g. to encrypt it. One mechanism, at the
 * storage boundary: the engine wraps its store (`CodecStorage`), so every writer in the engine is covered
 * without knowing of it, and the codec may be asynchronous (WebCrypto is).
 *
 * Only payload fields are encoded. What the engine, the studio and the operators need to find and reason
 * about a workflow stays readable: ids, types, statuses, times, claims, timelines, search attributes (they
 * are an index), error names and messages. Each encoded field becomes an envelope
 * `{ "$shuttleCodec": <codec name>, "data": <the codec's output> }` in place of the value; a payload written
 * before the codec was configured stays plain and is read as it is.
 *
 * Conditions compare stored text exactly (storage/types.ts); the engine conditions on the text it read or
 * wrote, which is the decoded text. So the store translates a condition's expected text back to the stored
 * text: from what it last read or wrote for that key, else by reading the key and decoding it (the batch
 * still compares the stored text atomically, so a change in between fails the condition, as it should).
 *
 * A store written with a codec carries a marker (`payload-codec-marker`); an engine without a codec refuses
 * to open it (`PayloadCodecRequiredError`), so a worker missing the codec can never feed envelopes to
 * workflow code as if they were its data.
 */
import type { Condition, Entry, Operation, ScanOptions, Storage } from '../storage/types';
import { InvalidOptionsError, PayloadCodecError, PayloadCodecRequiredError } from './errors';
import { keys } from './keys';

/** Transforms a payload's JSON text for storage and back; `encode` and `decode` may be async. */
export type PayloadCodec = {
  /**
   * Names what encoded a value (stored in every envelope and given back to `decode`): e.g.
   * `'aes-256-gcm:key-2026-12'`, so a codec can keep decoding values of an older key after a rotation.
   * 1–100 characters.
   */
  readonly name: string;
  /** The stored form of `text` (a payload's JSON). */
  encode(text: string): string | Promise<string>;
  /** The JSON text back from `data`, which the codec named `name` encoded. */
  decode(data: string, name: string): string | Promise<string>;
};

const codecMarkerKey = keys.payloadCodecMarker;

/** The field that marks an encoded payload. */
const envelopeField = '$shuttleCodec';

type Envelope = { [envelopeField]: string; data: string };

function isEnvelope(value: unknown): value is Envelope {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[envelopeField] === 'string' &&
    typeof (value as Record<string, unknown>).data === 'string'
  );
}

/** A path to payload fields inside a stored value: names, `*` for every element of an array. */
type Path = readonly string[];

const recordPaths: Path[] = [['input'], ['result']];
const historyPaths: Path[] = [['value'], ['arg'], ['stateAfter']];

/** The payload fields of each kind of stored value, by key prefix (keys.ts). Other keys hold no payload. */
const payloadPaths: readonly { prefix: string; paths: readonly Path[] }[] = [
  { prefix: 'wf:', paths: recordPaths },
  { prefix: 'wf-ckpt:', paths: [['state']] },
  {
    prefix: 'wf-run:',
    paths: [
      ['record', 'input'],
      ['record', 'result'],
      ['checkpoint', 'state'],
    ],
  },
  // Commit records (history `h`, checkpoint `c`) and the earlier layout's single timeline entries (no payload).
  {
    prefix: 'wf-tl:',
    paths: [...historyPaths.map((path) => ['h', '*', ...path]), ['c', 'state']],
  },
  { prefix: 'wf-hist:', paths: historyPaths },
  { prefix: 'sig:', paths: [['payload']] },
  { prefix: 'act-done:', paths: [['value']] },
  { prefix: 'act-hb:', paths: [['details']] },
  { prefix: 'upd:', paths: [['arg']] },
  { prefix: 'upr:', paths: [['value']] },
  { prefix: 'sched:', paths: [['spec', 'input']] },
];

function pathsOf(key: string): readonly Path[] | null {
  for (const entry of payloadPaths) if (key.startsWith(entry.prefix)) return entry.paths;
  return null;
}

/** Replaces, in place, every value at `path` under `node` by `transform(value)`. */
async function mapPath(
  node: unknown,
  path: Path,
  transform: (value: unknown) => Promise<unknown>,
): Promise<void> {
  if (typeof node !== 'object' || node === null) return;
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (head === '*') {
    if (!Array.isArray(node)) return;
    for (const element of node) await mapPath(element, rest, transform);
    return;
  }
  const container = node as Record<string, unknown>;
  if (!(head in container)) return;
  if (rest.length === 0) {
    if (container[head] !== undefined) container[head] = await transform(container[head]);
    return;
  }
  await mapPath(container[head], rest, transform);
}

/** Checks `codec` (createEngine's `codec` option). */
export function checkPayloadCodec(codec: unknown): PayloadCodec {
  const candidate = codec as Partial<PayloadCodec> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.name !== 'string' ||
    candidate.name.length === 0 ||
    candidate.name.length > 100 ||
    typeof candidate.encode !== 'function' ||
    typeof candidate.decode !== 'function'
  )
    throw new InvalidOptionsError(
      'options.codec must be { name, encode(text), decode(data, name) }: a name of 1–100 characters and two functions (they may return promises).',
    );
  return candidate as PayloadCodec;
}

/** A store's codec marker: which codec first wrote to it. */
export type CodecMarker = { codec: string; establishedAt: number };

/**
 * Stamps the marker on a store an engine with `codec` opens, or refuses a store with a marker to an engine
 * without one. Idempotent; run by `createEngine` before anything else is read.
 */
export async function checkCodecMarker(
  storage: Storage,
  codec: PayloadCodec | null,
  now: number,
): Promise<void> {
  const raw = await storage.get(codecMarkerKey);
  if (raw !== null) {
    if (codec) return;
    let name = 'an unknown codec';
    try {
      name = `'${(JSON.parse(raw) as CodecMarker).codec}'`;
    } catch {
      // a corrupt marker still says the store is encoded
    }
    throw new PayloadCodecRequiredError(name);
  }
  if (!codec) return;
  const marker: CodecMarker = { codec: codec.name, establishedAt: now };
  await storage.conditionalBatch(
    [{ key: codecMarkerKey, expected: null }],
    [{ type: 'put', key: codecMarkerKey, value: JSON.stringify(marker) }],
  );
}

/** At most this many keys' last decoded/stored text pairs are remembered (conditions use them). */
const rememberedKeys = 10_000;

/**
 * `storage` with `codec` applied to the payload fields of every value written and read (see the module
 * comment). Everything else passes through unchanged.
 */
export class CodecStorage implements Storage {
  readonly #inner: Storage;
  readonly #codec: PayloadCodec;
  /** key → the decoded text and the stored text of its last read or write through this store. */
  readonly #known = new Map<string, { decoded: string; stored: string }>();

  constructor(inner: Storage, codec: PayloadCodec) {
    this.#inner = inner;
    this.#codec = codec;
    if (inner.usage) this.usage = () => inner.usage!();
    if (inner.commitGroups)
      this.commitGroups = async (groups) =>
        inner.commitGroups!(
          await Promise.all(
            groups.map(async (group) => ({
              conditions: await this.#storedConditions(group.conditions),
              operations: await this.#encodeOperations(group.operations),
            })),
          ),
        );
    if (inner.watch) this.watch = (prefix, listener) => inner.watch!(prefix, listener);
    if (inner.syncWatchers) this.syncWatchers = () => inner.syncWatchers!();
  }

  get capabilities() {
    return this.#inner.capabilities;
  }

  usage?: Storage['usage'];
  commitGroups?: Storage['commitGroups'];
  watch?: Storage['watch'];
  syncWatchers?: Storage['syncWatchers'];

  #remember(key: string, decoded: string, stored: string): void {
    if (decoded === stored) {
      this.#known.delete(key);
      return;
    }
    this.#known.delete(key);
    this.#known.set(key, { decoded, stored });
    if (this.#known.size > rememberedKeys) {
      const oldest = this.#known.keys().next();
      if (!oldest.done) this.#known.delete(oldest.value);
    }
  }

  /** The stored form of `value` for `key`. */
  async #encode(key: string, value: string): Promise<string> {
    const paths = pathsOf(key);
    if (!paths) return value;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return value;
    }
    let changed = false;
    for (const path of paths)
      await mapPath(parsed, path, async (field) => {
        changed = true;
        let data: string;
        try {
          data = await this.#codec.encode(JSON.stringify(field));
        } catch (error) {
          throw new PayloadCodecError('encode', key, this.#codec.name, error);
        }
        if (typeof data !== 'string')
          throw new PayloadCodecError(
            'encode',
            key,
            this.#codec.name,
            new TypeError(`encode returned ${typeof data}, not a string`),
          );
        return { [envelopeField]: this.#codec.name, data } satisfies Envelope;
      });
    if (!changed) return value;
    const stored = JSON.stringify(parsed);
    this.#remember(key, value, stored);
    return stored;
  }

  /** The decoded form of `stored` for `key`. */
  async #decode(key: string, stored: string | null): Promise<string | null> {
    if (stored === null) {
      this.#known.delete(key);
      return null;
    }
    const paths = pathsOf(key);
    if (!paths || !stored.includes(envelopeField)) return stored;
    const known = this.#known.get(key);
    if (known?.stored === stored) return known.decoded;
    let parsed: unknown;
    try {
      parsed = JSON.parse(stored);
    } catch {
      return stored;
    }
    for (const path of paths)
      await mapPath(parsed, path, async (field) => {
        if (!isEnvelope(field)) return field;
        let text: string;
        try {
          text = await this.#codec.decode(field.data, field[envelopeField]);
          return JSON.parse(text) as unknown;
        } catch (error) {
          throw new PayloadCodecError('decode', key, field[envelopeField], error);
        }
      });
    const decoded = JSON.stringify(parsed);
    this.#remember(key, decoded, stored);
    return decoded;
  }

  async #encodeOperations(operations: readonly Operation[]): Promise<Operation[]> {
    return Promise.all(
      operations.map(async (operation) => {
        if (operation.type === 'delete') {
          this.#known.delete(operation.key);
          return operation;
        }
        return { ...operation, value: await this.#encode(operation.key, operation.value) };
      }),
    );
  }

  /** Conditions on decoded text, translated to the stored text they mean. */
  async #storedConditions(conditions: readonly Condition[]): Promise<Condition[]> {
    const unknown: Condition[] = [];
    const translated = conditions.map((condition) => {
      if (condition.expected === null || !pathsOf(condition.key)) return condition;
      const known = this.#known.get(condition.key);
      if (known?.decoded === condition.expected) return { key: condition.key, expected: known.stored };
      unknown.push(condition);
      return condition;
    });
    if (unknown.length === 0) return translated;
    const stored = await this.#inner.getMany(unknown.map((condition) => condition.key));
    const storedOf = new Map<string, string>();
    await Promise.all(
      unknown.map(async (condition, index) => {
        const raw = stored[index] ?? null;
        if (raw !== null && (await this.#decode(condition.key, raw)) === condition.expected)
          storedOf.set(condition.key, raw);
      }),
    );
    return translated.map((condition) => {
      const raw = storedOf.get(condition.key);
      return raw === undefined ? condition : { key: condition.key, expected: raw };
    });
  }

  async get(key: string): Promise<string | null> {
    return this.#decode(key, await this.#inner.get(key));
  }

  async getMany(keys: readonly string[]): Promise<(string | null)[]> {
    const values = await this.#inner.getMany(keys);
    return Promise.all(values.map((value, index) => this.#decode(keys[index]!, value)));
  }

  async scan(prefix: string, options?: ScanOptions): Promise<Entry[]> {
    const entries = await this.#inner.scan(prefix, options);
    return Promise.all(
      entries.map(async (entry) => ({
        key: entry.key,
        value: (await this.#decode(entry.key, entry.value))!,
      })),
    );
  }

  async batch(operations: readonly Operation[]): Promise<void> {
    await this.#inner.batch(await this.#encodeOperations(operations));
  }

  async conditionalBatch(
    conditions: readonly Condition[],
    operations: readonly Operation[],
  ): Promise<boolean> {
    const [stored, encoded] = await Promise.all([
      this.#storedConditions(conditions),
      this.#encodeOperations(operations),
    ]);
    return this.#inner.conditionalBatch(stored, encoded);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
