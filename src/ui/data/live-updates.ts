/**
 * Live data: turns what the worker pushes into cache updates. Store change notices and engine events mark
 * queries stale; the invalidations are collected and applied once per animation frame, so a burst of commits
 * costs one refetch per query, and a hidden tab (no frames) does no work until it is shown again. A query
 * that is still fetching is not interrupted: its invalidation waits for the next frame after the fetch, so a
 * steady stream of commits (1,000 running workflows) never starves a slow list of ever finishing; big lists
 * refresh at most once a second (`refreshIntervalOf`).
 *
 * The workflow lists and the claims list are not read again whole when a notice names the workflows that
 * changed (up to 200 per notice): only those rows are refreshed (`changedRowsOf`, list-rows.ts), at most
 * once a second, whatever the number of workflows in the database. A notice that says "many" (no ids) or
 * names a kind of data this studio does not know still refreshes them whole. An engine's session renewal
 * changes no row, only when that engine's claims expire: it refreshes the claims list only while the
 * Claims screen (which draws each claim's expiry) is shown; the side bar's count of claims does not change.
 * Status
 * pushes patch this tab's engine entry in place (or refetch it, if it has not loaded yet); events and warnings
 * that people must hear about (a workflow lost, another build) go to `engine-activity`.
 */
import { useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { ShuttleClient } from '../../public/browser';
import type { PushMessage } from '../../public/browser';
import { currentRoute } from '../routing/router';
import { useShuttleClient } from '../../public/react';
import { recordPush, resetEngineActivity } from './engine-activity';
import { thisEngineQuery } from './engine-queries';
import { refreshChangedRows } from './list-rows';
import { queryKeys } from '../../public/react';

/** What the studio shows right now, as far as deciding what a notice makes stale goes. */
export type ShownViews = {
  /** A view that draws each claim's expiry (the Claims screen) is shown. */
  claimExpiries: boolean;
  /**
   * The Schedules screen is shown: it follows the workflows its schedules started (which ones still run),
   * so workflow changes refresh it too. Elsewhere only schedule writes do.
   */
  schedules?: boolean;
  /** The Queues screen is shown: workflow changes (an admission, an end) refresh it too. */
  queues?: boolean;
};

/**
 * The rows of the workflow lists (and of the claims list, when `claims`) that a pushed message changed and
 * that can be refreshed one by one, or null when it changed none or did not say which (then `staleQueriesOf`
 * refreshes the lists whole).
 */
export function changedRowsOf(message: PushMessage): { workflowIds: string[]; claims: boolean } | null {
  if (message.kind !== 'store-changed' || message.workflowIds === null) return null;
  const areas = new Set(message.areas);
  if (areas.has('other') || !(areas.has('workflows') || areas.has('claims'))) return null;
  return { workflowIds: message.workflowIds, claims: areas.has('claims') };
}

/** The queries a pushed message makes stale (the rows `changedRowsOf` names are refreshed apart). */
export function staleQueriesOf(
  message: PushMessage,
  shown: ShownViews = { claimExpiries: true },
): QueryKey[] {
  switch (message.kind) {
    case 'store-changed': {
      const stale: QueryKey[] = [];
      const areas = new Set(message.areas);
      const perWorkflow = (key: (workflowId: string) => QueryKey, all: QueryKey) => {
        if (message.workflowIds === null) stale.push(all);
        else for (const workflowId of message.workflowIds) stale.push(key(workflowId));
      };
      const unnamed = message.workflowIds === null;
      if (areas.has('other') || ((areas.has('workflows') || areas.has('claims')) && unnamed))
        stale.push(queryKeys.workflowLists);
      if (areas.has('workflows') || areas.has('claims') || areas.has('messages') || areas.has('other'))
        perWorkflow(queryKeys.workflowDetail, queryKeys.workflows);
      // A finished id started again adds a run (and archives the one before).
      if (areas.has('workflows') && !unnamed && message.workflowIds)
        for (const workflowId of message.workflowIds) stale.push(queryKeys.workflowRuns(workflowId));
      if (areas.has('schedules') || areas.has('other') || (areas.has('workflows') && shown.schedules))
        stale.push(queryKeys.schedules);
      // A queue's slots, wait entries and rate tokens; an admission or an end also writes the workflow, which
      // the Queues screen lists (its slots' holders) — so workflow changes refresh it too while shown.
      if (areas.has('queues') || areas.has('other') || (areas.has('workflows') && shown.queues))
        stale.push(queryKeys.queues);
      if (areas.has('timelines') || areas.has('other'))
        perWorkflow(queryKeys.workflowTimeline, queryKeys.workflows);
      if (
        areas.has('other') ||
        (areas.has('claims') && unnamed) ||
        (areas.has('sessions') && shown.claimExpiries)
      )
        stale.push(queryKeys.claims);
      // A session renewal moves the expiry of every claim of its engine: the open workflow pages show it.
      if (areas.has('sessions')) stale.push(queryKeys.openWorkflows);
      if (areas.has('engines') || areas.has('other')) stale.push(queryKeys.engines);
      if (areas.has('definitions') || areas.has('other')) stale.push(queryKeys.definitions);
      if (areas.has('fence-rejections') || areas.has('other')) stale.push(queryKeys.fenceRejections);
      return stale;
    }
    case 'events': {
      const stale: QueryKey[] = [];
      const types = new Set(message.events.map((event) => event.type));
      if ([...types].some((type) => type.startsWith('claim.') || type.startsWith('workflow.')))
        stale.push(queryKeys.owned);
      if ([...types].some((type) => type.startsWith('result-waiter.'))) {
        stale.push(queryKeys.resultWaiters);
        stale.push(queryKeys.engines);
      }
      if (types.size > 0) stale.push(queryKeys.metrics);
      return stale;
    }
    default:
      return [];
  }
}

/**
 * The shortest time between two refreshes of a query, in ms. Workflow lists (up to 1,000 rows a page) refresh
 * at most once a second, claims twice a second — with a thousand workflows running, commits arrive every
 * frame, and a person cannot read a list that changes faster anyway; so do the ids of the workflows this
 * tab's engine holds (10,000 of them, sent whole, for a count in the top bar); everything else follows every
 * frame.
 */
export function refreshIntervalOf(queryKey: QueryKey): number {
  if (queryKey[0] === 'workflows' && queryKey[1] === 'list') return 1_000;
  if (queryKey[0] === 'claims' || queryKey[0] === 'engines') return 500;
  if (queryKey[0] === 'schedules') return 500;
  // The side bar reads every queue (up to 10,000 waiting counted each) in every tab: twice a second at most.
  if (queryKey[0] === 'queues') return 500;
  if (queryKey[0] === 'self' && queryKey[1] === 'owned') return 500;
  return 0;
}

/** Options of `connectLiveUpdates`. */
export type LiveUpdateOptions = {
  /** Schedules the flush. Default: `requestAnimationFrame`. */
  scheduleFrame?: (flush: () => void) => unknown;
  /** The current time, in ms. Default `performance.now`. */
  now?: () => number;
  /** What is on screen now. Default: from the current route (claim expiries on the Claims screen). */
  shownViews?: () => ShownViews;
};

function shownByRoute(): ShownViews {
  if (typeof location === 'undefined') return { claimExpiries: true, schedules: true, queues: true };
  const screen = currentRoute().screen;
  return {
    claimExpiries: screen === 'claims',
    schedules: screen === 'schedules',
    queues: screen === 'queues',
  };
}

/**
 * Applies the pushes of `client` to `queryClient` until the returned function is called.
 *
 * @example
 * useEffect(() => connectLiveUpdates(client, queryClient), [client, queryClient]);
 */
export function connectLiveUpdates(
  client: Pick<ShuttleClient, 'subscribe' | 'hello' | 'list'>,
  queryClient: QueryClient,
  options: LiveUpdateOptions = {},
): () => void {
  const scheduleFrame = options.scheduleFrame ?? ((flush: () => void) => requestAnimationFrame(flush));
  const now = options.now ?? (() => performance.now());
  const shownViews = options.shownViews ?? shownByRoute;
  const pending = new Map<string, QueryKey>();
  const lastRefreshAt = new Map<string, number>();
  // Rows named by notices, refreshed together at most once per list refresh interval, one batch at a time.
  const changedRows = new Set<string>();
  let changedClaims = false;
  let rowsInFlight = false;
  let rowsRefreshedAt = -Infinity;
  let scheduled = false;
  let stopped = false;
  const schedule = () => {
    if (scheduled || stopped) return;
    scheduled = true;
    scheduleFrame(flush);
  };
  const flushRows = (at: number) => {
    if (changedRows.size === 0 || rowsInFlight) return;
    const lists = queryKeys.workflowLists;
    if (at - rowsRefreshedAt < refreshIntervalOf(lists) || queryClient.isFetching({ queryKey: lists }) > 0)
      return;
    const workflowIds = [...changedRows];
    const claims = changedClaims;
    changedRows.clear();
    changedClaims = false;
    rowsInFlight = true;
    rowsRefreshedAt = at;
    void refreshChangedRows(client, queryClient, workflowIds, { lists: true, claims })
      .catch(() => undefined)
      .finally(() => {
        rowsInFlight = false;
        if (changedRows.size > 0) schedule();
      });
  };
  const flush = () => {
    scheduled = false;
    if (stopped) return;
    const keys = [...pending.entries()];
    pending.clear();
    const at = now();
    flushRows(at);
    for (const [id, queryKey] of keys) {
      const waitMs = refreshIntervalOf(queryKey) - (at - (lastRefreshAt.get(id) ?? -Infinity));
      if (waitMs > 0 || queryClient.isFetching({ queryKey }) > 0) pending.set(id, queryKey);
      else {
        lastRefreshAt.set(id, at);
        void queryClient.invalidateQueries({ queryKey }, { cancelRefetch: false });
      }
    }
    if ((pending.size > 0 || (changedRows.size > 0 && !rowsInFlight)) && !scheduled) {
      scheduled = true;
      scheduleFrame(flush);
    }
  };
  const self = thisEngineQuery(client).queryKey;
  const unsubscribe = client.subscribe((message) => {
    recordPush(message);
    if (message.kind === 'status') {
      const current = queryClient.getQueryData(self);
      // Before the first hello has answered there is nothing to patch: ask again instead.
      if (current) queryClient.setQueryData(self, { ...current, status: message.status });
      else pending.set(JSON.stringify(self), self);
      // A restarted engine has a new id and label: ask again once it runs.
      if (message.status.state === 'running' || message.status.state === 'starting')
        pending.set(JSON.stringify(self), self);
    }
    for (const queryKey of staleQueriesOf(message, shownViews()))
      pending.set(JSON.stringify(queryKey), queryKey);
    const rows = changedRowsOf(message);
    if (rows) {
      for (const workflowId of rows.workflowIds) changedRows.add(workflowId);
      changedClaims ||= rows.claims;
    }
    if (pending.size > 0 || changedRows.size > 0) schedule();
  });
  return () => {
    stopped = true;
    unsubscribe();
  };
}

/**
 * Keeps the query cache live while the calling component is mounted (the app mounts it once). When this
 * tab's engine is replaced (a restart), everything about "this tab's engine" is swapped for the new one's
 * and every query is refetched from it.
 */
export function useLiveUpdates(): void {
  const client = useShuttleClient();
  const queryClient = useQueryClient();
  useEffect(() => connectLiveUpdates(client, queryClient), [client, queryClient]);
  useEffect(
    () =>
      client.onEngineChange((hello) => {
        resetEngineActivity();
        queryClient.setQueryData(thisEngineQuery(client).queryKey, hello);
        void queryClient.invalidateQueries();
      }),
    [client, queryClient],
  );
}
