import { describe, expect, it } from 'vitest';
import { defaultFilters, formatRoute, parseRoute, routes } from './route';

describe('routes', () => {
  it('reads screens, a workflow id and list filters from the hash, and writes them back canonically', () => {
    expect(parseRoute('#/engines')).toEqual({ screen: 'engines' });
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
        sort: 'epoch',
        direction: 'asc',
      },
    });
    expect(formatRoute(route)).toBe(
      '#/workflows?status=running%2Cfailed&type=order&owner=e1&q=ord&sort=epoch&dir=asc',
    );
    expect(formatRoute(routes.workflow('order/7 a'))).toBe('#/workflows/order%2F7%20a');
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
