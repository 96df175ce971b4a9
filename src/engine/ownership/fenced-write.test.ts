/**
 * The fenced write function and the pure ownership rules, tested without engines.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory';
import type { Storage } from '../../storage/types';
import { SimulatedClock } from '../clock';
import { Committer } from '../committer';
import type { EngineEvent } from '../events';
import { keys } from '../keys';
import { MetricsCounters } from '../metrics';
import { createOwnership } from './create';
import { FencedWriter } from './fenced-write';
import { decodeEpoch, decodeHolder, encodeHolder, isClaimExpired } from './holder';
import { Reactions } from '../reactions';
import { buildAcquire, buildRelease, buildRenew, buildRotation, buildTakeover } from './transitions';

function writerFor(storage: Storage, mode: 'none' | 'workflow-lease' = 'workflow-lease') {
  const events: EngineEvent[] = [];
  const deposed: string[] = [];
  let calls = 0;
  const counting: Storage = Object.assign(Object.create(storage) as Storage, {
    conditionalBatch: (c: never, o: never) => (calls++, storage.conditionalBatch(c, o)),
    get: (k: string) => (calls++, storage.get(k)),
  });
  const committer = new Committer(counting);
  const ownership = createOwnership(mode, {
    storage: counting,
    committer,
    engineId: 'A',
    clock: new SimulatedClock(),
    ttlMs: 3000,
    renewIntervalMs: 1000,
    leaseWaitTimeoutMs: 1000,
    reclaimBatchSize: 200,
    liveness: undefined,
    claimWorkflows: true,
    metrics: new MetricsCounters(),
    emit: (event) => events.push(event),
    warn: () => undefined,
    isEligible: () => true,
    hasRoomFor: () => true,
    drive: () => undefined,
    isDriving: () => false,
    activeWorkflows: () => [],
    requestReclaim: () => undefined,
    stopDriving: (id) => void deposed.push(id),
    deposeEngine: () => undefined,
    markCorrupt: () => undefined,
    isCorrupt: () => false,
    isStopping: () => false,
    reactions: new Reactions(),
  });
  const writer = new FencedWriter({ committer, ownership });
  /** Plants a claim on `workflowId` at epoch 1, as if this engine had acquired it. */
  const hold = (workflowId: string) =>
    ownership.claimLanded(
      workflowId,
      { conditions: [], operations: [], epoch: 1, epochRaw: '1', holder, holderRaw: encodeHolder(holder) },
      'acquire',
    );
  return { writer, ownership, hold, events, deposed, calls: () => calls };
}

const holder = {
  engineId: 'A',
  epoch: 1,
  claimedAt: Date.UTC(2026, 0, 1),
  expiresAt: Date.UTC(2026, 0, 1) + 3000,
};

