/**
 * The start dialog's answer to a start refused because the id last ran as another workflow type: the
 * engine's message as it gave it, what reusing the id would do, and the one control that does it — the same
 * start again with `idReuse: 'any-type'` (id-reuse.ts).
 */
import { Notice } from '../Notice';
import type { IdReuseRefusal } from './id-reuse';

export function IdReuseRefused({ refusal, onReuse }: { refusal: IdReuseRefusal; onReuse: () => void }) {
  return (
    <Notice
      tone="danger"
      title="This id last ran as another workflow type"
      action={{ label: `Reuse the id for ${refusal.requestedType}`, onClick: onReuse }}
      testId="start.id-reuse-refused"
    >
      <span data-error-name="WorkflowIdReuseError">WorkflowIdReuseError: {refusal.message}</span>{' '}
      <span>
        Reusing it starts a new run of {refusal.requestedType} under {refusal.workflowId}; its earlier{' '}
        {refusal.existingType} runs are kept and stay open from the run switcher.
      </span>
    </Notice>
  );
}
