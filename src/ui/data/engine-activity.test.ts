import { beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type PushMessage } from '../../public/browser';
import { dismissWarning, engineActivitySnapshot, recordPush, resetEngineActivity } from './engine-activity';

function events(list: Extract<PushMessage, { kind: 'events' }>['events']): PushMessage {
  return { kind: 'events', v: PROTOCOL_VERSION, events: list };
}

describe('engine activity', () => {
  beforeEach(() => resetEngineActivity());

  it('records a workflow lost by a refused write, keeps how, and forgets it once this engine owns it again', () => {
    recordPush(events([{ type: 'write.fenced-out', workflowId: 'w', heldEpoch: 1, currentEpoch: 2 }]), 5);
    recordPush(events([{ type: 'claim.lost', workflowId: 'w', epoch: 1, reason: 'deposed' }]), 6);
    expect(engineActivitySnapshot().lost.get('w')).toMatchObject({
      how: 'fenced-out',
      epoch: 1,
      currentEpoch: 2,
      at: 6,
    });
    const before = engineActivitySnapshot();
    expect(recordPush(events([{ type: 'claim.renewed', count: 3 }]))).toBe(false);
    expect(engineActivitySnapshot()).toBe(before);
    recordPush(events([{ type: 'claim.acquired', workflowId: 'w', epoch: 3, how: 'acquire' }]));
    expect(engineActivitySnapshot().lost.has('w')).toBe(false);
  });

  it('keeps the latest warnings, newest first, until dismissed', () => {
    recordPush({
      kind: 'warning',
      v: PROTOCOL_VERSION,
      warning: { name: 'StorageWarning', message: 'slow' },
    });
    recordPush({
      kind: 'warning',
      v: PROTOCOL_VERSION,
      warning: { name: 'VersionMismatchWarning', message: 'old tab' },
    });
    const [latest, older] = engineActivitySnapshot().warnings;
    expect([latest?.name, older?.name]).toEqual(['VersionMismatchWarning', 'StorageWarning']);
    dismissWarning(latest!.id);
    expect(engineActivitySnapshot().warnings.map((warning) => warning.name)).toEqual(['StorageWarning']);
  });
});
