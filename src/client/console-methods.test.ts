import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION } from '../protocol';
import { FakeWorkerChannel } from '../worker/host.test-support';
import { createShuttleClient, type ShuttleClient } from './client';

/**
 * The console API's methods (`window.shuttle`, README "Console API") are one line each over `client.api`:
 * each must still send the request it always sent (method and params, optional params left out when not
 * given) and resolve with what it always resolved (the id for `start`, nothing for the commands).
 */

type Sent = { id: number; method: string; params: unknown };

/** A worker that answers every request but the first `hello` with `answer`, and records what it was sent. */
function answeringWorker(answer: unknown, options: { requestTimeoutMs?: number } = {}) {
  const channel = new FakeWorkerChannel();
  const sent: Sent[] = [];
  channel.port.listen((data) => {
    const request = data as Sent;
    sent.push(request);
    if (request.id === 1) return; // the constructor's hello stays unanswered
    channel.port.post({ kind: 'response', v: PROTOCOL_VERSION, id: request.id, ok: true, value: answer });
  });
  const client = createShuttleClient(channel.worker, { databaseName: 'db', mode: 'engine', ...options });
  return { channel, client, sent };
}

const started = { workflowId: 'w-1', run: 1, started: true };
const helloAnswer = {
  engineId: 'e-1',
  label: 'Tab A',
  mode: 'engine',
  runtime: { kind: 'worker' },
  status: { state: 'running', since: 0 },
};

