import { describe, expect, it } from 'vitest';
import { DeathWatch, type ObservedEngine } from './death-watch';
import { FakeLocks, flushLocks } from './web-locks.test-support';
import { WebLocksLiveness, engineLockName } from './web-locks-liveness';

/** A "tab": an engine holding its lock through its own liveness oracle, and a death watch. */
async function startEngine(locks: FakeLocks, engineId: string) {
  const release = await new WebLocksLiveness(locks).hold(engineId);
  const deaths: string[] = [];
  const watch = new DeathWatch({ locks, selfId: engineId, onDeath: (id) => deaths.push(id) });
  return { engineId, release, deaths, watch };
}

const running = (engineId: string): ObservedEngine => ({ engineId, status: 'running' });

describe('DeathWatch', () => {
  it('reports an engine dead the moment its lock is released, once, to every watcher', async () => {
    const locks = new FakeLocks();
    const a = await startEngine(locks, 'a');
    const b = await startEngine(locks, 'b');
    const c = await startEngine(locks, 'c');
    const held = new Set(['a', 'b', 'c']);
    const everyone = [running('a'), running('b'), running('c')];
    b.watch.observe(everyone, held);
    c.watch.observe(everyone, held);
    b.watch.observe(everyone, held); // observing again queues nothing more
    await flushLocks();
    expect(b.watch.watching).toEqual(new Set(['a', 'c']));
    expect(locks.pendingCount(engineLockName('a'))).toBe(2);
    expect(b.deaths).toEqual([]);

    a.release();
    await flushLocks();

    expect(b.deaths).toEqual(['a']);
    expect(c.deaths).toEqual(['a']);
    expect(b.watch.watching).toEqual(new Set(['c']));
    // The watchers let go of the dead engine's lock at once.
    expect(locks.isHeld(engineLockName('a'))).toBe(false);
    b.watch.observe(everyone, new Set(['b', 'c']));
    await flushLocks();
    expect(b.deaths).toEqual(['a']);
  });

  it('never watches its own engine', async () => {
    const locks = new FakeLocks();
    const a = await startEngine(locks, 'a');
    a.watch.observe([running('a')], new Set(['a']));
    await flushLocks();
    expect(a.watch.watching.size).toBe(0);
    expect(locks.pendingCount()).toBe(0);
  });

  it('reports at once an engine that says it runs but holds no lock; waits for one still starting; ignores a stopped one', async () => {
    const locks = new FakeLocks();
    const b = await startEngine(locks, 'b');
    const engines: ObservedEngine[] = [
      { engineId: 'vanished', status: 'running' },
      { engineId: 'frozen-then-gone', status: 'frozen' },
      { engineId: 'crashed', status: 'crashed' },
      { engineId: 'booting', status: 'starting' },
      { engineId: 'stopped', status: 'stopped' },
    ];
    b.watch.observe(engines, new Set(['b']));
    expect(b.deaths).toEqual(['vanished', 'frozen-then-gone', 'crashed']);
    expect(b.watch.watching.size).toBe(0);

    // The starting engine takes its lock: now it is watched, and its death is seen.
    const booting = await new WebLocksLiveness(locks).hold('booting');
    b.watch.observe(engines, new Set(['b', 'booting']));
    await flushLocks();
    expect(b.watch.watching).toEqual(new Set(['booting']));
    booting();
    await flushLocks();
    expect(b.deaths).toEqual(['vanished', 'frozen-then-gone', 'crashed', 'booting']);
  });

  it('aborts every queued request when closed, and reports nothing afterwards', async () => {
    const locks = new FakeLocks();
    const a = await startEngine(locks, 'a');
    const b = await startEngine(locks, 'b');
    b.watch.observe([running('a')], new Set(['a', 'b']));
    await flushLocks();
    expect(locks.pendingCount(engineLockName('a'))).toBe(1);
    b.watch.close();
    await flushLocks();
    expect(locks.pendingCount()).toBe(0);
    a.release();
    await flushLocks();
    expect(b.deaths).toEqual([]);
  });

  it('forgets dead engines whose records are gone, and watches again after a failed request', async () => {
    const locks = new FakeLocks();
    const b = await startEngine(locks, 'b');
    b.watch.observe([running('ghost')], new Set());
    expect(b.watch.dead).toEqual(new Set(['ghost']));
    b.watch.observe([], new Set());
    expect(b.watch.dead.size).toBe(0);

    let refuse = true;
    const flaky = {
      request: (...args: Parameters<FakeLocks['request']>) =>
        refuse ? Promise.reject(new Error('refused')) : locks.request(...args),
      query: () => locks.query(),
    };
    const watch = new DeathWatch({ locks: flaky, selfId: 'c', onDeath: () => undefined });
    const a = await new WebLocksLiveness(locks).hold('a');
    watch.observe([running('a')], new Set(['a']));
    await flushLocks();
    expect(watch.watching.size).toBe(0);
    refuse = false;
    watch.observe([running('a')], new Set(['a']));
    await flushLocks();
    expect(watch.watching).toEqual(new Set(['a']));
    a();
    watch.close();
  });
});
