/**
 * Search attributes: `ctx.setAttributes` writes the record and its index keys in the turn's commit; `list`
 * finds workflows by equality and ranges through the index, paged; the index always names exactly what the
 * records hold (after replacements, removals, a crash and takeover, continue-as-new, a new run, fork and
 * purge); bad attributes and bad filters are refused with `InvalidSearchAttributeError` and nothing written.
 * Over MemoryStorage, PostgreSQL and IndexedDB (fake-indexeddb).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '../storage/types';
import {
  attributeIndexKey,
  attributeIndexPrefix,
  encodeNumber,
  encodeString,
  type SearchAttributes,
} from './attributes';
import { fencing, TestWorld } from './engine.test-support';
import { InvalidSearchAttributeError, WorkflowFailedError } from './errors';
import { scanAll } from './inspect';
import { matchesListFilter } from './list-row';
import { replay } from './replay-check';
import { escapeId, keys } from './keys';
import { indexedDbStore, testStores } from './stores.test-support';
import { defineWorkflow } from './workflow';

type Change = Record<string, string | number | boolean | null>;

/** Sets its attributes from the input, applies each `change` signal's attributes, ends on `finish`. */
const order = defineWorkflow({
  name: 'order',
  version: 1,
  attributes: { customer: 'string', amount: 'number', vip: 'boolean', due: 'time' },
  *run(ctx, input: { set: Change }) {
    yield* ctx.setAttributes(input.set);
    for (;;) {
      const change = yield* ctx.waitForSignal<Change | 'finish' | 'continue'>('change');
      if (change === 'finish') return 'done';
      if (change === 'continue') return yield* ctx.continueAsNew({ set: {} });
      if (change) yield* ctx.setAttributes(change);
    }
  },
});

/** Sets `amount`, then waits on a gated activity (a crash lands here), then sets it again. */
let release: (() => void) | null = null;
const gated = defineWorkflow({
  name: 'gated',
  version: 1,
  attributes: { amount: 'number', customer: 'string' },
  *run(ctx) {
    yield* ctx.setAttributes({ amount: 1, customer: 'acme' });
    yield* ctx.activity('hold', () => new Promise<void>((resolve) => (release = resolve)));
    yield* ctx.setAttributes({ amount: 2 });
    yield* ctx.waitForSignal('never');
  },
});

/** Sets what its input says, and catches nothing: a bad value fails it. */
const careless = defineWorkflow({
  name: 'careless',
  version: 1,
  attributes: { amount: 'number' },
  *run(ctx, input: { set: Record<string, unknown> }) {
    yield* ctx.setAttributes(input.set as Change);
    return 'unreachable';
  },
});

const all = [order, gated, careless];

/** The index keys the records' attributes call for, and those stored: they must be the same. */
async function expectIndexConsistent(storage: Storage): Promise<string[]> {
  const stored = (await scanAll(storage, attributeIndexPrefix)).map(({ key }) => key).sort();
  const records = await scanAll(storage, keys.recordPrefix);
  const expected = records
    .flatMap(({ value }) => {
      const record = JSON.parse(value) as { id: string; attributes?: SearchAttributes };
      return Object.entries(record.attributes ?? {}).map(([name, attribute]) =>
        attributeIndexKey(name, attribute, escapeId(record.id)),
      );
    })
    .sort();
  expect(stored).toEqual(expected);
  return stored;
}

describe('order-preserving encodings', () => {
  it('numbers: key order is numeric order, negatives, fractions and extremes included', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true }), fc.double({ noNaN: true }), (a, b) => {
        const [x, y] = [encodeNumber(a), encodeNumber(b)];
        expect(x.length).toBe(16);
        expect(Math.sign(x < y ? -1 : x > y ? 1 : 0)).toBe(Math.sign(a - b || 0));
      }),
    );
    expect(encodeNumber(-0)).toBe(encodeNumber(0));
  });

  it('strings: key order is string order, and the encoding never holds the terminator', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        const [x, y] = [`${encodeString(a)}!`, `${encodeString(b)}!`];
        expect(encodeString(a)).not.toContain('!');
        expect(Math.sign(x < y ? -1 : x > y ? 1 : 0)).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });
});

