/**
 * How long the Workflows list says "Started <type> <id>" after a start from this tab: long enough to notice
 * and follow the link, not for the rest of the session (it is a confirmation, not a record; the list itself
 * shows the workflow).
 */
import type { StartedNotice } from '../../state/view-store';

/** The confirmation shows for 30 s after the start. */
export const startedNoticeMs = 30_000;

/** Whether the confirmation of `notice` still shows at `now`. */
export function showsStartedNotice(notice: StartedNotice | null, now: number): notice is StartedNotice {
  return notice !== null && now - notice.at < startedNoticeMs;
}
