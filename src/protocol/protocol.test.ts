import { describe, expect, it } from 'vitest';
import {
  PROTOCOL_VERSION,
  isProtocolError,
  methods,
  parseControlMessage,
  parseRequest,
  parseWorkerMessage,
} from '.';
import { classifyKey, StoreChangeCoalescer } from '../host/store-changes';

function request(method: string, params?: unknown, extra: Record<string, unknown> = {}) {
  return { kind: 'request', v: PROTOCOL_VERSION, id: 1, method, params, ...extra };
}

describe('parseRequest', () => {
  it('accepts a well-formed request of every method with its required params', () => {
    const required: Record<string, Record<string, unknown>> = {
      hello: { protocolVersion: PROTOCOL_VERSION, databaseName: 'shuttle', mode: 'engine' },
      start: { workflowType: 'countdown' },
      signal: { workflowId: 'w', name: 'go' },
      query: { workflowId: 'w', name: 'remaining' },
      update: { workflowId: 'w', name: 'rename' },
      timeline: { workflowId: 'w' },
      operationOutcome: { workflowId: 'w', pos: 0 },
      freeze: { seconds: 9 },
      recordCrash: { engineId: 'e', at: 1 },
      engineExiting: { engineId: 'e' },
      compileDefinition: { source: 'export default 1;' },
      saveDefinition: { source: 'export default 1;' },
      deleteDefinition: { name: 'greeter', version: 2 },
      fleetAction: { action: 'start' },
      signalWithStart: { workflowType: 'collector', signalName: 'item', options: { id: 'w' } },
      completeActivity: { token: 'act1:1:0:0:w' },
      failActivity: { token: 'act1:1:0:0:w', error: { message: 'no' } },
      createSchedule: { name: 'nightly', spec: { cron: '0 2 * * *', workflow: 'report' } },
      previewSchedule: { cron: '0 2 * * *' },
      describeQueue: { name: 'payments' },
      queuePosition: { workflowId: 'w' },
      ...Object.fromEntries(
        ['describeSchedule', 'pauseSchedule', 'resumeSchedule', 'triggerSchedule', 'deleteSchedule'].map(
          (m) => [m, { name: 'nightly' }],
        ),
      ),
      ...Object.fromEntries(
        [
          'cancel',
          'terminate',
          'suspend',
          'resume',
          'result',
          'describe',
          'runs',
          'purge',
          'fork',
          'history',
          'checkReplay',
          'claimHolder',
          'reclaim',
        ].map((m) => [m, { workflowId: 'w' }]),
      ),
    };
    for (const method of methods) {
      const parsed = parseRequest(request(method, required[method] ?? {}));
      expect(isProtocolError(parsed), `${method}: ${JSON.stringify(parsed)}`).toBe(false);
    }
  });

  it('passes payloads of any shape through for the engine to validate', () => {
    const parsed = parseRequest(
      request('start', { workflowType: 'countdown', input: [1, { deep: null }], options: { id: 'x' } }),
    );
    expect(parsed).toMatchObject({
      method: 'start',
      params: { input: [1, { deep: null }], options: { id: 'x' } },
    });
  });

  it.each([
    ['a string', 'hello', null, /expected a request object/],
    ['null', null, null, /expected a request object/],
    ['an array', [1, 2], null, /expected a request object/],
    ['a wrong kind', { kind: 'response', id: 3 }, 3, /kind must be 'request'/],
    ['a missing id', { kind: 'request', v: PROTOCOL_VERSION, method: 'metrics' }, null, /id must be/],
    ['a negative id', request('metrics', {}, { id: -1 }), null, /id must be/],
    ['an unknown method', request('explode', {}), 1, /Unknown method .*explode/],
    ['a prototype method name', request('toString', {}), 1, /Unknown method/],
    ['params that are not an object', request('describe', 'w'), 1, /params must be an object/],
    ['a missing param', request('describe', {}), 1, /'workflowId' is missing/],
    ['a param of the wrong type', request('describe', { workflowId: 42 }), 1, /must be a string/],
    ['an unknown param', request('describe', { workflowId: 'w', extra: 1 }), 1, /unknown param 'extra'/],
    ['a non-integer', request('timeline', { workflowId: 'w', limit: 1.5 }), 1, /must be an integer/],
    [
      'an infinite timeout',
      request('update', { workflowId: 'w', name: 'u', timeoutMs: Infinity }),
      1,
      /finite/,
    ],
    [
      'a force flag that is not a boolean',
      request('saveDefinition', { source: 's', force: 'yes' }),
      1,
      /'force' must be true or false/,
    ],
    ['a missing source', request('compileDefinition', {}), 1, /'source' is missing/],
    [
      'a fractional version',
      request('deleteDefinition', { name: 'x', version: 1.5 }),
      1,
      /'version' must be an integer/,
    ],
    ['a claimHolder without a workflow id', request('claimHolder', {}), 1, /'workflowId' is missing/],
    [
      'a reclaim of a number',
      request('reclaim', { workflowId: 7 }),
      1,
      /'workflowId' must be a string, not number 7/,
    ],
    [
      'a reclaim with options it does not take',
      request('reclaim', { workflowId: 'w', force: true }),
      1,
      /unknown param 'force'; it takes workflowId/,
    ],
    [
      'a bad mode',
      request('hello', { protocolVersion: 1, databaseName: 'd', mode: 'god' }),
      1,
      /'engine' or 'viewer'/,
    ],
  ])('refuses %s with a ProtocolError that names the problem', (_label, data, id, message) => {
    const parsed = parseRequest(data);
    expect(parsed).toMatchObject({ kind: 'protocol-error', id, error: { name: 'ProtocolError' } });
    if (isProtocolError(parsed)) expect(parsed.error.message).toMatch(message);
  });

  it('refuses a request of another protocol version and says to reload the tab', () => {
    const parsed = parseRequest(request('metrics', {}, { v: PROTOCOL_VERSION + 1 }));
    expect(parsed).toMatchObject({
      kind: 'protocol-error',
      id: 1,
      error: { name: 'ProtocolVersionMismatchError', details: { pageVersion: PROTOCOL_VERSION + 1 } },
    });
    if (isProtocolError(parsed)) expect(parsed.error.message).toMatch(/different build.*Reload the tab/);
  });

  it('never throws, whatever it is given', () => {
    const hostile = [
      undefined,
      Symbol('x'),
      () => 1,
      Object.create(null),
      {
        kind: 'request',
        v: PROTOCOL_VERSION,
        id: 1,
        method: 'hello',
        params: Object.create(Array.prototype),
      },
      new Proxy({}, { get: () => 'request' }),
    ];
    for (const value of hostile) expect(() => parseRequest(value)).not.toThrow();
  });
});

