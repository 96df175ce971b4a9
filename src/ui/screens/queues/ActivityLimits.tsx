/**
 * The Queues screen's "Activity limits" section: each activity group (`createEngine({ activityLimits })`) —
 * its limits, the attempts holding its slots across the fleet (which workflow, which step, on which engine,
 * since when) and how many wait on this tab's engine.
 *
 * Activity limits are declared in code and not stored; the section shows what the protocol's `activityLimits`
 * answers: the groups this tab's engine declares, then every other group with a slot held in the store now
 * (its limits unknown here). Live: slot keys (`act-slot:`) are area `engines` of the store-change notices,
 * which refresh every query under `['engines']` (live-updates.ts) — this one is `['engines',
 * 'activity-limits']`.
 */
import { useQuery } from '@tanstack/react-query';
import type { ActivityLimitView } from '../../../public/browser';
import { useShuttleClient } from '../../../public/react';
import {
  activityGroupFull,
  activityHolders,
  activityHolderText,
  activityLimitsSummary,
  activityLimitText,
  activityRunningText,
} from '../../components/activity-limit-view';
import { EngineTag } from '../../components/EngineTag';
import { RelativeTime } from '../../components/RelativeTime';
import { formatAbsolute } from '../../components/time-format';
import { useEngineDirectory } from '../../data/engine-queries';
import { Link } from '../../routing/Link';
import { routes } from '../../routing/route';
import styles from './QueuesScreen.module.css';

/** Under `['engines']`, so the `engines` area of a store-change notice (a slot taken or freed) refreshes it. */
const activityLimitsKey = ['engines', 'activity-limits'] as const;

export function ActivityLimits() {
  const client = useShuttleClient();
  const query = useQuery<ActivityLimitView[]>({
    queryKey: activityLimitsKey,
    queryFn: () => client.api.activityLimits({}),
  });
  const engines = useEngineDirectory();
  const groups = query.data;
  return (
    <section className={styles.card} aria-labelledby="activity-limits-title" data-testid="activity-limits">
      <h2 className={styles.panelTitle} id="activity-limits-title">
        Activity limits{' '}
        <span className={styles.muted} data-testid="activity-limits.summary">
          {groups && groups.length > 0
            ? activityLimitsSummary(groups)
            : 'how many attempts of an activity run at once'}
        </span>
      </h2>
      {query.isError && !groups ? (
        <p className={styles.panelNote} role="status" data-testid="activity-limits.error">
          Could not read the activity limits: {query.error.message}
        </p>
      ) : !groups ? (
        <p className={styles.panelNote}>Loading…</p>
      ) : groups.length === 0 ? (
        <p className={styles.panelNote} data-testid="activity-limits.empty">
          No activity limit is declared on this engine, and no engine holds an activity slot now. Declare them
          on every engine, e.g.{' '}
          <code>{`createEngine({ activityLimits: { 'charge-card': { concurrency: 5, perEngine: 2 } } })`}</code>
          : at most 5 attempts of <code>charge-card</code> at once across the fleet, 2 per engine.
        </p>
      ) : (
        <table className={styles.table} aria-label="Activity limits" data-testid="activity-limits.table">
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Limits</th>
              <th scope="col" className={styles.number}>
                Running
              </th>
              <th scope="col">Held by</th>
              <th scope="col" className={styles.number}>
                Waiting here
              </th>
            </tr>
          </thead>
          <tbody>
            {groups.map((group) => (
              <tr
                key={group.name}
                data-testid="activity-limits.row"
                data-name={group.name}
                data-declared={group.declared}
              >
                <td className={styles.mono}>{group.name}</td>
                <td
                  className={group.declared ? styles.limits : `${styles.limits} ${styles.muted}`}
                  title={
                    group.declared
                      ? undefined
                      : 'Activity limits are declared in code on the engines that run the activity, not stored: this engine sees the slots they hold now'
                  }
                >
                  {activityLimitText(group)}
                </td>
                <td className={styles.number}>
                  <span
                    className={`${styles.running} ${activityGroupFull(group) ? styles.full : ''}`}
                    data-testid="activity-limits.running"
                    data-running={group.running.length}
                    title={
                      activityGroupFull(group)
                        ? 'Every slot is held: the next attempt waits for one'
                        : undefined
                    }
                  >
                    {activityRunningText(group)}
                  </span>
                </td>
                <td>
                  {group.running.length === 0 ? (
                    <span className={styles.muted}>—</span>
                  ) : (
                    activityHolders(group).map((holder) => (
                      <div
                        key={`${holder.engineId}:${holder.workflowId}:${holder.position}:${holder.member}`}
                        data-testid="activity-limits.holder"
                        data-workflow-id={holder.workflowId}
                        data-engine-id={holder.engineId}
                      >
                        <Link to={routes.workflow(holder.workflowId)} className={styles.id}>
                          {holder.workflowId}
                        </Link>{' '}
                        <span className={styles.muted}>{activityHolderText(holder)} on</span>{' '}
                        <EngineTag engineId={holder.engineId} engine={engines.get(holder.engineId)} />{' '}
                        <span className={styles.muted} title={formatAbsolute(holder.since)}>
                          <RelativeTime at={holder.since} />
                        </span>
                      </div>
                    ))
                  )}
                </td>
                <td className={styles.number} data-testid="activity-limits.waiting">
                  {group.declared ? group.waitingHere : <span className={styles.muted}>—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
