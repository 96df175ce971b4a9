/**
 * Checkpoints carried by commit records (checkpoint.ts): a run's step writes one record, and every reader
 * finds the current checkpoint behind a `wf-ckpt:` that may be older.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory';
import { carriedCheckpointChars, checkpointAt, currentCheckpoint, lastLogRecord } from './checkpoint';
import { TestWorld, fencing } from './engine.test-support';
import { CorruptRecordError } from './errors';
import { keys } from './keys';
import { decodeCheckpoint, decodeLogRecord, type Checkpoint, type WorkflowRecord } from './records';
import { loadWorkflow } from './run/load';
import { defineWorkflow } from './workflow';
import { appendTimeline, commitRecordKey, encodeCommitRecord, newCheckpoint } from './workflow-writes';

const steps = defineWorkflow({
  name: 'carried-steps',
  version: 1,
  *run(ctx, input: { pad: number }) {
    ctx.state.pad = 'x'.repeat(input.pad);
    let sum = 0;
    for (let i = 1; i <= 3; i++) sum += yield* ctx.activity(`step-${i}`, () => i);
    ctx.state.sum = sum;
    yield* ctx.waitForSignal('go');
    sum += yield* ctx.activity('last', () => 10);
    return sum;
  },
  queries: { sum: (state) => state.sum },
});

async function storedCheckpoint(world: TestWorld, id: string): Promise<Checkpoint> {
  return decodeCheckpoint(keys.checkpoint(id), (await world.storage.get(keys.checkpoint(id)))!);
}

async function lastRecord(world: TestWorld, id: string, run = 1) {
  const [last] = await world.storage.scan(keys.timelinePrefix(id, run), { reverse: true, limit: 1 });
  return decodeLogRecord(last!.key, last!.value);
}

/** The record of a running workflow `id` (run 1, type `t`). */
function runningRecord(id: string): WorkflowRecord {
  return { v: 1, id, type: 't', version: 1, run: 1, status: 'running', createdAt: 0, createdBy: 'e' };
}

describe('checkpoints carried by commit records', () => {
  it("a run's steps write one record each, carrying the checkpoint; its last commit rewrites wf-ckpt:", async () => {
    const world = new TestWorld();
    const engine = await world.engine([steps], fencing);
    const writes: string[][] = [];
    const note = (operations: readonly { key: string }[]) => {
      if (operations.some(({ key }) => key.startsWith(keys.timelinePrefix('w', 1))))
        writes.push(operations.map(({ key }) => key));
    };
    const storage = engine.wrapper;
    const conditionalBatch = storage.conditionalBatch.bind(storage);
    storage.conditionalBatch = async (conditions, operations) => {
      note(operations);
      return conditionalBatch(conditions, operations);
    };
    await engine.start(steps, { pad: 10 }, { id: 'w' });
    await world.idle();
    // Three steps and the park on the signal: one record each, nothing else of the workflow rewritten.
    const stepWrites = writes.filter((group) => group.every((key) => !key.startsWith('wf-ckpt:')));
    expect(stepWrites.length).toBeGreaterThanOrEqual(3);
    for (const group of stepWrites) expect(group.filter((key) => key.startsWith('wf-tl:'))).toHaveLength(1);

    const stored = await storedCheckpoint(world, 'w');
    const current = await currentCheckpoint(
      world.storage,
      'w',
      (await world.storage.get(keys.checkpoint('w')))!,
      await lastLogRecord(world.storage, 'w'),
    );
    expect(current!.carriedEpoch).toBe(1);
    expect(current!.checkpoint.position).toBeGreaterThan(stored.position);
    expect(current!.checkpoint.state.sum).toBe(6);
    expect((await lastRecord(world, 'w')).carried?.checkpoint).toEqual(current!.checkpoint);
    // Every reader sees the current one.
    expect(await engine.query('w', 'sum')).toBe(6);
    expect((await engine.describe('w')).pending?.summary).toBe("signal 'go'");
    expect((await engine.list({ ids: ['w'] })).items[0]?.waitingOn).toBe("signal 'go'");

    await engine.signal('w', 'go');
    await world.idle();
    expect(await engine.handle('w').result()).toBe(16);
    // The last commit rewrote wf-ckpt: and carries nothing: a finished workflow's stored checkpoint is current.
    expect((await lastRecord(world, 'w')).carried).toBeUndefined();
    const final = await storedCheckpoint(world, 'w');
    expect(final.frontier).toBeNull();
    expect(
      commitRecordKey('w', 1, final) > (await world.storage.scan(keys.timelinePrefix('w', 1))).at(-1)!.key,
    ).toBe(true);
    await world.shutdownAll();
  });

  it('a checkpoint larger than the carried limit is rewritten in wf-ckpt: instead', async () => {
    const world = new TestWorld();
    const engine = await world.engine([steps], fencing);
    await engine.start(steps, { pad: carriedCheckpointChars }, { id: 'big' });
    await world.idle();
    expect((await lastRecord(world, 'big')).carried).toBeUndefined();
    const stored = await storedCheckpoint(world, 'big');
    expect(stored.state.sum).toBe(6);
    expect(stored.frontier?.kind).toBe('signal');
    await world.shutdownAll();
  });

  it('another engine takes over at the carried checkpoint and runs nothing twice', async () => {
    const world = new TestWorld();
    const a = await world.engine([steps], fencing);
    await a.start(steps, { pad: 10 }, { id: 't' });
    await world.idle();
    expect((await lastRecord(world, 't')).carried).toBeDefined();
    world.crash(a);
    const b = await world.engine([steps], fencing);
    await world.advance(fencing.workflowClaimTtlMs * 3, { stepMs: 1000, engines: [b] });
    expect(b.ownedWorkflows()).toContain('t');
    await b.signal('t', 'go');
    await world.idle([b]);
    expect(await b.handle('t').result()).toBe(16);
    const started = (await b.timeline('t')).filter((entry) => entry.kind === 'activity-started');
    expect(started.map((entry) => entry.detail.name)).toEqual(['step-1', 'step-2', 'step-3', 'last']);
    await world.shutdownAll();
  });
});