/** [call, method sent, params sent, the worker's answer, what the call resolves with]. */
const cases: [string, (client: ShuttleClient) => Promise<unknown>, string, unknown, unknown, unknown][] = [
  [
    'hello()',
    (c) => c.hello(),
    'hello',
    { protocolVersion: PROTOCOL_VERSION, databaseName: 'db', mode: 'engine' },
    helloAnswer,
    helloAnswer,
  ],
  ['engines()', (c) => c.engines(), 'engines', {}, [], []],
  ['definitions()', (c) => c.definitions(), 'definitions', {}, [], []],
  ['compileDefinition', (c) => c.compileDefinition('src'), 'compileDefinition', { source: 'src' }, 'r', 'r'],
  ['saveDefinition', (c) => c.saveDefinition('src'), 'saveDefinition', { source: 'src' }, 'r', 'r'],
  [
    'saveDefinition not forced',
    (c) => c.saveDefinition('src', { force: false }),
    'saveDefinition',
    { source: 'src' },
    'r',
    'r',
  ],
  [
    'saveDefinition forced',
    (c) => c.saveDefinition('src', { force: true }),
    'saveDefinition',
    { source: 'src', force: true },
    'r',
    'r',
  ],
  [
    'deleteDefinition',
    (c) => c.deleteDefinition('d', 2),
    'deleteDefinition',
    { name: 'd', version: 2 },
    'r',
    'r',
  ],
  ['ownedWorkflows()', (c) => c.ownedWorkflows(), 'ownedWorkflows', {}, ['w'], ['w']],
  ['metrics()', (c) => c.metrics(), 'metrics', {}, 'm', 'm'],
  ['start(type)', (c) => c.start('t'), 'start', { workflowType: 't' }, started, 'w-1'],
  [
    'start(type, input, options)',
    (c) => c.start('t', { a: 1 }, { id: 'x' }),
    'start',
    { workflowType: 't', input: { a: 1 }, options: { id: 'x' } },
    started,
    'w-1',
  ],
  [
    'startRun',
    (c) => c.startRun('t', undefined, { id: 'x' }),
    'start',
    { workflowType: 't', options: { id: 'x' } },
    started,
    started,
  ],
  [
    'signalWithStart',
    (c) => c.signalWithStart('t', undefined, 's', undefined, { id: 'x' }),
    'signalWithStart',
    { workflowType: 't', signalName: 's', options: { id: 'x' } },
    started,
    started,
  ],
  [
    'signalWithStart with input and payload',
    (c) => c.signalWithStart('t', 1, 's', 2, { id: 'x' }),
    'signalWithStart',
    { workflowType: 't', signalName: 's', options: { id: 'x' }, input: 1, payload: 2 },
    started,
    started,
  ],
  [
    'completeActivity(token)',
    (c) => c.completeActivity('k'),
    'completeActivity',
    { token: 'k' },
    null,
    undefined,
  ],
  [
    'completeActivity(token, result)',
    (c) => c.completeActivity('k', 0),
    'completeActivity',
    { token: 'k', result: 0 },
    null,
    undefined,
  ],
  [
    'failActivity(token, message)',
    (c) => c.failActivity('k', 'boom'),
    'failActivity',
    { token: 'k', error: { message: 'boom' } },
    null,
    undefined,
  ],
  [
    'failActivity(token, error)',
    (c) => c.failActivity('k', { name: 'E', message: 'm' }),
    'failActivity',
    { token: 'k', error: { name: 'E', message: 'm' } },
    null,
    undefined,
  ],
  ['signal(id, name)', (c) => c.signal('w', 'n'), 'signal', { workflowId: 'w', name: 'n' }, null, undefined],
  [
    'signal(id, name, payload)',
    (c) => c.signal('w', 'n', null),
    'signal',
    { workflowId: 'w', name: 'n', payload: null },
    null,
    undefined,
  ],
  ['query(id, name)', (c) => c.query('w', 'n'), 'query', { workflowId: 'w', name: 'n' }, 7, 7],
  [
    'query(id, name, arg)',
    (c) => c.query('w', 'n', 3),
    'query',
    { workflowId: 'w', name: 'n', arg: 3 },
    7,
    7,
  ],
  ['update(id, name)', (c) => c.update('w', 'n'), 'update', { workflowId: 'w', name: 'n' }, 7, 7],
  [
    'update(id, name, arg, { timeoutMs })',
    (c) => c.update('w', 'n', 3, { timeoutMs: 100 }),
    'update',
    { workflowId: 'w', name: 'n', arg: 3, timeoutMs: 100 },
    7,
    7,
  ],
  ['cancel(id)', (c) => c.cancel('w'), 'cancel', { workflowId: 'w' }, null, undefined],
  [
    'cancel(id, reason)',
    (c) => c.cancel('w', 'r'),
    'cancel',
    { workflowId: 'w', reason: 'r' },
    null,
    undefined,
  ],
  ['terminate(id)', (c) => c.terminate('w'), 'terminate', { workflowId: 'w' }, null, undefined],
  [
    'terminate(id, reason)',
    (c) => c.terminate('w', 'r'),
    'terminate',
    { workflowId: 'w', reason: 'r' },
    null,
    undefined,
  ],
  ['suspend', (c) => c.suspend('w'), 'suspend', { workflowId: 'w' }, null, undefined],
  ['resume', (c) => c.resume('w'), 'resume', { workflowId: 'w' }, null, undefined],
  ['result(id)', (c) => c.result('w'), 'result', { workflowId: 'w' }, 9, 9],
  ['result(id, { run })', (c) => c.result('w', { run: 2 }), 'result', { workflowId: 'w', run: 2 }, 9, 9],
  ['describe(id)', (c) => c.describe('w'), 'describe', { workflowId: 'w' }, 'd', 'd'],
  [
    'describe(id, { run })',
    (c) => c.describe('w', { run: 1 }),
    'describe',
    { workflowId: 'w', run: 1 },
    'd',
    'd',
  ],
  ['runs', (c) => c.runs('w'), 'runs', { workflowId: 'w' }, [], []],
  ['list()', (c) => c.list(), 'list', {}, 'p', 'p'],
  ['list(filter)', (c) => c.list({ status: 'running' }), 'list', { filter: { status: 'running' } }, 'p', 'p'],
  ['timeline(id)', (c) => c.timeline('w'), 'timeline', { workflowId: 'w' }, [], []],
  [
    'timeline(id, options)',
    (c) => c.timeline('w', { after: 3, limit: 2 }),
    'timeline',
    { workflowId: 'w', after: 3, limit: 2 },
    [],
    [],
  ],
  [
    'operationOutcome pos',
    (c) => c.operationOutcome('w', { pos: 1 }),
    'operationOutcome',
    { workflowId: 'w', pos: 1 },
    null,
    null,
  ],
  [
    'operationOutcome update',
    (c) => c.operationOutcome('w', { updateId: 'u', run: 2 }),
    'operationOutcome',
    { workflowId: 'w', updateId: 'u', run: 2 },
    null,
    null,
  ],
  ['history(id)', (c) => c.history('w'), 'history', { workflowId: 'w' }, 'r', 'r'],
  ['checkReplay(id)', (c) => c.checkReplay('w'), 'checkReplay', { workflowId: 'w' }, 'r', 'r'],
  [
    'history(id, { run })',
    (c) => c.history('w', { run: 2 }),
    'history',
    { workflowId: 'w', run: 2 },
    'r',
    'r',
  ],
  ['fork(id)', (c) => c.fork('w'), 'fork', { workflowId: 'w' }, 'r', 'r'],
  [
    'fork(id, options)',
    (c) => c.fork('w', { fromPosition: 2, run: 1, newId: 'w2', version: 3 }),
    'fork',
    { workflowId: 'w', fromPosition: 2, run: 1, newId: 'w2', version: 3 },
    'r',
    'r',
  ],
  ['purge(id)', (c) => c.purge('w'), 'purge', { workflowId: 'w' }, 'r', 'r'],
  ['purge(id, { run })', (c) => c.purge('w', { run: 1 }), 'purge', { workflowId: 'w', run: 1 }, 'r', 'r'],
  ['purgeFinished()', (c) => c.purgeFinished(), 'purgeFinished', { filter: {} }, 'r', 'r'],
  [
    'purgeFinished(filter, { dryRun })',
    (c) => c.purgeFinished({ workflowType: 'c' }, { dryRun: true }),
    'purgeFinished',
    { filter: { workflowType: 'c' }, dryRun: true },
    'r',
    'r',
  ],
  ['storageUsage()', (c) => c.storageUsage(), 'storageUsage', {}, 'u', 'u'],
  [
    'schedule(name, spec)',
    (c) => c.schedule('s', { cron: '* * * * *', workflow: 'c' }),
    'createSchedule',
    { name: 's', spec: { cron: '* * * * *', workflow: 'c' } },
    'i',
    'i',
  ],
  [
    'schedule(name, spec, { replace })',
    (c) => c.schedule('s', { cron: '* * * * *', workflow: 'c' }, { replace: true }),
    'createSchedule',
    { name: 's', spec: { cron: '* * * * *', workflow: 'c' }, replace: true },
    'i',
    'i',
  ],
  ['schedules()', (c) => c.schedules(), 'schedules', {}, [], []],
  ['describeSchedule', (c) => c.describeSchedule('s'), 'describeSchedule', { name: 's' }, 'i', 'i'],
  ['queues()', (c) => c.queues(), 'queues', {}, [], []],
  ['describeQueue', (c) => c.describeQueue('payments'), 'describeQueue', { name: 'payments' }, 'q', 'q'],
  ['queuePosition', (c) => c.queuePosition('w-1'), 'queuePosition', { workflowId: 'w-1' }, null, null],
  ['activityLimits()', (c) => c.activityLimits(), 'activityLimits', {}, [], []],
  ['pauseSchedule', (c) => c.pauseSchedule('s'), 'pauseSchedule', { name: 's' }, 'i', 'i'],
  ['resumeSchedule', (c) => c.resumeSchedule('s'), 'resumeSchedule', { name: 's' }, 'i', 'i'],
  ['triggerSchedule', (c) => c.triggerSchedule('s'), 'triggerSchedule', { name: 's' }, started, started],
  ['deleteSchedule', (c) => c.deleteSchedule('s'), 'deleteSchedule', { name: 's' }, null, undefined],
  [
    'previewSchedule(cron)',
    (c) => c.previewSchedule('* * * * *'),
    'previewSchedule',
    { cron: '* * * * *' },
    'p',
    'p',
  ],
  [
    'previewSchedule(cron, options)',
    (c) => c.previewSchedule('* * * * *', { timezone: 'UTC', count: 3 }),
    'previewSchedule',
    { cron: '* * * * *', timezone: 'UTC', count: 3 },
    'p',
    'p',
  ],
  ['claims()', (c) => c.claims(), 'claims', {}, [], []],
  ['claimHolder', (c) => c.claimHolder('w'), 'claimHolder', { workflowId: 'w' }, null, null],
  ['reclaim', (c) => c.reclaim('w'), 'reclaim', { workflowId: 'w' }, 'o', 'o'],
  ['fenceRejections()', (c) => c.fenceRejections(), 'fenceRejections', {}, [], []],
  ['fenceRejections(id)', (c) => c.fenceRejections('w'), 'fenceRejections', { workflowId: 'w' }, [], []],
  ['resultWaiters()', (c) => c.resultWaiters(), 'resultWaiters', {}, [], []],
  ['shutdown()', (c) => c.shutdown(), 'shutdown', {}, 'r', 'r'],
  ['fleet()', (c) => c.fleet(), 'fleet', {}, 'f', 'f'],
  ['startWorker()', (c) => c.startWorker(), 'fleetAction', { action: 'start' }, 'o', 'o'],
  ['thawWorker', (c) => c.thawWorker('e'), 'fleetAction', { engineId: 'e', action: 'thaw' }, 'o', 'o'],
];