const stores = [...testStores({ maxConnections: 4 }), indexedDbStore()];

describe.each(stores)('search attributes on $name', (store) => {
  afterAll(() => store.close(), 60_000);

  async function setup() {
    const world = new TestWorld({ storage: await store.open() });
    const engine = await world.engine(all, fencing);
    return { world, engine };
  }

  it('set, replace and remove: the record, describe, list rows and the index follow the latest values', async () => {
    const { world, engine } = await setup();
    await engine.start(
      order,
      { set: { customer: 'acme', amount: 120, vip: true, due: '2026-03-01' } },
      { id: 'o1' },
    );
    await engine.start(order, { set: { customer: 'globex', amount: 80 } }, { id: 'o2' });
    await world.idle();
    const due = Date.UTC(2026, 2, 1);
    expect((await engine.describe('o1')).attributes).toEqual({
      customer: { type: 'string', value: 'acme' },
      amount: { type: 'number', value: 120 },
      vip: { type: 'boolean', value: true },
      due: { type: 'time', value: due },
    });
    const byCustomer = await engine.list({ attributes: { customer: 'acme' } });
    expect(byCustomer.items.map((row) => row.workflowId)).toEqual(['o1']);
    expect(byCustomer.items[0]!.attributes?.amount).toEqual({ type: 'number', value: 120 });
    expect((await expectIndexConsistent(world.storage)).length).toBe(6);

    // Replace one, remove one: the old index keys go in the same commit.
    await engine.signal('o1', 'change', { amount: 300, vip: null, customer: 'acme corp' });
    await world.idle();
    expect((await engine.describe('o1')).attributes).toEqual({
      customer: { type: 'string', value: 'acme corp' },
      amount: { type: 'number', value: 300 },
      due: { type: 'time', value: due },
    });
    expect((await engine.list({ attributes: { customer: 'acme' } })).items).toEqual([]);
    expect((await engine.list({ where: ['customer="acme corp"'] })).items.map((r) => r.workflowId)).toEqual([
      'o1',
    ]);
    expect((await engine.list({ attributes: { vip: true } })).items).toEqual([]);
    expect((await engine.list({ where: ['amount=300'] })).items.map((r) => r.workflowId)).toEqual(['o1']);
    expect((await expectIndexConsistent(world.storage)).length).toBe(5);

    // A history with its settings replays clean against the code (replay testing writes nothing).
    expect(replay([order], await engine.history('o1'))).toMatchObject({ ok: true, operations: 3 });

    // Finished workflows keep theirs (listed by attribute and status together).
    await engine.signal('o2', 'change', 'finish');
    await world.idle();
    expect(
      (await engine.list({ where: ['amount<100'], status: 'completed' })).items.map((r) => r.workflowId),
    ).toEqual(['o2']);
    expect((await engine.list({ where: ['amount<100'], status: 'running' })).items).toEqual([]);
    await expectIndexConsistent(world.storage);
  });

  it('ranges over numbers (negatives, fractions) and times, combined, and paging through them', async () => {
    const { world, engine } = await setup();
    const amounts = [-50, -0.5, 0, 0.25, 7, 99.99, 100, 100.5, 250, 1e6];
    for (const [index, amount] of amounts.entries())
      await engine.start(
        order,
        { set: { amount, due: Date.UTC(2026, 0, 1 + index), customer: index % 2 ? 'odd' : 'even' } },
        { id: `r${String(index).padStart(2, '0')}` },
      );
    await world.idle();
    const amountsOf = async (filter: Parameters<typeof engine.list>[0]) =>
      (await engine.list(filter)).items.map((row) => row.attributes!.amount!.value).sort((a, b) => +a - +b);
    expect(await amountsOf({ attributes: { amount: { gte: -0.5, lt: 100 } } })).toEqual([
      -0.5, 0, 0.25, 7, 99.99,
    ]);
    expect(await amountsOf({ attributes: { amount: { gt: 0, lte: 100 } } })).toEqual([0.25, 7, 99.99, 100]);
    expect(await amountsOf({ where: ['amount<0'] })).toEqual([-50, -0.5]);
    expect(await amountsOf({ where: ['amount>100'] })).toEqual([100.5, 250, 1e6]);
    // Times: a Date, epoch ms, an ISO string — all one time.
    expect(await amountsOf({ attributes: { due: { gte: new Date(Date.UTC(2026, 0, 8)) } } })).toEqual([
      100.5, 250, 1e6,
    ]);
    expect(await amountsOf({ attributes: { due: { lt: Date.UTC(2026, 0, 3) } } })).toEqual([-50, -0.5]);
    expect(await amountsOf({ where: ['due>=2026-01-09', 'due<2026-01-10T00:00:00Z'] })).toEqual([250]);
    // Two attributes: the range walks one, the other filters.
    expect(await amountsOf({ where: ['customer=odd', 'amount>=0'] })).toEqual([0.25, 99.99, 100.5, 1e6]);

    // Paging: two at a time through a range, every match once, in key (value) order.
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await engine.list({
        attributes: { amount: { gte: -1 } },
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...result.items.map((row) => row.attributes!.amount!.value as number));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    expect(seen).toEqual(amounts.slice(1));
  });

  it('a crash between two settings: the next engine replays without writing, and the index never goes stale', async () => {
    const { world, engine: a } = await setup();
    release = null;
    await a.start(gated, undefined, { id: 'g' });
    await world.maintain();
    expect((await a.describe('g')).attributes?.amount).toEqual({ type: 'number', value: 1 });
    await expectIndexConsistent(world.storage);
    world.crash(a);
    const b = await world.engine(all, fencing);
    await world.advance(10_000, { stepMs: 1_000 });
    for (let i = 0; i < 50 && !release; i++) await world.maintain();
    release!();
    await world.maintain();
    await world.maintain();
    const description = await b.describe('g');
    expect(description.pending?.kind).toBe('signal');
    expect(description.attributes).toEqual({
      amount: { type: 'number', value: 2 },
      customer: { type: 'string', value: 'acme' },
    });
    expect((await b.list({ where: ['amount=1'] })).items).toEqual([]);
    expect((await b.list({ where: ['amount=2'] })).items.map((row) => row.workflowId)).toEqual(['g']);
    expect(await expectIndexConsistent(world.storage)).toHaveLength(2);
    // Replay wrote nothing of its own: one setting per recorded operation in the history.
    const history = await b.history('g');
    expect(
      history.entries.filter((entry) => entry.t === 'op' && entry.kind === 'set-attributes'),
    ).toHaveLength(2);
  });

  it('continue-as-new carries them; a new run of the id starts without; fork takes those of its history; purge deletes the index keys', async () => {
    const { world, engine } = await setup();
    await engine.start(order, { set: { customer: 'acme', amount: 5 } }, { id: 'c' });
    await world.idle();
    await engine.signal('c', 'change', 'continue');
    await world.idle();
    const continued = await engine.describe('c');
    expect(continued.run).toBe(2);
    expect(continued.attributes?.customer).toEqual({ type: 'string', value: 'acme' });
    expect((await engine.list({ where: ['customer=acme'] })).items.map((row) => row.run)).toEqual([2]);

    // Fork run 2 of 'c' after its first operation into a new id: the fork holds what that history set.
    await engine.signal('c', 'change', { amount: 9 });
    await world.idle();
    // (Attributes carried from run 1 are not in run 2's history: the fork holds what that history set.)
    await engine.fork('c', { fromPosition: 3, newId: 'c-fork' });
    await world.idle();
    expect((await engine.describe('c-fork')).attributes).toEqual({ amount: { type: 'number', value: 9 } });
    await expectIndexConsistent(world.storage);

    await engine.signal('c', 'change', 'finish');
    await world.idle();
    await engine.start(order, { set: { customer: 'initech' } }, { id: 'c' });
    await world.idle();
    expect((await engine.describe('c')).attributes).toEqual({
      customer: { type: 'string', value: 'initech' },
    });
    expect((await engine.list({ where: ['customer=acme'] })).items).toEqual([]);
    await expectIndexConsistent(world.storage);

    await engine.signal('c', 'change', 'finish');
    await engine.signal('c-fork', 'change', 'finish');
    await world.idle();
    await engine.purge('c');
    await engine.purge('c-fork');
    expect(await scanAll(world.storage, attributeIndexPrefix)).toEqual([]);
    expect((await engine.list({ where: ['customer=initech'] })).items).toEqual([]);
  });

  it('bad attributes fail the workflow with InvalidSearchAttributeError and write no index key', async () => {
    const { world, engine } = await setup();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ amount: 'ten' }, /attribute 'amount' is declared 'number' and takes a finite number; got "ten"/],
      [{ amount: true }, /got boolean true/],
      [{ customer: 'acme' }, /attribute 'customer' is not declared.*declared: amount/],
      [{ 'bad name': 1 }, /attribute name "bad name" is invalid/],
      [{ amount: 1, customer: 'x' }, /attribute 'customer' is not declared/],
    ];
    for (const [index, [set, message]] of cases.entries()) {
      const handle = await engine.start(careless, { set }, { id: `bad-${index}` });
      await world.idle();
      const error = await handle.result().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      expect((error as WorkflowFailedError).failure).toMatchObject({
        name: 'InvalidSearchAttributeError',
        message: expect.stringMatching(message),
      });
      expect((await engine.describe(`bad-${index}`)).attributes).toBeUndefined();
    }
    expect(await scanAll(world.storage, attributeIndexPrefix)).toEqual([]);
  });

  it('a string too long, and an index key over the storage limit (a long id and a long value), are refused', async () => {
    const { world, engine } = await setup();
    const tooLong = await engine.start(order, { set: { customer: 'é'.repeat(129) } }, { id: 'long-value' });
    await world.idle();
    expect(await tooLong.result().catch((e: unknown) => (e as WorkflowFailedError).failure.message)).toMatch(
      /attribute 'customer' is declared 'string' and takes a string of at most 256 UTF-8 bytes/,
    );
    const longId = '%'.repeat(256);
    const keyed = await engine.start(order, { set: { customer: 'x'.repeat(250) } }, { id: longId });
    await world.idle();
    expect(await keyed.result().catch((e: unknown) => (e as WorkflowFailedError).failure.message)).toMatch(
      /an index key of this attribute would be \d+ bytes, over the storage limit of 1024/,
    );
    expect(await scanAll(world.storage, attributeIndexPrefix)).toEqual([]);
  });

  it('a start may give the first attributes (pending or running); bad ones refuse the start with nothing written', async () => {
    const { world, engine } = await setup();
    await engine.start(
      order,
      { set: {} },
      { id: 's1', attributes: { customer: 'acme', due: new Date(Date.UTC(2026, 5, 1)) } },
    );
    await engine.start(order, { set: {} }, { id: 's2', attributes: { amount: 3 }, startDelayMs: 60_000 });
    await world.idle();
    expect((await engine.describe('s1')).attributes).toEqual({
      customer: { type: 'string', value: 'acme' },
      due: { type: 'time', value: Date.UTC(2026, 5, 1) },
    });
    expect(
      (await engine.list({ where: ['amount=3'] })).items.map((row) => [row.workflowId, row.status]),
    ).toEqual([['s2', 'pending']]);
    await expectIndexConsistent(world.storage);
    const before = (await scanAll(world.storage, '')).length;
    for (const [attributes, message] of [
      [
        { customer: 7 },
        /start option attributes in workflow type 'order': attribute 'customer' is declared 'string'/,
      ],
      [{ colour: 'red' }, /attribute 'colour' is not declared/],
      ['acme', /takes an object of name → value/],
    ] as const) {
      const error = await engine
        .start(order, { set: {} }, { id: 'refused', attributes: attributes as never })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidSearchAttributeError);
      expect((error as Error).message).toMatch(message);
    }
    expect((await scanAll(world.storage, '')).length).toBe(before);
  });

  it('bad filters are refused with InvalidSearchAttributeError, naming the attribute and what to do', async () => {
    const { engine } = await setup();
    const refused: [Parameters<typeof engine.list>[0], RegExp][] = [
      [
        { attributes: { amount: { above: 3 } as never } },
        /unknown operator 'above'; use eq, gt, gte, lt or lte/,
      ],
      [{ attributes: { amount: 'lots' } }, /'amount' is declared 'number'.*got "lots"/],
      [{ attributes: { vip: { gt: false } } }, /'vip' is a boolean; it takes equality only/],
      [{ attributes: { due: 'tomorrow' } }, /'due' is declared 'time'/],
      [{ where: ['amount>=many'] }, /'amount' is declared 'number'.*got "many"/],
      [{ where: ['amount~3'] }, /is not 'name op value'/],
      [{ where: ['vip>true'] }, /'vip' is a boolean/],
      [{ where: 'amount=3' as never }, /where is an array of expressions/],
      [{ attributes: { amount: 3 }, allRuns: true }, /leave out allRuns/],
    ];
    for (const [filter, message] of refused) {
      const error = await engine.list(filter).catch((e: unknown) => e);
      expect(error, JSON.stringify(filter)).toBeInstanceOf(InvalidSearchAttributeError);
      expect((error as Error).message).toMatch(message);
    }
  });
});

