/**
 * How the studio words activity concurrency limits (the Queues screen's "Activity limits" section): a group's
 * limits in one line, its running count against its limit, and an attempt holding a slot. Pure, so each
 * wording is tested once (activity-limit-view.test.ts).
 *
 * A group this tab's engine does not declare (`declared: false`) was seen only in the store, as slots other
 * engines hold now: activity limits are declared in code and not stored, so its limits are unknown here.
 */
import type { ActivityLimitView } from '../../public/browser';

/** "5 at once · 2 per engine"; "declared on other engines" for a group seen only as held slots. */
export function activityLimitText(group: ActivityLimitView): string {
  if (!group.declared) return 'declared on other engines';
  const parts = [
    ...(group.concurrency === null ? [] : [`${group.concurrency} at once`]),
    ...(group.perEngine === null ? [] : [`${group.perEngine} per engine`]),
  ];
  return parts.join(' · ') || 'no limits';
}

/**
 * "1 / 5" against the fleet-wide limit; "2" when there is none known here (a group with only `perEngine`
 * counts this engine's attempts; one not declared here, the fleet's held slots).
 */
export function activityRunningText(group: ActivityLimitView): string {
  return group.declared && group.concurrency !== null
    ? `${group.running.length} / ${group.concurrency}`
    : String(group.running.length);
}

/** Every slot of the fleet-wide limit is held: the next attempt waits for one. */
export function activityGroupFull(group: ActivityLimitView): boolean {
  return group.declared && group.concurrency !== null && group.running.length >= group.concurrency;
}

/**
 * The activity an attempt runs, as its workflow's history numbers it: "step 3, attempt 2" (a member of an
 * `all`/`race`: "step 3.1"); the first attempt is not counted.
 */
export function activityHolderText(holder: ActivityLimitView['running'][number]): string {
  const step = holder.member === 0 ? `step ${holder.position}` : `step ${holder.position}.${holder.member}`;
  return holder.attempt > 1 ? `${step}, attempt ${holder.attempt}` : step;
}

/** The holders, oldest first (the order they took their slots). */
export function activityHolders(group: ActivityLimitView): ActivityLimitView['running'] {
  return [...group.running].sort((a, b) => a.since - b.since);
}

/** "2 activity limits · 3 running · 1 waiting here" — the section's line. */
export function activityLimitsSummary(groups: readonly ActivityLimitView[]): string {
  const running = groups.reduce((sum, group) => sum + group.running.length, 0);
  const waiting = groups.reduce((sum, group) => sum + group.waitingHere, 0);
  return [
    `${groups.length} ${groups.length === 1 ? 'group' : 'groups'}`,
    `${running} running`,
    ...(waiting > 0 ? [`${waiting} waiting here`] : []),
  ].join(' · ');
}
