/**
 * `createOwnership`: the one place that looks at the configured mode. It checks that the storage can fence
 * (a fencing mode needs an atomic `conditionalBatch`) and returns the mode's strategy.
 */
import type { OwnershipMode } from '../options';
import { LeaseOwnership } from './lease';
import { checkCapability } from './mode-marker';
import { NoOwnership } from './none';
import type { Ownership, OwnershipDeps } from './ownership';
import { WorkflowLeaseOwnership } from './workflow-lease';

export function createOwnership(mode: OwnershipMode, deps: OwnershipDeps): Ownership {
  checkCapability(deps.storage, mode);
  switch (mode) {
    case 'none':
      return new NoOwnership(deps);
    case 'lease':
      return new LeaseOwnership(deps);
    case 'workflow-lease':
      return new WorkflowLeaseOwnership(deps);
  }
}