describe('currentCheckpoint', () => {
  const id = 'c';
  const who = { engineId: 'e', epoch: 1, now: 0 };

  async function storeWith(first: Checkpoint) {
    const storage = new MemoryStorage();
    const raw = JSON.stringify(first);
    await storage.batch([{ type: 'put', key: keys.checkpoint(id), value: raw }]);
    return { storage, raw };
  }

  const record = runningRecord(id);

  it('reads wf-ckpt: again when it was rewritten after it was read, and follows records carrying one', async () => {
    const first = { ...newCheckpoint(1, 0), timelineLength: 1 };
    const { storage, raw } = await storeWith(first);
    // A claim transition (record + wf-ckpt:) lands after `raw` was read, then a run's commit carries the next.
    const transition = appendTimeline(
      { record, checkpoint: first, checkpointRaw: raw },
      [{ kind: 'claim-acquired', detail: { engineId: 'e', epoch: 1, how: 'acquire' } }],
      who,
    );
    expect(await storage.conditionalBatch(transition.conditions, transition.operations)).toBe(true);
    expect((await currentCheckpoint(storage, id, raw, await lastLogRecord(storage, id)))!).toEqual({
      checkpoint: transition.checkpoint,
      storedRaw: transition.checkpointRaw,
    });
    const carried: Checkpoint = { ...transition.checkpoint, commits: 2, position: 1 };
    await storage.batch([
      {
        type: 'put',
        key: commitRecordKey(id, 1, transition.checkpoint),
        value: encodeCommitRecord([], [], { checkpointRaw: JSON.stringify(carried), epoch: 7 }),
      },
    ]);
    expect(
      await currentCheckpoint(storage, id, transition.checkpointRaw, await lastLogRecord(storage, id)),
    ).toEqual({
      checkpoint: carried,
      storedRaw: transition.checkpointRaw,
      carriedEpoch: 7,
    });
    // A write replacing it conditions on both: wf-ckpt: as read, and the carried one's record being absent.
    const view = {
      record,
      recordRaw: JSON.stringify(record),
      checkpoint: carried,
      checkpointRaw: transition.checkpointRaw,
    };
    const next = appendTimeline(view, [{ kind: 'claim-released', detail: { engineId: 'e', epoch: 1 } }], who);
    expect(next.conditions).toEqual([
      { key: keys.checkpoint(id), expected: transition.checkpointRaw },
      { key: commitRecordKey(id, 1, carried), expected: null },
    ]);
    // A stale view (the stored checkpoint as current) is refused: its record exists.
    const stale = appendTimeline({ ...view, checkpoint: transition.checkpoint }, [], who);
    expect(await storage.conditionalBatch(stale.conditions, stale.operations)).toBe(false);
    expect(await storage.conditionalBatch(next.conditions, next.operations)).toBe(true);
  });

  it('reports a record after the stored checkpoint that carries none while wf-ckpt: did not move', async () => {
    const first = { ...newCheckpoint(1, 0), timelineLength: 1 };
    const { storage, raw } = await storeWith(first);
    await storage.batch([
      { type: 'put', key: commitRecordKey(id, 1, first), value: encodeCommitRecord([], []) },
    ]);
    await expect(currentCheckpoint(storage, id, raw, await lastLogRecord(storage, id))).rejects.toThrow(
      CorruptRecordError,
    );
  });

  it('a record of a later run means wf-ckpt: moved (a new run started since it was read)', () => {
    const first = { ...newCheckpoint(1, 0), timelineLength: 1 };
    const raw = JSON.stringify(first);
    const carried = { checkpointRaw: JSON.stringify(newCheckpoint(2, 0)), epoch: 1 };
    const later = { key: keys.commitRecord(id, 2, 1, 0), value: encodeCommitRecord([], [], carried) };
    expect(checkpointAt(id, raw, later)).toBe('moved');
    const earlier = { key: keys.timeline(id, 1, 0), value: '{"seq":0}' };
    expect(checkpointAt(id, raw, earlier)).toEqual({ checkpoint: first, storedRaw: raw });
  });

  it('is null for a workflow purged between the two reads', async () => {
    const first = { ...newCheckpoint(1, 0), timelineLength: 1 };
    const { storage, raw } = await storeWith(first);
    await storage.batch([
      { type: 'put', key: commitRecordKey(id, 1, first), value: '{"purged":1}' },
      { type: 'delete', key: keys.checkpoint(id) },
    ]);
    expect(await currentCheckpoint(storage, id, raw, await lastLogRecord(storage, id))).toBeNull();
  });
});

