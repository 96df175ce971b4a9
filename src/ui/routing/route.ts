/**
 * The studio's routes and their URLs. Routing lives in the URL hash (`#/workflows?status=running`), so the
 * query string stays the worker's (`?db=…&engine=off`) and a link opened in a new tab lands on the same
 * screen with the same filters — and starts its own engine on the same database.
 *
 * `parseRoute` accepts anything (a mistyped or stale hash falls back to the workflows list, never throws);
 * `formatRoute(parseRoute(x))` is canonical: empty filters and default sort are left out.
 */
import { isWorkflowStatus } from '../../public/browser';
import type { WorkflowStatus } from '../../public';

export type WorkflowSortKey = 'created' | 'updated' | 'id' | 'type' | 'status' | 'epoch' | 'owner';
export type SortDirection = 'asc' | 'desc';

/** How recently a listed workflow started (`since=1h`): the list's time range. */
export type TimeRange = '15m' | '1h' | '24h' | '7d';
export const timeRanges: readonly TimeRange[] = ['15m', '1h', '24h', '7d'];

/** Filters of the workflows list, as they appear in the URL. */
export type WorkflowFilters = {
  status: WorkflowStatus[];
  /** A definition name. */
  type: string | null;
  /** An engine id, or `none` for workflows nobody owns right now. */
  owner: string | null;
  /** Workflow id prefix. */
  idPrefix: string;
  /** Text anywhere in the id, type, what it waits on or its error (case-insensitive); empty for none. */
  text: string;
  /** Only workflows started within this range of now. */
  since: TimeRange | null;
  /** Children listed under their parents, indented. */
  nest: boolean;
  sort: WorkflowSortKey;
  direction: SortDirection;
  /** List the earlier runs of workflows started again too (run history), not only each id's latest run. */
  allRuns: boolean;
  /** Search attribute conditions (`customer=acme`, `amount>=100`), all of which must hold: the chips. */
  where: string[];
};

/**
 * What the definitions screen has open: a definition by name (a built-in, or a saved one at `version`, the
 * latest when null), an unsaved draft of this tab by id, or nothing.
 */
export type DefinitionSelection = { name: string | null; version: number | null; draft: string | null };

export type Route =
  | { screen: 'workflows'; filters: WorkflowFilters }
  | ({ screen: 'definitions' } & DefinitionSelection)
  /** A workflow's page: its latest run, or `run` (an earlier run kept by run history). */
  | { screen: 'workflow'; workflowId: string; run?: number }
  /** The schedules, with `name` (one schedule, opened) when a link pointed at it. */
  | { screen: 'schedules'; name: string | null }
  /** The workflow queues, or one queue's page (`name`). */
  | { screen: 'queues'; name: string | null }
  | { screen: 'engines' }
  /** Open operations of the running workflows (activities, timers, signals, conditions, children). */
  | { screen: 'pending' }
  | { screen: 'claims' }
  | { screen: 'waiters' }
  | { screen: 'chaos' };

export type ScreenName = Route['screen'];

export const defaultFilters: WorkflowFilters = Object.freeze({
  status: [],
  type: null,
  owner: null,
  idPrefix: '',
  text: '',
  since: null,
  nest: false,
  sort: 'created',
  direction: 'desc',
  allRuns: false,
  where: [],
}) as WorkflowFilters;

const sortKeys: readonly WorkflowSortKey[] = ['created', 'updated', 'id', 'type', 'status', 'epoch', 'owner'];

function parseFilters(query: URLSearchParams): WorkflowFilters {
  const status = (query.get('status') ?? '')
    .split(',')
    .filter((value): value is WorkflowStatus => isWorkflowStatus(value));
  const sort = query.get('sort');
  const direction = query.get('dir');
  return {
    status: [...new Set(status)],
    type: query.get('type') || null,
    owner: query.get('owner') || null,
    idPrefix: query.get('q') ?? '',
    text: query.get('text') ?? '',
    since: timeRanges.includes(query.get('since') as TimeRange) ? (query.get('since') as TimeRange) : null,
    nest: query.get('view') === 'tree',
    sort: sortKeys.includes(sort as WorkflowSortKey) ? (sort as WorkflowSortKey) : defaultFilters.sort,
    direction: direction === 'asc' || direction === 'desc' ? direction : defaultSortDirection(sort),
    allRuns: query.get('runs') === 'all',
    where: [...new Set(query.getAll('where').filter((condition) => condition.trim() !== ''))],
  };
}

/** Times sort newest first by default; names and ids A→Z. */
export function defaultSortDirection(sort: string | null): SortDirection {
  return sort === 'id' || sort === 'type' || sort === 'status' || sort === 'owner' ? 'asc' : 'desc';
}