describe('FencedWriter', () => {
  it('refuses a write whose own conditions hold once the epoch moved on, and records the rejection', async () => {
    const storage = new MemoryStorage();
    await storage.batch([
      { type: 'put', key: keys.ownerEpoch('w'), value: '2' },
      { type: 'put', key: 'anchor', value: 'same' },
    ]);
    const { writer, ownership, hold, events, deposed } = writerFor(storage);
    hold('w');
    const outcome = await writer.write(
      'w',
      [{ key: 'anchor', expected: 'same' }],
      [{ type: 'put', key: 'progress', value: 'zombie' }],
      'commit',
    );
    expect(outcome).toEqual({ ok: false, reason: 'deposed', heldEpoch: 1, currentEpoch: 2 });
    expect(await storage.get('progress')).toBeNull();
    expect(ownership.drives('w')).toBe(false);
    expect(deposed).toEqual(['w']);
    expect(events.map((e) => e.type)).toEqual(['claim.acquired', 'write.fenced-out', 'claim.lost']);
    const rejections = await storage.scan(keys.fenceRejectionPrefix('w'));
    expect(JSON.parse(rejections[0]!.value)).toMatchObject({
      workflowId: 'w',
      engineId: 'A',
      heldEpoch: 1,
      currentEpoch: 2,
    });
  });

  it('tells an ordinary lost race from a deposition by re-reading the epoch', async () => {
    const storage = new MemoryStorage();
    await storage.batch([{ type: 'put', key: keys.ownerEpoch('w'), value: '1' }]);
    const { writer, ownership, hold } = writerFor(storage);
    hold('w');
    expect(
      await writer.write(
        'w',
        [{ key: 'anchor', expected: 'other' }],
        [{ type: 'put', key: 'x', value: '1' }],
        'commit',
      ),
    ).toEqual({ ok: false, reason: 'lost-race' });
    expect(ownership.drives('w')).toBe(true);
    expect(await writer.write('w', [], [{ type: 'put', key: 'x', value: '1' }], 'commit')).toEqual({
      ok: true,
    });
  });

  it('fails closed without any storage call when no epoch is held', async () => {
    const { writer, events, calls } = writerFor(new MemoryStorage());
    expect(await writer.write('w', [], [{ type: 'put', key: 'x', value: '1' }], 'commit')).toMatchObject({
      ok: false,
      reason: 'deposed',
    });
    expect(calls()).toBe(0);
    expect(events.map((e) => e.type)).toEqual(['claim.lost']);
  });

  it('adds no epoch condition to an anchored write (a run’s commit), and still classifies its refusal by the epoch', async () => {
    const storage = new MemoryStorage();
    await storage.batch([
      { type: 'put', key: keys.ownerEpoch('w'), value: '2' },
      { type: 'put', key: 'record-1', value: 'written by the successor' },
    ]);
    const { writer, ownership, hold, events, deposed, calls } = writerFor(storage);
    hold('w');
    // Its own anchor holds, the epoch moved on: an anchored write lands, in one batch and no read (the anchor
    // is its whole fence: every epoch change writes the record its anchor names, and purge keeps that record).
    expect(
      await writer.write(
        'w',
        [{ key: 'record-0', expected: null }],
        [{ type: 'put', key: 'record-0', value: 'mine' }],
        'commit',
        { anchored: true },
      ),
    ).toEqual({ ok: true });
    expect(calls()).toBe(1);
    // The same write, not anchored, names the epoch and is refused.
    expect(
      await writer.write('w', [], [{ type: 'put', key: 'record-9', value: 'mine' }], 'timer', {}),
    ).toEqual({ ok: false, reason: 'deposed', heldEpoch: 1, currentEpoch: 2 });
    expect(await storage.get('record-9')).toBeNull();
    // Once its anchor fails, the epoch says why: deposed, recorded, no longer driven.
    hold('w');
    const outcome = await writer.write(
      'w',
      [{ key: 'record-1', expected: null }],
      [{ type: 'put', key: 'record-1', value: 'zombie' }],
      'commit',
      { anchored: true },
    );
    expect(outcome).toEqual({ ok: false, reason: 'deposed', heldEpoch: 1, currentEpoch: 2 });
    expect(await storage.get('record-1')).toBe('written by the successor');
    expect(ownership.drives('w')).toBe(false);
    expect(deposed).toEqual(['w', 'w']);
    expect(events.map((e) => e.type)).toEqual([
      'claim.acquired',
      'write.fenced-out',
      'claim.lost',
      'claim.acquired',
      'write.fenced-out',
      'claim.lost',
    ]);
    // Both refusals were at the same instant by the same engine: one diagnostic record (keyed by time and engine).
    expect(await storage.scan(keys.fenceRejectionPrefix('w'))).toHaveLength(1);
    // Without a claim it is refused before any storage call, anchored or not.
    const before = calls();
    for (const anchored of [false, true])
      expect(
        await writer.write('w', [], [{ type: 'put', key: 'x', value: '1' }], 'commit', { anchored }),
      ).toMatchObject({ ok: false, reason: 'deposed' });
    expect(calls()).toBe(before);
  });

  it('tells a lost race on the caller’s own condition from a deposition', async () => {
    const storage = new MemoryStorage();
    await storage.batch([
      { type: 'put', key: keys.ownerEpoch('w'), value: '1' },
      { type: 'put', key: 'record-0', value: 'taken' },
    ]);
    const { writer, ownership, hold } = writerFor(storage);
    hold('w');
    expect(
      await writer.write(
        'w',
        [{ key: 'record-0', expected: null }],
        [{ type: 'put', key: 'record-0', value: 'mine' }],
        'commit',
      ),
    ).toEqual({ ok: false, reason: 'lost-race' });
    expect(ownership.drives('w')).toBe(true);
  });

  it('adds nothing under none, or for engine-scoped writes', async () => {
    const storage = new MemoryStorage();
    const none = writerFor(storage, 'none');
    expect(await none.writer.write('w', [], [{ type: 'put', key: 'x', value: '1' }], 'commit')).toEqual({
      ok: true,
    });
    const lease = writerFor(storage);
    expect(await lease.writer.write(null, [], [{ type: 'put', key: 'y', value: '1' }], 'signal')).toEqual({
      ok: true,
    });
  });
});

