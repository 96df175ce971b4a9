import { describe, expect, it } from 'vitest';
import type { OperationOutcome, TimelineEntry } from '../../../public';
import {
  eventDetail,
  forkWords,
  inputTarget,
  inputView,
  outcomeTarget,
  otherAttemptOutcome,
  outcomeView,
  sameOperation,
} from './event-detail';

const failed = {
  seq: 7,
  at: 1_000,
  engineId: 'engine-a',
  epoch: 2,
  kind: 'activity-failed',
  detail: {
    pos: 3,
    name: 'charge',
    attempt: 1,
    error: {
      name: 'PaymentGatewayError',
      message: 'Payment gateway timed out after 3 s; card not charged',
      stack: 'at charge (order.ts:12)',
    },
  },
} as unknown as TimelineEntry;

describe('eventDetail', () => {
  it('keeps the whole failure, with its stack, and every field', () => {
    const detail = eventDetail(failed, String);
    expect(detail.error).toEqual(failed.detail && (failed.detail as { error: unknown }).error);
    expect(detail.facts).toEqual([
      { label: 'Operation position', value: '3' },
      { label: 'Name', value: 'charge' },
      { label: 'Attempt', value: '1' },
    ]);
    expect(detail).toMatchObject({ seq: 7, engineId: 'engine-a', epoch: 2, position: 3 });
  });

  it('keeps the whole text of a takeover', () => {
    const takeover = {
      seq: 9,
      at: 2_000,
      engineId: 'engine-b',
      epoch: 2,
      kind: 'claim-taken-over',
      detail: {
        fromEngineId: 'engine-a',
        fromEpoch: 1,
        toEngineId: 'engine-b',
        toEpoch: 2,
        reason: 'holder-dead',
      },
    } as unknown as TimelineEntry;
    expect(eventDetail(takeover, String).facts).toContainEqual({ label: 'Reason', value: 'holder-dead' });
  });

  it('finds the other entries of the same operation', () => {
    const started = { ...failed, seq: 6, kind: 'activity-started' } as unknown as TimelineEntry;
    const other = {
      ...failed,
      seq: 8,
      detail: { pos: 4, name: 'x', attempt: 1 },
    } as unknown as TimelineEntry;
    expect(sameOperation([started, failed, other], failed).map((entry) => entry.seq)).toEqual([6, 7]);
  });
});

/** A timeline entry of `kind` with `detail`, at `seq`. */
function entry(seq: number, kind: TimelineEntry['kind'], detail: Record<string, unknown>): TimelineEntry {
  return { seq, at: 1_000 + seq, engineId: 'engine-a', epoch: 1, kind, detail } as unknown as TimelineEntry;
}

describe('outcomeTarget', () => {
  const received = entry(4, 'signal-received', { name: 'approve', sentBy: 'engine-b' });
  const consumed = entry(5, 'signal-consumed', { pos: 2, member: 0, name: 'approve' });

  it('names the operation of any entry about one, and the update of an applied update', () => {
    expect(outcomeTarget(failed, [])).toEqual({ of: { pos: 3, member: 0 }, heading: 'Result' });
    expect(outcomeTarget(entry(9, 'activity-completed', { pos: 1, member: 2, name: 'a' }), [])).toEqual({
      of: { pos: 1, member: 2 },
      heading: 'Result',
    });
    expect(outcomeTarget(consumed, [])).toEqual({ of: { pos: 2, member: 0 }, heading: 'Payload' });
    expect(outcomeTarget(entry(6, 'timer-fired', { pos: 2, member: 0, kind: 'signal' }), [])).toMatchObject({
      heading: 'Payload',
    });
    expect(outcomeTarget(entry(7, 'update-applied', { name: 'note', updateId: 'u-1' }), [])).toEqual({
      of: { updateId: 'u-1' },
      heading: 'Result',
    });
    expect(
      outcomeTarget(entry(8, 'update-rejected', { name: 'note', updateId: 'u-2', error: 'no' }), []),
    ).toBeNull();
    expect(
      outcomeTarget(entry(0, 'claim-acquired', { engineId: 'e', epoch: 1, how: 'start' }), []),
    ).toBeNull();
  });

  it('reads the payload of a received signal from the consumption written right after it', () => {
    expect(outcomeTarget(received, [received, consumed])).toEqual({
      of: { pos: 2, member: 0 },
      heading: 'Payload',
      consumedBy: 5,
    });
    const otherSignal = entry(5, 'signal-consumed', { pos: 2, member: 0, name: 'cancel' });
    expect(outcomeTarget(received, [received, otherSignal])).toMatchObject({
      of: null,
      note: expect.stringContaining('where the signal is consumed') as string,
    });
  });
});

