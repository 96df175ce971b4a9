/**
 * Adding an engine to the database: `openEngineTab` opens the studio in another tab (tab mode: one more engine
 * competing for the same workflows), and `StartWorkerButton` starts one more worker process of the fleet the
 * studio server controls (server mode; nothing when it controls none). Used by the top bar's button
 * (`OpenEngineTab`, src/ui/shell/EnginesOverview.tsx), the command palette, and the Engines and Chaos screens.
 */
import { Button } from './Button';
import { useFleet, useFleetAction } from '../data/studio-mode';

/** Opens the studio in a new tab: a new engine that competes for the same database's workflows. */
export function openEngineTab(): void {
  window.open(location.href, '_blank');
}

/** Starts one more worker process of the fleet the studio server controls; nothing when it controls none. */
export function StartWorkerButton({
  size,
  variant,
  testId = 'shell.start-worker',
}: {
  size: 'sm' | 'md';
  variant: 'primary' | 'secondary';
  testId?: string;
}) {
  const fleet = useFleet();
  const action = useFleetAction();
  if (!fleet.data?.controlled) return null;
  return (
    <Button
      icon="plus"
      size={size}
      variant={variant}
      busy={action.isPending && action.variables?.action === 'start'}
      onClick={() => action.mutate({ action: 'start' })}
      testId={testId}
      title="Start one more worker process (shuttle worker) on this store: one more engine competing for its workflows"
    >
      Worker
    </Button>
  );
}
