/**
 * A start refused because its id last ran as another workflow type (`WorkflowIdReuseError`): what the start
 * dialog says about it, and the start it offers instead — the same start with `idReuse: 'any-type'`, the
 * option the console API takes, which starts a run of the new type under the id and keeps the earlier runs.
 * A refusal under `idReuse: 'never'` (no requested type) offers nothing: the caller asked for no reuse.
 */
import type { StartPlan } from '../../data/start-actions';

export type IdReuseRefusal = {
  workflowId: string;
  /** The type the id last ran as. */
  existingType: string;
  /** The type the refused start asked for. */
  requestedType: string;
  /** The engine's own message. */
  message: string;
};

/** The refusal `error` describes, or null when it is another error (or a refusal under 'never'). */
export function idReuseRefusal(error: unknown): IdReuseRefusal | null {
  if (!(error instanceof Error) || error.name !== 'WorkflowIdReuseError') return null;
  const { workflowId, existingType, requestedType } = error as Error & Record<string, unknown>;
  if (typeof workflowId !== 'string' || typeof existingType !== 'string' || typeof requestedType !== 'string')
    return null;
  return { workflowId, existingType, requestedType, message: error.message };
}

/** `plan`, asking to reuse a finished id for another type. */
export function withIdReuse(plan: StartPlan): StartPlan {
  return plan.kind === 'start'
    ? { ...plan, options: { ...plan.options, idReuse: 'any-type' } }
    : { ...plan, options: { ...plan.options, idReuse: 'any-type' } };
}