describe('parseWorkerMessage', () => {
  it('accepts responses and pushes of this version, and nothing else', () => {
    expect(
      parseWorkerMessage({ kind: 'response', v: PROTOCOL_VERSION, id: 1, ok: true, value: 1 }),
    ).not.toBeNull();
    expect(parseWorkerMessage({ kind: 'heartbeat', v: PROTOCOL_VERSION, at: 1 })).not.toBeNull();
    expect(parseWorkerMessage({ kind: 'heartbeat', v: PROTOCOL_VERSION + 1, at: 1 })).toBeNull();
    expect(parseWorkerMessage({ kind: 'gossip', v: PROTOCOL_VERSION })).toBeNull();
    expect(parseWorkerMessage('response')).toBeNull();
  });
});

describe('store change notices', () => {
  it('classifies keys by area and finds the workflow id, unescaped', () => {
    expect(classifyKey('wf:order%3A1')).toEqual({ areas: ['workflows'], workflowId: 'order:1' });
    expect(classifyKey('wf-idx:running:a%25b')).toEqual({ areas: ['workflows'], workflowId: 'a%b' });
    // A commit record may carry the workflow's checkpoint: its row and page change too.
    expect(classifyKey('wf-tl:w1:000001:0000000003')).toEqual({
      areas: ['timelines', 'workflows'],
      workflowId: 'w1',
    });
    expect(classifyKey('wf-owner-holder:w1')).toEqual({ areas: ['claims'], workflowId: 'w1' });
    expect(classifyKey('timer:000001700000000:w2:sleep')).toEqual({ areas: ['timers'], workflowId: 'w2' });
    expect(classifyKey('engine:abc')).toEqual({ areas: ['engines'], workflowId: null });
    expect(classifyKey('studio:engine-counter')).toEqual({ areas: ['engines'], workflowId: null });
    expect(classifyKey('fence-reject:w3:000001700000000:e1')).toEqual({
      areas: ['fence-rejections'],
      workflowId: 'w3',
    });
    expect(classifyKey('upd:w4:u1')).toEqual({ areas: ['messages'], workflowId: 'w4' });
    expect(classifyKey('def:order:000001')).toEqual({ areas: ['definitions'], workflowId: null });
    expect(classifyKey('something-new')).toEqual({ areas: ['other'], workflowId: null });
  });

  it('coalesces many commits into one notice, and says "many" past the id limit', () => {
    const coalescer = new StoreChangeCoalescer({ maxWorkflowIds: 2 });
    expect(coalescer.flush()).toBeNull();
    coalescer.add(['wf:a', 'wf-ckpt:a']);
    coalescer.add(['wf-owner-holder:b']);
    expect(coalescer.flush()).toEqual({
      kind: 'store-changed',
      v: PROTOCOL_VERSION,
      areas: ['claims', 'workflows'],
      workflowIds: ['a', 'b'],
    });
    coalescer.add(['wf:a', 'wf:b', 'wf:c']);
    expect(coalescer.flush()).toMatchObject({ workflowIds: null });
    expect(coalescer.flush()).toBeNull();
  });
});

