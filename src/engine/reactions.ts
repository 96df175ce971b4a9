/**
 * Work the engine starts in reaction to something — a commit seen on the change feed, another engine's
 * session ending, a result to re-check — that no caller awaits. Each piece handles its own failures (a
 * poll finds what a failed reaction missed); it is counted here only so that `engine.idle()` can wait until
 * nothing the engine started is still in flight, whatever the store's latency.
 */
export class Reactions {
  #inFlight = 0;
  #drained: { promise: Promise<void>; resolve: () => void } | null = null;

  /** Tracks `work` until it settles; its outcome is ignored. */
  run(work: Promise<unknown>): void {
    this.#inFlight++;
    void work.then(ignore, ignore).then(() => {
      if (--this.#inFlight > 0 || !this.#drained) return;
      this.#drained.resolve();
      this.#drained = null;
    });
  }

  /** Runs `work` a microtask from now (so that notices arriving together are handled together), tracked. */
  soon(work: () => Promise<unknown>): void {
    this.run(Promise.resolve().then(work));
  }

  /** Resolves when nothing is in flight; null when nothing is now. */
  get drained(): Promise<void> | null {
    if (this.#inFlight === 0) return null;
    if (!this.#drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#drained = { promise, resolve };
    }
    return this.#drained.promise;
  }
}

function ignore(): void {}