let open: ShuttleClient | null = null;

afterEach(() => {
  open?.close();
  open = null;
  vi.useRealTimers();
});

describe('the console methods', () => {
  it.each(cases)(
    '%s sends its request and resolves as it always did',
    async (_, call, method, params, answer, resolved) => {
      const { client, sent } = answeringWorker(answer);
      open = client;
      await expect(call(client)).resolves.toStrictEqual(resolved);
      const requests = sent.filter((request) => request.id !== 1);
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ kind: 'request', v: PROTOCOL_VERSION, method });
      expect(requests[0]!.params).toStrictEqual(params);
    },
  );

  it('lets result() wait as long as the worker lives, and update() its own timeoutMs plus 5 s', async () => {
    vi.useFakeTimers();
    const channel = new FakeWorkerChannel();
    const client = createShuttleClient(channel.worker, {
      databaseName: 'db',
      mode: 'engine',
      requestTimeoutMs: 500,
      unresponsiveAfterMs: 600_000,
    });
    open = client;
    let settled = false;
    void client
      .result('w')
      .finally(() => (settled = true))
      .catch(() => undefined);
    const update = client.update('w', 'n', undefined, { timeoutMs: 1_000 });
    const updateFailed = expect(update).rejects.toMatchObject({
      name: 'RequestTimeoutError',
      timeoutMs: 6_000,
    });
    const metrics = expect(client.metrics()).rejects.toMatchObject({
      name: 'RequestTimeoutError',
      timeoutMs: 500,
    });
    await vi.advanceTimersByTimeAsync(600);
    await metrics;
    await vi.advanceTimersByTimeAsync(5_500);
    await updateFailed;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(settled).toBe(false);
  });
});
