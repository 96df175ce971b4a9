/**
 * The listeners of one adapter instance's change feed (`Storage.watch`).
 *
 * Guarantees:
 * - A listener is called only after the commit it reports is visible to reads, never synchronously inside the
 *   committing call: delivery is queued as a microtask, so a listener may read the store straight away.
 * - A listener receives only the touched keys under its prefix, deduplicated, in the order first touched, and
 *   is not called when no touched key is under its prefix.
 * - Commits are delivered in the order they were published; a listener unsubscribed before delivery is not
 *   called. One throwing listener does not keep the others from being called (the error is reported with
 *   `console.error`, since a change feed has nobody to reject to).
 */

import { validateWatch } from './validation';

export type ChangeListener = (keys: string[]) => void;

type Subscription = { prefix: string; listener: ChangeListener };

export class ChangeFeed {
  private subscriptions = new Set<Subscription>();

  /** Adds a listener for keys under `prefix`; returns the function that removes it. */
  subscribe(prefix: string, listener: ChangeListener): () => void {
    validateWatch(prefix, listener);
    const subscription: Subscription = { prefix, listener };
    this.subscriptions.add(subscription);
    return () => {
      this.subscriptions.delete(subscription);
    };
  }

  /** Whether anyone is listening (lets adapters skip work when nobody is). */
  get hasListeners(): boolean {
    return this.subscriptions.size > 0;
  }

  /** Reports a commit that touched `keys`, on a later microtask. */
  publish(keys: readonly string[]): void {
    if (keys.length === 0 || this.subscriptions.size === 0) return;
    const touched = [...new Set(keys)];
    queueMicrotask(() => this.deliver(touched));
  }

  /** Removes every listener. */
  clear(): void {
    this.subscriptions.clear();
  }

  private deliver(keys: readonly string[]): void {
    for (const subscription of [...this.subscriptions]) {
      if (!this.subscriptions.has(subscription)) continue;
      const matching =
        subscription.prefix === '' ? [...keys] : keys.filter((key) => key.startsWith(subscription.prefix));
      if (matching.length === 0) continue;
      try {
        subscription.listener(matching);
      } catch (error) {
        console.error(
          `A storage watch listener for prefix ${JSON.stringify(subscription.prefix)} threw`,
          error,
        );
      }
    }
  }
}
