/**
 * What the runs driven here wait on that another workflow settles: the children they await and whether they
 * wait on signals. The change feed and the polls look a workflow up here instead of asking every run, so a
 * change costs the same however many workflows this engine holds parked.
 *
 * The index is refreshed when a run is registered and after each of its commits. A leaf that resolves in
 * between leaves its entry behind until then, so the index is a superset: callers still ask the run
 * (`awaitsChild`, `waitsOnSignals`) before waking it.
 */
import type { WorkflowRun } from './run/workflow-run';

export class WaitIndex {
  readonly #parents = new Map<string, Set<WorkflowRun>>();
  readonly #children = new Map<WorkflowRun, readonly string[]>();
  readonly #signalWaiters = new Set<WorkflowRun>();

  /** Records what `run` waits on now (replacing what it waited on before). */
  update(run: WorkflowRun): void {
    this.forget(run);
    const children = run.awaitedChildren;
    if (children.length > 0) {
      this.#children.set(run, children);
      for (const childId of children) {
        let parents = this.#parents.get(childId);
        if (!parents) this.#parents.set(childId, (parents = new Set()));
        parents.add(run);
      }
    }
    if (run.waitsOnSignals) this.#signalWaiters.add(run);
  }

  /** The run no longer waits on anything here (it finished, was dropped or replaced). */
  forget(run: WorkflowRun): void {
    for (const childId of this.#children.get(run) ?? []) {
      const parents = this.#parents.get(childId);
      parents?.delete(run);
      if (parents?.size === 0) this.#parents.delete(childId);
    }
    this.#children.delete(run);
    this.#signalWaiters.delete(run);
  }

  /** Runs that await the child `childId` (checked against the run). */
  parentsOf(childId: string): WorkflowRun[] {
    return [...(this.#parents.get(childId) ?? [])].filter((run) => run.awaitsChild(childId));
  }

  /** Every child some run here awaits. */
  awaitedChildren(): string[] {
    return [...this.#parents.keys()];
  }

  /** Runs waiting on a signal (checked against the run). */
  signalWaiters(): WorkflowRun[] {
    return [...this.#signalWaiters].filter((run) => run.waitsOnSignals);
  }
}
