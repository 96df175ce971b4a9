/**
 * Every TanStack Query key of Shuttle's React bindings and of the studio, built here so that live updates (src/react/live.ts, src/ui/data/live-updates.ts) and the hooks
 * agree on them. Keys are hierarchical: invalidating a prefix refetches everything under it.
 */
import type { ListFilter, OutcomeOf } from '../engine';

export const queryKeys = {
  /** This tab's engine: identity and status (`hello`). */
  self: ['self'] as const,
  /** Workflows this tab's engine owns. */
  owned: ['self', 'owned'] as const,
  metrics: ['self', 'metrics'] as const,
  resultWaiters: ['self', 'result-waiters'] as const,
  /** Every engine of the database (presence records). */
  engines: ['engines'] as const,
  definitions: ['definitions'] as const,
  /** The worker's report on one definition source (compile-as-you-type). */
  compile: (source: string) => ['compile', source] as const,
  claims: ['claims'] as const,
  fenceRejections: ['fence-rejections'] as const,
  fenceRejectionsOf: (workflowId: string) => ['fence-rejections', workflowId] as const,
  workflows: ['workflows'] as const,
  workflowLists: ['workflows', 'list'] as const,
  workflowList: (filter: ListFilter) => ['workflows', 'list', filter] as const,
  workflowSearch: (idPrefix: string) => ['workflows', 'search', idPrefix] as const,
  /** Every query about one workflow (its page: description, timeline). */
  openWorkflows: ['workflows', 'one'] as const,
  workflow: (workflowId: string) => ['workflows', 'one', workflowId] as const,
  /**
   * A workflow's description: of its latest run, or of `run` (a key under the latest run's, so whatever
   * refreshes the workflow refreshes the run shown too).
   */
  workflowDetail: (workflowId: string, run?: number) =>
    run === undefined
      ? (['workflows', 'one', workflowId, 'describe'] as const)
      : (['workflows', 'one', workflowId, 'describe', run] as const),
  /** A workflow's timeline: of its latest run, or of `run`. */
  workflowTimeline: (workflowId: string, run?: number) =>
    run === undefined
      ? (['workflows', 'one', workflowId, 'timeline'] as const)
      : (['workflows', 'one', workflowId, 'timeline', run] as const),
  /**
   * What a run's history recorded for one operation (`operationOutcome`): the operation at `pos` / `member`,
   * or the update `updateId`. Under its workflow's key, so a change of the workflow asks again while nothing
   * is recorded yet.
   */
  operationOutcome: (workflowId: string, run: number, of: OutcomeOf) =>
    'updateId' in of
      ? (['workflows', 'one', workflowId, 'outcome', run, 'update', of.updateId] as const)
      : (['workflows', 'one', workflowId, 'outcome', run, 'at', of.pos, of.member ?? 0] as const),
  /** A workflow's ancestors (the family tree), read up from its parent `parentId`. */
  workflowAncestors: (workflowId: string, parentId: string | undefined) =>
    ['workflows', 'one', workflowId, 'ancestors', parentId ?? null] as const,
  /** Every stored run of a workflow id (run history), latest first. */
  workflowRuns: (workflowId: string) => ['workflows', 'one', workflowId, 'runs'] as const,
  /**
   * How many finished workflows a purge by filter would delete now (a dry run; under `workflows`, so any
   * workflow change refreshes it).
   */
  purgePreview: (filter: ListFilter) => ['workflows', 'purge-preview', filter] as const,
  /** How much room the store takes (`storageUsage`). */
  storage: ['storage'] as const,
  /** Every schedule of the store. */
  schedules: ['schedules'] as const,
  /** Every workflow queue of the store, and (under it) each queue's page. */
  queues: ['queues'] as const,
  queue: (name: string) => ['queues', 'one', name] as const,
  /**
   * Where a workflow stands in its queue (`queuePosition`). Under `queues`, not under the workflow: it moves
   * when others are admitted, which the queue's keys report, not the workflow's.
   */
  queuePosition: (workflowId: string) => ['queues', 'position', workflowId] as const,
  /** The next fire times of a cron in a time zone, or why it is refused (the New schedule form). */
  schedulePreview: (cron: string, timezone: string) => ['schedule-preview', cron, timezone] as const,
};
