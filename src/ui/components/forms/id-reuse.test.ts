import { describe, expect, it } from 'vitest';
import { rebuildError } from '../../../client/client';
import { idReuseRefusal, withIdReuse } from './id-reuse';

/**
 * A WorkflowIdReuseError as the engine worker sends it (serializeError: its name, message and own fields) and
 * the page rebuilds it.
 */
function reuseError(workflowId: string, existingType: string, requestedType: string | null): Error {
  const message =
    requestedType === null
      ? `Workflow '${workflowId}' already ran (as '${existingType}') and idReuse is 'never'. Choose another id.`
      : `Workflow '${workflowId}' last ran as '${existingType}', not '${requestedType}'. Choose another id, or pass { idReuse: 'any-type' } to start a '${requestedType}' run under it (earlier runs are kept).`;
  return rebuildError({
    name: 'WorkflowIdReuseError',
    message,
    details: { workflowId, existingType, requestedType },
  });
}

describe('idReuseRefusal', () => {
  it('reads the refused start from a WorkflowIdReuseError that crossed from the worker', () => {
    expect(idReuseRefusal(reuseError('inv-7', 'countdown', 'order'))).toEqual({
      workflowId: 'inv-7',
      existingType: 'countdown',
      requestedType: 'order',
      message:
        "Workflow 'inv-7' last ran as 'countdown', not 'order'. Choose another id, or pass { idReuse: 'any-type' } to start a 'order' run under it (earlier runs are kept).",
    });
  });

  it('offers nothing for a refusal under idReuse never, nor for any other error', () => {
    expect(idReuseRefusal(reuseError('inv-7', 'countdown', null))).toBeNull();
    const exists = rebuildError({
      name: 'WorkflowAlreadyExistsError',
      message: "Workflow 'inv-7' already exists and is running.",
      details: { workflowId: 'inv-7', status: 'running' },
    });
    expect(idReuseRefusal(exists)).toBeNull();
    expect(idReuseRefusal(new Error('WorkflowIdReuseError'))).toBeNull();
    expect(idReuseRefusal('WorkflowIdReuseError')).toBeNull();
  });
});

describe('withIdReuse', () => {
  it('adds idReuse any-type to a start and to a signal-with-start, keeping their other options', () => {
    expect(withIdReuse({ kind: 'start', options: { id: 'w', idempotencyKey: 'k' } })).toEqual({
      kind: 'start',
      options: { id: 'w', idempotencyKey: 'k', idReuse: 'any-type' },
    });
    expect(
      withIdReuse({ kind: 'signal-with-start', options: { id: 'w' }, signalName: 'go', payload: 1 }),
    ).toEqual({
      kind: 'signal-with-start',
      options: { id: 'w', idReuse: 'any-type' },
      signalName: 'go',
      payload: 1,
    });
  });
});
