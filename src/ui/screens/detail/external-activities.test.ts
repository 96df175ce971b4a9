import { describe, expect, it } from 'vitest';
import type { WorkflowDescription } from '../../../public';
import { waitingExternalActivities } from './external-activities';

const pending = (
  leaves: NonNullable<WorkflowDescription['pending']>['leaves'],
): Pick<WorkflowDescription, 'pending'> => ({
  pending: { position: 3, kind: 'all', name: 'all', summary: 'all of 2', since: 1_000, leaves },
});

describe('waiting external activities', () => {
  it('lists the open activity leaves that carry a completion token', () => {
    expect(
      waitingExternalActivities(
        pending([
          {
            kind: 'activity',
            name: 'await-decision',
            done: false,
            attempt: 2,
            completionToken: 'act1:1:3:0:po',
            lastError: { name: 'Rejected', message: 'not yet' } as never,
          },
          { kind: 'activity', name: 'charge', done: false, attempt: 1 },
          { kind: 'signal', name: 'approve', done: false },
        ]),
      ),
    ).toEqual([
      {
        name: 'await-decision',
        token: 'act1:1:3:0:po',
        attempt: 2,
        lastError: { name: 'Rejected', message: 'not yet' },
        since: 1_000,
      },
    ]);
  });

  it('is empty when nothing waits', () => {
    expect(waitingExternalActivities({ pending: null })).toEqual([]);
    expect(
      waitingExternalActivities(pending([{ kind: 'activity', name: 'x', done: true, completionToken: 't' }])),
    ).toEqual([]);
  });
});