/** The route a location hash names (`#/workflows/abc`); the workflows list for anything unknown. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [pathPart = '', queryPart = ''] = splitOnce(raw, '?');
  const segments = pathPart
    .split('/')
    .filter((segment) => segment.length > 0)
    .map(safeDecode);
  const query = new URLSearchParams(queryPart);
  const [first, second] = segments;
  switch (first) {
    case 'workflows': {
      if (second !== undefined && second.length > 0) {
        const run = Number(query.get('run'));
        return Number.isSafeInteger(run) && run > 0
          ? { screen: 'workflow', workflowId: second, run }
          : { screen: 'workflow', workflowId: second };
      }
      return { screen: 'workflows', filters: parseFilters(query) };
    }
    case 'schedules':
      return { screen: 'schedules', name: second !== undefined && second.length > 0 ? second : null };
    case 'queues':
      return { screen: 'queues', name: second !== undefined && second.length > 0 ? second : null };
    case 'definitions': {
      const version = Number(query.get('v'));
      return {
        screen: 'definitions',
        name: second !== undefined && second.length > 0 ? second : null,
        version: second && Number.isSafeInteger(version) && version > 0 ? version : null,
        draft: second ? null : query.get('draft') || null,
      };
    }
    case 'engines':
    case 'pending':
    case 'claims':
    case 'waiters':
    case 'chaos':
      return { screen: first };
    default:
      return { screen: 'workflows', filters: parseFilters(query) };
  }
}

/** The hash of a route, starting with `#/`. */
export function formatRoute(route: Route): string {
  switch (route.screen) {
    case 'workflows': {
      const { filters } = route;
      const query = new URLSearchParams();
      if (filters.status.length > 0) query.set('status', filters.status.join(','));
      if (filters.type) query.set('type', filters.type);
      if (filters.owner) query.set('owner', filters.owner);
      if (filters.idPrefix) query.set('q', filters.idPrefix);
      if (filters.text) query.set('text', filters.text);
      if (filters.since) query.set('since', filters.since);
      if (filters.nest) query.set('view', 'tree');
      if (filters.sort !== defaultFilters.sort) query.set('sort', filters.sort);
      if (filters.direction !== defaultSortDirection(filters.sort)) query.set('dir', filters.direction);
      if (filters.allRuns) query.set('runs', 'all');
      for (const condition of filters.where ?? []) query.append('where', condition);
      const text = query.toString();
      return `#/workflows${text ? `?${text}` : ''}`;
    }
    case 'workflow':
      return `#/workflows/${encodeURIComponent(route.workflowId)}${route.run !== undefined ? `?run=${route.run}` : ''}`;
    case 'schedules':
      return route.name !== null ? `#/schedules/${encodeURIComponent(route.name)}` : '#/schedules';
    case 'queues':
      return route.name !== null ? `#/queues/${encodeURIComponent(route.name)}` : '#/queues';
    case 'definitions':
      if (route.name !== null)
        return `#/definitions/${encodeURIComponent(route.name)}${route.version !== null ? `?v=${route.version}` : ''}`;
      return route.draft !== null
        ? `#/definitions?draft=${encodeURIComponent(route.draft)}`
        : '#/definitions';
    default:
      return `#/${route.screen}`;
  }
}

/** Shorthands for links. */
export const routes = {
  workflows: (filters: Partial<WorkflowFilters> = {}): Route => ({
    screen: 'workflows',
    filters: { ...defaultFilters, ...filters },
  }),
  /** A workflow's page: its latest run, or `run` when given. */
  workflow: (workflowId: string, run?: number): Route =>
    run === undefined ? { screen: 'workflow', workflowId } : { screen: 'workflow', workflowId, run },
  schedules: (name: string | null = null): Route => ({ screen: 'schedules', name }),
  queues: (name: string | null = null): Route => ({ screen: 'queues', name }),
  engines: (): Route => ({ screen: 'engines' }),
  pending: (): Route => ({ screen: 'pending' }),
  claims: (): Route => ({ screen: 'claims' }),
  waiters: (): Route => ({ screen: 'waiters' }),
  chaos: (): Route => ({ screen: 'chaos' }),
  definitions: (selection: Partial<DefinitionSelection> = {}): Route => ({
    screen: 'definitions',
    name: selection.name ?? null,
    version: selection.name ? (selection.version ?? null) : null,
    draft: selection.name ? null : (selection.draft ?? null),
  }),
};

/** Which navigation item a route belongs to (the detail screen belongs to Workflows). */
export function sectionOf(route: Route): Exclude<ScreenName, 'workflow'> {
  return route.screen === 'workflow' ? 'workflows' : route.screen;
}

function splitOnce(text: string, separator: string): [string, string] {
  const index = text.indexOf(separator);
  return index < 0 ? [text, ''] : [text.slice(0, index), text.slice(index + 1)];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