describe('outcomeView', () => {
  const result: OperationOutcome = {
    kind: 'activity',
    name: 'charge',
    pos: 1,
    ok: true,
    value: { chargeId: 'ch_1', note: 'café' },
  };

  it('shows a value as pretty JSON with its stored size', () => {
    expect(outcomeView(result, { heading: 'Result' })).toEqual({
      state: 'value',
      heading: 'Result',
      json: '{\n  "chargeId": "ch_1",\n  "note": "café"\n}',
      bytes: new TextEncoder().encode('{"chargeId":"ch_1","note":"café"}').length,
    });
    expect(
      outcomeView(
        { kind: 'signal', name: 'approve', pos: 2, ok: true, value: { ok: true } },
        { heading: 'Result' },
      ),
    ).toMatchObject({ heading: 'Payload', json: '{\n  "ok": true\n}' });
    expect(
      outcomeView({ kind: 'until', name: 'until', pos: 2, ok: true, value: false }, { heading: 'Result' }),
    ).toMatchObject({ heading: 'Result', json: 'false', bytes: 5 });
  });

  it('says in words what is not recorded yet, and what returned nothing', () => {
    expect(outcomeView(null, { heading: 'Payload' })).toMatchObject({
      state: 'not-recorded',
      heading: 'Payload',
      text: expect.stringContaining('Not recorded yet') as string,
    });
    expect(
      outcomeView({ kind: 'sleep', name: 'sleep', pos: 4, ok: true }, { heading: 'Result' }),
    ).toMatchObject({
      json: null,
      text: 'A timer returns nothing.',
    });
    const noPayload: OperationOutcome = { kind: 'signal', name: 'approve', pos: 2, ok: true };
    const consumed = entry(5, 'signal-consumed', { pos: 2, member: 0, name: 'approve' });
    expect(outcomeView(noPayload, { heading: 'Payload' }, [consumed])).toMatchObject({
      text: 'No payload: the signal was sent without one.',
    });
    expect(outcomeView(noPayload, { heading: 'Payload' }, [])).toMatchObject({
      text: 'No payload: no signal came before the wait timed out.',
    });
  });

  it('shows a failure as an error, and says when it was the cancellation of the whole operation', () => {
    const error = { name: 'ActivityFailedError', message: "Activity 'ship' failed after 2 attempts" };
    expect(
      outcomeView({ kind: 'activity', name: 'ship', pos: 3, ok: false, error }, { heading: 'Result' }),
    ).toEqual({ state: 'error', heading: 'Error', error });
    const cancelled = { name: 'CancelledError', message: 'cancelled' };
    expect(
      outcomeView(
        { kind: 'all', name: 'all', pos: 3, ok: false, error: cancelled, cancelled: true },
        {
          heading: 'Result',
        },
      ),
    ).toMatchObject({
      state: 'error',
      text: expect.stringContaining('before this member had an outcome') as string,
    });
  });

  it('shows the state after an update, and the argument it was sent with', () => {
    expect(
      outcomeView(
        {
          kind: 'update',
          name: 'note',
          pos: 1,
          updateId: 'u-1',
          ok: true,
          arg: { note: 'fragile' },
          stateAfter: { note: 'fragile' },
        },
        { heading: 'Result' },
      ),
    ).toMatchObject({
      state: 'value',
      heading: 'Result',
      json: '{\n  "note": "fragile"\n}',
      text: expect.stringContaining('state right after the update') as string,
      argument: { heading: 'Argument', json: '{\n  "note": "fragile"\n}', bytes: 18 },
    });
    expect(
      outcomeView(
        { kind: 'update', name: 'ping', pos: 1, updateId: 'u-2', ok: true, stateAfter: {} },
        { heading: 'Result' },
      ),
    ).toMatchObject({
      argument: { heading: 'Argument', json: null, text: expect.stringContaining('without one') },
    });
  });
});

