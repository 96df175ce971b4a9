import { describe, expect, it } from 'vitest';
import { FakeLocks, flushLocks } from './web-locks.test-support';
import { tabLockName } from '../protocol';
import { WebLocksLiveness, engineLockName } from './web-locks-liveness';

describe('WebLocksLiveness', () => {
  it('holds the engine lock until released, and reports the engine dead only afterwards', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    const release = await liveness.hold('e1');
    expect(locks.isHeld(engineLockName('e1'), 'exclusive')).toBe(true);
    expect(await liveness.isDead('e1')).toBe(false);
    release();
    await flushLocks();
    expect(await liveness.isDead('e1')).toBe(true);
  });

  it('shares one lock between holds of the same id, released when the last hold is', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    const first = await liveness.hold('e1');
    const second = await liveness.hold('e1');
    first();
    first();
    await flushLocks();
    expect(await liveness.isDead('e1')).toBe(false);
    second();
    await flushLocks();
    expect(await liveness.isDead('e1')).toBe(true);
  });

  it('lists live engines from the lock names, ignoring other locks', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    await liveness.hold('e1');
    await new WebLocksLiveness(locks).hold('e2');
    void locks.request('something-else', { mode: 'exclusive' }, () => new Promise(() => undefined));
    expect(await liveness.liveEngineIds()).toEqual(new Set(['e1', 'e2']));
  });

  it('lists the engines whose tab page holds its tab lock, apart from engine locks and gone tabs', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    await liveness.hold('e1');
    let closeTab!: () => void;
    void locks.request(
      tabLockName('e2'),
      { mode: 'exclusive' },
      () => new Promise<void>((r) => (closeTab = r)),
    );
    void locks.request(tabLockName('e3'), { mode: 'exclusive' }, () => new Promise(() => undefined));
    await flushLocks();
    expect(await liveness.openTabEngineIds()).toEqual(new Set(['e2', 'e3']));
    liveness.markGone('e3'); // its tab announced it is going away
    closeTab();
    await flushLocks();
    expect(await liveness.openTabEngineIds()).toEqual(new Set());
  });

  it('counts only exclusive holds as alive: queued requests and shared holds (death watches) are not lives', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    // A request queued behind a holder that never releases: pending, never held by the engine itself.
    void locks.request(engineLockName('busy'), { mode: 'exclusive' }, () => new Promise(() => undefined));
    void locks.request(engineLockName('busy'), { mode: 'exclusive' }, () => undefined);
    // A watcher holding a dead engine's lock in shared mode for a moment.
    void locks.request(engineLockName('gone'), { mode: 'shared' }, () => new Promise(() => undefined));
    await flushLocks();
    expect(locks.pendingCount(engineLockName('busy'))).toBe(1);
    expect(await liveness.liveEngineIds()).toEqual(new Set(['busy']));
    expect(await liveness.isDead('gone')).toBe(true);
  });

  it('counts an engine whose tab announced its exit as dead while its lock is still held, never its own', async () => {
    const locks = new FakeLocks();
    const other = new WebLocksLiveness(locks);
    await other.hold('leaving');
    const liveness = new WebLocksLiveness(locks);
    await liveness.hold('me');
    liveness.markGone('leaving');
    liveness.markGone('me');
    expect(await liveness.isDead('leaving')).toBe(true);
    expect(await liveness.isDead('me')).toBe(false);
    expect(await liveness.liveEngineIds()).toEqual(new Set(['me']));
  });

  it('never calls an engine dead when the browser cannot answer', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    locks.failQueries = true;
    expect(await liveness.isDead('gone')).toBe(false);
    expect(await liveness.liveEngineIds()).toBeNull();
  });
});
