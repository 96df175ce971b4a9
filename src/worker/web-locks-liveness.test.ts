import { describe, expect, it } from 'vitest';
import { WebLocksLiveness, engineLockName, type LockManagerLike } from './web-locks-liveness';

/** An in-memory Web Locks manager: exclusive locks, granted in request order, released when the callback settles. */
class FakeLocks implements LockManagerLike {
  readonly held = new Set<string>();
  readonly #queues = new Map<string, (() => void)[]>();
  failQueries = false;

  request(name: string, _options: { mode: 'exclusive' }, callback: () => Promise<void>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const run = () => {
        this.held.add(name);
        callback()
          .then(resolve, reject)
          .finally(() => {
            this.held.delete(name);
            const next = this.#queues.get(name)?.shift();
            next?.();
          });
      };
      if (this.held.has(name)) this.#queues.set(name, [...(this.#queues.get(name) ?? []), run]);
      else run();
    });
  }

  async query() {
    if (this.failQueries) throw new Error('SecurityError');
    return { held: [...this.held].map((name) => ({ name })), pending: [] };
  }
}

describe('WebLocksLiveness', () => {
  it('holds the engine lock until released, and reports the engine dead only afterwards', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    const release = await liveness.hold('e1');
    expect(locks.held.has(engineLockName('e1'))).toBe(true);
    expect(await liveness.isDead('e1')).toBe(false);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await liveness.isDead('e1')).toBe(true);
  });

  it('shares one lock between holds of the same id, released when the last hold is', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    const first = await liveness.hold('e1');
    const second = await liveness.hold('e1');
    first();
    first();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await liveness.isDead('e1')).toBe(false);
    second();
    await new Promise((resolve) => setTimeout(resolve, 0));
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

  it('never calls an engine dead when the browser cannot answer', async () => {
    const locks = new FakeLocks();
    const liveness = new WebLocksLiveness(locks);
    locks.failQueries = true;
    expect(await liveness.isDead('gone')).toBe(false);
    expect(await liveness.liveEngineIds()).toBeNull();
  });
});