describe('a row against attribute conditions (the studio patching a changed row into an open list)', () => {
  it("types each condition by the row's own attribute; an invalid filter matches nothing", () => {
    const row = {
      workflowId: 'w',
      workflowType: 'order',
      version: 1,
      run: 1,
      status: 'running' as const,
      createdAt: 0,
      updatedAt: 0,
      owner: null,
      epoch: null,
      waitingOn: null,
      attributes: {
        customer: { type: 'string', value: 'acme' },
        amount: { type: 'number', value: 120 },
        due: { type: 'time', value: Date.UTC(2026, 2, 1) },
      } satisfies SearchAttributes,
    };
    expect(matchesListFilter(row, { where: ['customer=acme', 'amount>=100', 'due<2026-04-01'] })).toBe(true);
    expect(matchesListFilter(row, { where: ['amount>120'] })).toBe(false);
    expect(matchesListFilter(row, { attributes: { amount: { gt: 100, lt: 200 } } })).toBe(true);
    expect(matchesListFilter(row, { where: ['vip=true'] })).toBe(false);
    expect(matchesListFilter(row, { where: ['amount~3'] })).toBe(false);
    expect(matchesListFilter({ ...row, attributes: undefined }, { where: ['customer=acme'] })).toBe(false);
    expect(matchesListFilter(row, {})).toBe(true);
  });
});

describe('declarations', () => {
  it('a definition with a bad declaration is refused, and two that disagree on a type cannot be registered together', async () => {
    expect(() =>
      defineWorkflow({ name: 'x', version: 1, attributes: { amount: 'decimal' as never }, *run() {} }),
    ).toThrow(/attribute 'amount' has type "decimal"; use 'string', 'number', 'boolean' or 'time'/);
    const other = defineWorkflow({ name: 'other', version: 1, attributes: { amount: 'string' }, *run() {} });
    const world = new TestWorld();
    const engine = await world.engine([order]);
    expect(() => engine.register(other)).toThrow(
      /declares attribute 'amount' as 'string', but 'order' version 1 declares it as 'number'/,
    );
  });
});
