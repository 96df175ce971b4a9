/**
 * The claim's liveness beside a workflow's owner, and "Take over": the holder as the engine judges it now
 * (`claimHolder`: live, live in its grace period, expired, holder dead, or no holder), and a button that
 * claims the workflow on this page's engine (`reclaim`) — enabled only when the holder is expired or dead.
 * Its outcome is said in words (a refusal, such as a holder that came back to life, in warning colours); an
 * error (a viewer tab or the studio server claims nothing: `ObserverCannotClaimError`) is shown inline in the
 * engine's words, like every action's.
 */
import type { WorkflowDescription } from '../../../public';
import type { HelloResult } from '../../../public/browser';
import { Button } from '../../components/Button';
import { InlineError } from '../../components/ErrorNotice';
import {
  claimLiveness,
  describeReclaim,
  livenessLabel,
  mayTakeOver,
  useClaimHolder,
  useReclaim,
} from '../../data/claim-queries';
import { useEngineDirectory } from '../../data/engine-queries';
import { useStudioMode } from '../../data/studio-mode';
import { useNow } from '../../state/now';
import styles from './ClaimControl.module.css';

export function ClaimControl({
  workflow,
  self,
}: {
  workflow: WorkflowDescription;
  self: HelloResult | undefined;
}) {
  const holder = useClaimHolder(workflow.workflowId, true);
  const reclaim = useReclaim(workflow.workflowId);
  const engines = useEngineDirectory();
  const { claimTimings, server } = useStudioMode();
  const now = useNow();
  if (holder.isError) return <InlineError error={holder.error} testId="detail.claim-error" />;
  if (holder.data === undefined) return null;
  const liveness = claimLiveness(
    holder.data,
    now,
    claimTimings.graceMs,
    holder.data ? engines.get(holder.data.engineId)?.status : undefined,
  );
  const name = (engineId: string) => engines.get(engineId)?.label ?? `engine ${engineId.slice(0, 8)}`;
  const enabled = mayTakeOver(liveness);
  const observer = self?.mode === 'viewer';
  const title = enabled
    ? observer
      ? server
        ? 'Its holder is not live. The studio server claims nothing (its engine will refuse); the worker processes take it over by themselves.'
        : 'Its holder is not live. This tab is a viewer and claims nothing (its engine will refuse); a tab with an engine takes it over by itself.'
      : 'Its holder is not live: claim it on this tab’s engine now (reclaim)'
    : liveness.state === 'live'
      ? 'Its holder is live: only a workflow whose holder is expired or dead can be taken over'
      : 'Nobody holds it: nothing to take over';
  const result = reclaim.isSuccess ? describeReclaim(reclaim.data, name) : null;
  return (
    <span className={styles.claim} data-testid="detail.claim">
      <span
        className={`${styles.liveness} ${styles[liveness.state]}`}
        data-testid="detail.claim-liveness"
        data-liveness={liveness.state}
        title={
          liveness.state === 'none'
            ? 'No engine holds a claim on it right now'
            : `Claim of ${name(liveness.holder.engineId)} at epoch ${liveness.holder.epoch}, as the engine judges it now`
        }
      >
        {livenessLabel(liveness)}
      </span>
      <Button
        size="sm"
        onClick={() => reclaim.mutate()}
        disabled={!enabled}
        busy={reclaim.isPending}
        title={title}
        testId="detail.take-over-button"
      >
        Take over
      </Button>
      {result ? (
        <span
          className={`${styles.outcome} ${result.ok ? styles.ok : styles.refused}`}
          role="status"
          data-testid="detail.take-over-result"
          data-outcome={reclaim.data?.outcome}
        >
          {result.text}
        </span>
      ) : null}
      {reclaim.isError ? (
        <span className={styles.outcome}>
          <InlineError error={reclaim.error} testId="detail.take-over-error" />
        </span>
      ) : null}
    </span>
  );
}