describe('transitions and holder decoding', () => {
  const claimKeys = { epochKey: 'E', holderKey: 'H' };
  const who = { engineId: 'B', now: Date.UTC(2026, 0, 1), ttlMs: 3000 };

  it('acquire and takeover mint (stored ?? 0) + 1, conditioned on the exact strings read', () => {
    const fresh = buildAcquire(claimKeys, { epochRaw: null, storedEpoch: null }, who);
    expect(fresh.epoch).toBe(1);
    expect(fresh.conditions).toEqual([
      { key: 'H', expected: null },
      { key: 'E', expected: null },
    ]);
    const reused = buildAcquire(claimKeys, { epochRaw: '7', storedEpoch: 7 }, who);
    expect(reused.epoch).toBe(8);
    const takeover = buildTakeover(
      claimKeys,
      { epochRaw: '3', storedEpoch: 3, holderRaw: '{"stale":true}' },
      who,
    );
    expect(takeover.epoch).toBe(4);
    expect(takeover.conditions).toEqual([
      { key: 'H', expected: '{"stale":true}' },
      { key: 'E', expected: '3' },
    ]);
  });

  it('renew changes only expiresAt; release deletes only the holder; rotation bumps the epoch and deletes the holder', () => {
    const minted = buildAcquire(claimKeys, { epochRaw: '1', storedEpoch: 1 }, who);
    const renewed = buildRenew(claimKeys, minted, who.now + 500, 3000);
    expect(renewed.holder).toEqual({ ...minted.holder, expiresAt: who.now + 3500 });
    expect(renewed.conditions).toEqual([{ key: 'H', expected: minted.holderRaw }]);
    expect(buildRelease(claimKeys, minted).operations).toEqual([{ type: 'delete', key: 'H' }]);
    const rotation = buildRotation(claimKeys, { epochRaw: '2', storedEpoch: 2 });
    expect(rotation.operations).toEqual([
      { type: 'put', key: 'E', value: '3' },
      { type: 'delete', key: 'H' },
    ]);
  });

  it('decodes holders fail-closed and epochs strictly', () => {
    expect(decodeHolder(encodeHolder(holder))).toEqual(holder);
    for (const bad of [
      'garbage',
      '{}',
      JSON.stringify({ ...holder, engineId: '' }),
      JSON.stringify({ ...holder, epoch: 0 }),
      JSON.stringify({ ...holder, expiresAt: Number.MAX_VALUE }),
    ])
      expect(decodeHolder(bad)).toBeNull();
    expect(decodeEpoch('E', '12')).toBe(12);
    expect(decodeEpoch('E', null)).toBeNull();
    expect(() => decodeEpoch('wf-owner-epoch:x', '1e3')).toThrow(/wf-owner-epoch:x/);
    expect(() => decodeEpoch('E', '0')).toThrow();
  });

  it('expiry is strictly after expiresAt + grace, at once for an undecodable or dead holder', () => {
    expect(isClaimExpired(holder, holder.expiresAt + 2000, 2000, false)).toBe(false);
    expect(isClaimExpired(holder, holder.expiresAt + 2001, 2000, false)).toBe(true);
    expect(isClaimExpired(null, 0, 2000, false)).toBe(true);
    expect(isClaimExpired(holder, holder.claimedAt, 2000, true)).toBe(true);
  });
});