describe('inputTarget and inputView', () => {
  it('reads a start’s input from the run and a child’s from the child; other entries carry none', () => {
    expect(inputTarget(entry(1, 'started', { workflowType: 'order', version: 1 }))).toEqual({ of: 'run' });
    expect(inputTarget(entry(1, 'scheduled', { workflowType: 'order', version: 1, startAt: 5 }))).toEqual({
      of: 'run',
    });
    expect(
      inputTarget(
        entry(3, 'child-started', {
          pos: 2,
          member: 0,
          childId: 'o-1.shipment',
          workflowType: 'shipment',
          parentClosePolicy: 'terminate',
        }),
      ),
    ).toEqual({ of: 'child', childId: 'o-1.shipment' });
    expect(inputTarget(failed)).toBeNull();
    expect(inputTarget(entry(4, 'update-applied', { name: 'note', updateId: 'u' }))).toBeNull();
  });

  it('shows an input whole, as pretty JSON with its stored size, or says there was none', () => {
    const input = { orderId: 'E-1', note: 'café' };
    expect(inputView(input, 'Input')).toEqual({
      heading: 'Input',
      json: JSON.stringify(input, null, 2),
      bytes: new TextEncoder().encode(JSON.stringify(input)).length,
    });
    expect(inputView(undefined, 'Input')).toMatchObject({
      json: null,
      text: 'No input: it was started without one.',
    });
  });
});

describe('otherAttemptOutcome', () => {
  const op = { pos: 2, member: 0, name: 'charge' };
  const retried = [
    entry(10, 'activity-started', { ...op, attempt: 1 }),
    entry(11, 'activity-failed', { ...op, attempt: 1, error: { name: 'Error', message: 'declined' } }),
    entry(12, 'activity-retry-scheduled', { ...op, nextAttempt: 2, dueAt: 0, waitMs: 10 }),
    entry(13, 'activity-started', { ...op, attempt: 2 }),
    entry(14, 'activity-failed', { ...op, attempt: 2, error: { name: 'Error', message: 'declined' } }),
    entry(15, 'activity-retry-scheduled', { ...op, nextAttempt: 3, dueAt: 0, waitMs: 10 }),
    entry(16, 'activity-started', { ...op, attempt: 3 }),
    entry(17, 'activity-completed', { ...op, attempt: 3, durationMs: 5 }),
    entry(18, 'activity-started', { pos: 3, member: 0, name: 'ship', attempt: 1 }),
  ];

  it("names the attempt whose result it is on a failed attempt's entries, not on the settling attempt's", () => {
    const settled = { attempt: 3, seq: 17, ok: true };
    expect(otherAttemptOutcome(retried[1]!, retried)).toEqual({ ...settled, ownAttempt: 1 });
    expect(otherAttemptOutcome(retried[2]!, retried)).toEqual({ ...settled, ownAttempt: 1 });
    expect(otherAttemptOutcome(retried[4]!, retried)).toEqual({ ...settled, ownAttempt: 2 });
    expect(otherAttemptOutcome(retried[6]!, retried)).toBeNull();
    expect(otherAttemptOutcome(retried[7]!, retried)).toBeNull();
    // Not settled yet: nothing to name (the outcome reads 'Not recorded yet').
    expect(otherAttemptOutcome(retried[1]!, retried.slice(0, 6))).toBeNull();
    expect(outcomeTarget(retried[1]!, retried)).toEqual({
      of: { pos: 2, member: 0 },
      heading: 'Result',
      settledBy: { ...settled, ownAttempt: 1 },
    });
  });

  it('names the attempt that failed for good', () => {
    const failedForGood = retried.slice(0, 5);
    expect(otherAttemptOutcome(failedForGood[1]!, failedForGood)).toEqual({
      attempt: 2,
      seq: 14,
      ok: false,
      ownAttempt: 1,
    });
    expect(otherAttemptOutcome(failedForGood[4]!, failedForGood)).toBeNull();
  });
});

describe('forkWords', () => {
  it('says what a fork replays and what it runs again, from the first operation, the second, or later', () => {
    expect(forkWords(1, 0)).toContain('nothing is replayed: the whole workflow runs again');
    expect(forkWords(2, 1)).toContain('operation #0 of run 2 is replayed from its history');
    expect(forkWords(2, 1)).toContain('operation #1 and everything after it run anew');
    expect(forkWords(3, 5)).toContain('operations #0 to #4 of run 3 are replayed');
  });
});
