/**
 * `client.waitFor`: waiting, on the page, for a workflow to reach a status — by re-reading its description
 * whenever the store reports it changed, and every second.
 */
import type { WorkflowDescription, WorkflowStatus } from '../engine';
import { isTerminal } from '../engine/vocabulary';
import type { PushMessage } from '../protocol';
import { namedError } from './errors';

/** Options of `waitFor`. */
export type WaitForOptions = {
  /** Give up after this many ms. Default 60,000. */
  timeoutMs?: number;
};

/** What waiting needs of the client: reading a workflow, and the worker's pushes. */
export type WaitForSource = {
  describe(workflowId: string): Promise<WorkflowDescription>;
  subscribe(listener: (message: PushMessage) => void): () => void;
};

/**
 * Resolves with the workflow's description once its status is one of `status`; rejects with
 * `WorkflowStatusError` if it ends in another status, or `WaitTimeoutError` after `timeoutMs`. A workflow
 * that does not exist yet is waited for; any other error of a read ends the wait with that error.
 */
export function waitForStatus(
  source: WaitForSource,
  workflowId: string,
  status: WorkflowStatus | readonly WorkflowStatus[],
  options: WaitForOptions = {},
): Promise<WorkflowDescription> {
  const wanted = new Set<WorkflowStatus>(typeof status === 'string' ? [status] : status);
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    let last: WorkflowDescription | null = null;
    let checking = false;
    let again = false;
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      unsubscribe();
      clearInterval(poll);
      clearTimeout(timer);
      settle();
    };
    const check = async () => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          const description = await source.describe(workflowId);
          last = description;
          if (wanted.has(description.status)) return finish(() => resolve(description));
          if (isTerminal(description.status))
            return finish(() =>
              reject(
                namedError(
                  'WorkflowStatusError',
                  `Workflow '${workflowId}' ended ${description.status}${description.error ? ` (${description.error.name}: ${description.error.message})` : ''} while waiting for ${[...wanted].join(' or ')}.`,
                  { workflowId, status: description.status },
                ),
              ),
            );
        } while (again && !done);
      } catch (error) {
        if ((error as Error).name !== 'WorkflowNotFoundError') finish(() => reject(error as Error));
      } finally {
        checking = false;
      }
    };
    const unsubscribe = source.subscribe((message) => {
      if (message.kind === 'store-changed' && (message.workflowIds?.includes(workflowId) ?? true))
        void check();
    });
    const poll = setInterval(() => void check(), 1_000);
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(
            namedError(
              'WaitTimeoutError',
              `Workflow '${workflowId}' was ${last ? last.status : 'not found'} after ${timeoutMs} ms of waiting for ${[...wanted].join(' or ')}.`,
              { workflowId, status: last?.status ?? null },
            ),
          ),
        ),
      timeoutMs,
    );
    void check();
  });
}
