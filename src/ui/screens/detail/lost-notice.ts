/**
 * What the "this engine lost this workflow" notice says, as a pure function: how it was lost (its claim
 * taken, or its write refused by the epoch fence), then where the workflow is now — the store's truth, not
 * this engine's memory: ended (and how), owned by a named engine at a named epoch, or owned by nobody yet.
 */
import type { FenceRejection, WorkflowDescription } from '../../../public';
import { isTerminal } from '../../../public/browser';
import type { LostWorkflow } from '../../data/engine-activity';

export function describeLoss(lost: LostWorkflow | null, refused: readonly FenceRejection[]): string {
  const parts: string[] = [];
  if (lost?.how === 'claim-lost') parts.push(`Its claim at epoch ${lost.epoch} was lost: ${lost.reason}.`);
  const rejection = refused.at(-1);
  if (rejection)
    parts.push(
      `${refused.length === 1 ? 'Its write was' : `${refused.length} of its writes were`} refused by the epoch fence (it held epoch ${rejection.heldEpoch}; the workflow is at ${rejection.currentEpoch ?? 'a newer epoch'}).`,
    );
  else if (lost?.how === 'fenced-out')
    parts.push(`Its write at epoch ${lost.epoch} was refused: ${lost.reason}.`);
  return parts.join(' ');
}

/** Where the workflow is now, from its description: ended, owned by whom at which epoch, or unowned. */
export function whereNow(
  workflow: Pick<WorkflowDescription, 'status' | 'owner' | 'epoch'>,
  engineName: (engineId: string) => string,
  selfId: string,
): string {
  if (isTerminal(workflow.status))
    return `The workflow has since ended ${workflow.status}${workflow.epoch ? ` at epoch ${workflow.epoch}` : ''}.`;
  if (workflow.owner && workflow.owner.engineId !== selfId)
    return `${engineName(workflow.owner.engineId)} owns it now, at epoch ${workflow.owner.epoch}.`;
  if (workflow.status === 'suspended') return 'It is suspended; nobody owns it until it is resumed.';
  return 'No engine owns it right now; a live engine takes it over within moments.';
}
