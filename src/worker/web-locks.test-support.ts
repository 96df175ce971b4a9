/**
 * An in-memory Web Locks manager for tests: exclusive and shared modes, requests granted in order (a shared
 * request waits behind an earlier exclusive one, as in browsers), `AbortSignal` support for queued requests,
 * and `query()` snapshots with modes. A lock is released when its callback's result settles.
 */
import type { LockInfoLike, LockManagerLike } from './web-locks-liveness';

type Mode = 'exclusive' | 'shared';
type Request = { name: string; mode: Mode; grant: () => void; signal: AbortSignal | undefined };

export class FakeLocks implements LockManagerLike {
  /** Held locks: name → holds (one exclusive, or any number of shared). */
  readonly #held = new Map<string, Mode[]>();
  readonly #queue: Request[] = [];
  failQueries = false;

  request(
    name: string,
    options: { mode: Mode; signal?: AbortSignal },
    callback: () => Promise<void> | void,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (options.signal?.aborted) {
        reject(new DOMException('aborted', 'AbortError'));
        return;
      }
      const request: Request = {
        name,
        mode: options.mode,
        signal: options.signal,
        grant: () => {
          this.#held.set(name, [...(this.#held.get(name) ?? []), options.mode]);
          Promise.resolve()
            .then(callback)
            .then(resolve, reject)
            .finally(() => {
              const holds = this.#held.get(name) ?? [];
              holds.splice(holds.indexOf(options.mode), 1);
              if (holds.length === 0) this.#held.delete(name);
              this.#pump();
            });
        },
      };
      options.signal?.addEventListener('abort', () => {
        const index = this.#queue.indexOf(request);
        if (index < 0) return;
        this.#queue.splice(index, 1);
        reject(new DOMException('aborted', 'AbortError'));
      });
      this.#queue.push(request);
      this.#pump();
    });
  }

  /** Grants every queued request that can be granted now, in order. */
  #pump(): void {
    for (let index = 0; index < this.#queue.length;) {
      const request = this.#queue[index]!;
      const holds = this.#held.get(request.name) ?? [];
      const earlierWaiting = this.#queue.slice(0, index).some((other) => other.name === request.name);
      const grantable =
        !earlierWaiting &&
        (holds.length === 0 || (request.mode === 'shared' && !holds.includes('exclusive')));
      if (!grantable) {
        index++;
        continue;
      }
      this.#queue.splice(index, 1);
      request.grant();
    }
  }

  async query(): Promise<{ held: LockInfoLike[]; pending: LockInfoLike[] }> {
    if (this.failQueries) throw new Error('SecurityError');
    return {
      held: [...this.#held].flatMap(([name, modes]) => modes.map((mode) => ({ name, mode }))),
      pending: this.#queue.map(({ name, mode }) => ({ name, mode })),
    };
  }

  /** How many requests wait in the queue for `name` (all names when omitted). */
  pendingCount(name?: string): number {
    return this.#queue.filter((request) => name === undefined || request.name === name).length;
  }

  isHeld(name: string, mode?: Mode): boolean {
    const holds = this.#held.get(name) ?? [];
    return mode === undefined ? holds.length > 0 : holds.includes(mode);
  }
}

/** Lets queued lock callbacks and their promise chains run. */
export async function flushLocks(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise((resolve) => setTimeout(resolve, 0));
}