/** loadWorkflow finds the current checkpoint in the log it reads whole, through the same loop (resolveCheckpoint). */
describe('loadWorkflow and the current checkpoint', () => {
  const id = 'l';
  const who = { engineId: 'e', epoch: 1, now: 0 };
  const record = runningRecord(id);
  const first = { ...newCheckpoint(1, 0), timelineLength: 1 };
  const raw = JSON.stringify(first);

  /** A store holding `record` and `first`; `reads` counts the reads of wf-ckpt:. */
  async function store(): Promise<{ storage: MemoryStorage; reads: () => number }> {
    const storage = new MemoryStorage();
    await storage.batch([
      { type: 'put', key: keys.record(id), value: JSON.stringify(record) },
      { type: 'put', key: keys.checkpoint(id), value: raw },
    ]);
    let reads = 0;
    const getMany = storage.getMany.bind(storage);
    storage.getMany = (wanted) => {
      if (wanted.includes(keys.checkpoint(id))) reads++;
      return getMany(wanted);
    };
    return { storage, reads: () => reads };
  }

  /** Lands `write` right after the first read of wf-ckpt: and the record returns, before the log is read. */
  function landAfterFirstRead(storage: MemoryStorage, write: () => Promise<unknown>): void {
    const getMany = storage.getMany.bind(storage);
    let landed = false;
    storage.getMany = async (wanted) => {
      const values = await getMany(wanted);
      if (!landed) {
        landed = true;
        await write();
      }
      return values;
    };
  }

  it("takes the checkpoint the run's last record carries, and its epoch", async () => {
    const { storage, reads } = await store();
    const carried: Checkpoint = { ...first, commits: 1, position: 1 };
    await storage.batch([
      {
        type: 'put',
        key: commitRecordKey(id, 1, first),
        value: encodeCommitRecord([], [], { checkpointRaw: JSON.stringify(carried), epoch: 7 }),
      },
    ]);
    const loaded = await loadWorkflow(storage, id);
    expect(loaded!.checkpoint).toEqual(carried);
    expect(loaded!.epoch).toBe(7);
    expect(reads()).toBe(1);
  });

  it("reads everything again when wf-ckpt: was rewritten between its read and the log's", async () => {
    const { storage, reads } = await store();
    const transition = appendTimeline(
      { record, checkpoint: first, checkpointRaw: raw },
      [{ kind: 'claim-acquired', detail: { engineId: 'e', epoch: 1, how: 'acquire' } }],
      who,
    );
    // The transition (a record that carries none, and a new wf-ckpt:) lands right after the first read.
    landAfterFirstRead(storage, () => storage.conditionalBatch(transition.conditions, transition.operations));
    const loaded = await loadWorkflow(storage, id);
    expect(loaded!.checkpoint).toEqual(transition.checkpoint);
    expect(reads()).toBe(2);
  });

  it('reports a record after the stored checkpoint that carries none while wf-ckpt: did not move', async () => {
    const { storage, reads } = await store();
    await storage.batch([
      { type: 'put', key: commitRecordKey(id, 1, first), value: encodeCommitRecord([], []) },
    ]);
    await expect(loadWorkflow(storage, id)).rejects.toThrow(CorruptRecordError);
    expect(reads()).toBe(2);
  });

  it('is null for a workflow purged between the two reads', async () => {
    const { storage, reads } = await store();
    landAfterFirstRead(storage, () =>
      storage.batch([
        { type: 'put', key: commitRecordKey(id, 1, first), value: '{"purged":1}' },
        { type: 'delete', key: keys.checkpoint(id) },
        { type: 'delete', key: keys.record(id) },
      ]),
    );
    expect(await loadWorkflow(storage, id)).toBeNull();
    expect(reads()).toBe(2);
  });
});
