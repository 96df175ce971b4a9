import { describe, expect, it } from 'vitest';
import { defaultFilters, formatRoute, parseRoute, routes, sectionOf } from './route';

describe('routes', () => {
  it('reads screens, a workflow id and list filters from the hash, and writes them back canonically', () => {
    expect(parseRoute('#/engines')).toEqual({ screen: 'engines' });
    expect(parseRoute('#/pending')).toEqual({ screen: 'pending' });
    expect(formatRoute(routes.pending())).toBe('#/pending');
    expect(parseRoute('#/workflows/order%2F7%20a')).toEqual({ screen: 'workflow', workflowId: 'order/7 a' });
    const route = parseRoute(
      '#/workflows?status=running,failed,bogus&type=order&owner=e1&q=ord&sort=epoch&dir=asc',
    );
    expect(route).toEqual({
      screen: 'workflows',
      filters: {
        status: ['running', 'failed'],
        type: 'order',
        owner: 'e1',
        idPrefix: 'ord',
        text: '',
        since: null,
        nest: false,
        sort: 'epoch',
        direction: 'asc',
        allRuns: false,
        where: [],
      },
    });
    expect(formatRoute(route)).toBe(
      '#/workflows?status=running%2Cfailed&type=order&owner=e1&q=ord&sort=epoch&dir=asc',
    );
    expect(formatRoute(routes.workflow('order/7 a'))).toBe('#/workflows/order%2F7%20a');
  });

  it('reads and writes the run of a workflow page, the list of every run, and the schedules', () => {
    expect(parseRoute('#/workflows/order-7?run=2')).toEqual({
      screen: 'workflow',
      workflowId: 'order-7',
      run: 2,
    });
    expect(formatRoute(routes.workflow('order 7', 2))).toBe('#/workflows/order%207?run=2');
    for (const bad of ['0', '-1', '1.5', 'x', ''])
      expect(parseRoute(`#/workflows/w?run=${bad}`)).toEqual({ screen: 'workflow', workflowId: 'w' });
    expect(formatRoute(routes.workflow('w'))).toBe('#/workflows/w');
    expect(parseRoute('#/workflows?runs=all')).toMatchObject({ filters: { allRuns: true } });
    expect(formatRoute(routes.workflows({ allRuns: true }))).toBe('#/workflows?runs=all');
    expect(parseRoute('#/schedules')).toEqual({ screen: 'schedules', name: null });
    expect(parseRoute('#/schedules/tick%20tock')).toEqual({ screen: 'schedules', name: 'tick tock' });
    expect(formatRoute(routes.schedules('tick tock'))).toBe('#/schedules/tick%20tock');
    expect(formatRoute(routes.schedules())).toBe('#/schedules');
  });

  it('reads and writes the queues and one queue’s page', () => {
    expect(parseRoute('#/queues')).toEqual({ screen: 'queues', name: null });
    expect(parseRoute('#/queues/')).toEqual({ screen: 'queues', name: null });
    expect(parseRoute('#/queues/payments.eu')).toEqual({ screen: 'queues', name: 'payments.eu' });
    expect(parseRoute('#/queues/a%20b')).toEqual({ screen: 'queues', name: 'a b' });
    expect(formatRoute(routes.queues('a b'))).toBe('#/queues/a%20b');
    expect(formatRoute(routes.queues())).toBe('#/queues');
    expect(sectionOf(routes.queues('payments'))).toBe('queues');
  });

  it('reads and writes search attribute conditions, one where= each, in order, without repeats', () => {
    const route = parseRoute(
      '#/workflows?where=customer%3Dacme&where=amount%3E%3D100&where=customer%3Dacme&where=',
    );
    expect(route).toMatchObject({ filters: { where: ['customer=acme', 'amount>=100'] } });
    expect(formatRoute(route)).toBe('#/workflows?where=customer%3Dacme&where=amount%3E%3D100');
    expect(formatRoute(routes.workflows({ where: ['name="a, b"'] }))).toBe(
      '#/workflows?where=name%3D%22a%2C+b%22',
    );
  });

  it('reads and writes the text search, the time range and the tree view', () => {
    const route = parseRoute('#/workflows?q=ord&text=Payment%20declined&since=1h&view=tree');
    expect(route).toMatchObject({
      filters: { idPrefix: 'ord', text: 'Payment declined', since: '1h', nest: true },
    });
    expect(formatRoute(route)).toBe('#/workflows?q=ord&text=Payment+declined&since=1h&view=tree');
    expect(parseRoute('#/workflows?since=3y&view=flat')).toMatchObject({
      filters: { since: null, nest: false },
    });
  });

  it('falls back to the unfiltered list for an empty, unknown or malformed hash', () => {
    for (const hash of ['', '#', '#/nowhere', '#/workflows?sort=nonsense&dir=sideways', '#/%E0%A4%A'])
      expect(parseRoute(hash)).toEqual({ screen: 'workflows', filters: defaultFilters });
    expect(formatRoute(routes.workflows())).toBe('#/workflows');
  });

  it('leaves out the default direction of each sort', () => {
    expect(formatRoute(routes.workflows({ sort: 'id', direction: 'asc' }))).toBe('#/workflows?sort=id');
    expect(formatRoute(routes.workflows({ sort: 'updated', direction: 'desc' }))).toBe(
      '#/workflows?sort=updated',
    );
    expect(formatRoute(routes.workflows({ sort: 'updated', direction: 'asc' }))).toBe(
      '#/workflows?sort=updated&dir=asc',
    );
  });

  it('reads and writes the definition the definitions screen has open', () => {
    expect(parseRoute('#/definitions')).toEqual({
      screen: 'definitions',
      name: null,
      version: null,
      draft: null,
    });
    expect(parseRoute('#/definitions/my%20flow?v=3')).toEqual({
      screen: 'definitions',
      name: 'my flow',
      version: 3,
      draft: null,
    });
    expect(parseRoute('#/definitions/greeter?v=-1')).toMatchObject({ name: 'greeter', version: null });
    expect(parseRoute('#/definitions?draft=d1')).toMatchObject({ name: null, draft: 'd1' });
    expect(formatRoute(routes.definitions({ name: 'my flow', version: 3 }))).toBe(
      '#/definitions/my%20flow?v=3',
    );
    expect(formatRoute(routes.definitions({ draft: 'd1' }))).toBe('#/definitions?draft=d1');
    expect(formatRoute(routes.definitions())).toBe('#/definitions');
  });
});