describe('parseControlMessage', () => {
  const request = {
    kind: 'control-request',
    v: PROTOCOL_VERSION,
    requestId: 'r1',
    engineId: 'e1',
    action: { type: 'freeze', seconds: 9 },
    from: 'e2',
  };

  it('accepts every kind of control message of this version', () => {
    for (const message of [
      request,
      { ...request, action: { type: 'restart' }, from: null },
      { kind: 'control-ack', v: PROTOCOL_VERSION, requestId: 'r1', engineId: 'e1' },
      { kind: 'control-reply', v: PROTOCOL_VERSION, requestId: 'r1', ok: true, value: { engineId: 'e1' } },
      {
        kind: 'control-reply',
        v: PROTOCOL_VERSION,
        requestId: 'r1',
        ok: false,
        error: { name: 'E', message: 'm' },
      },
      { kind: 'engine-crashed', v: PROTOCOL_VERSION, engineId: 'e1', at: 5 },
    ])
      expect(parseControlMessage(message), JSON.stringify(message)).toMatchObject({ ok: true });
  });

  it('reports a message of another build as a version mismatch, not as garbage', () => {
    expect(parseControlMessage({ ...request, v: PROTOCOL_VERSION + 1 })).toEqual({
      ok: false,
      reason: 'version',
      version: PROTOCOL_VERSION + 1,
      kind: 'control-request',
    });
  });

  it.each([
    ['an unknown action', { ...request, action: { type: 'explode' } }],
    ['a freeze without seconds', { ...request, action: { type: 'freeze' } }],
    ['a freeze of an hour', { ...request, action: { type: 'freeze', seconds: 3_600 } }],
    ['a request without an engine id', { ...request, engineId: '' }],
    ['a reply without a value', { kind: 'control-reply', v: PROTOCOL_VERSION, requestId: 'r', ok: true }],
    ['an unknown kind', { kind: 'gossip', v: PROTOCOL_VERSION }],
    ['a string', 'freeze'],
  ])('refuses %s as malformed', (_label, data) => {
    expect(parseControlMessage(data)).toMatchObject({ ok: false, reason: 'malformed' });
  });
});
