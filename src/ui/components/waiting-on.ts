/**
 * What a workflow waits on, in words: the engine's summary of its open operation (`sleep`, `signal 'ok'`,
 * `activity 'charge' (attempt 2)`, `all of 2 (until, signal 'ok')`) with the kinds people cannot read as
 * they are spelled out — `until` is a `ctx.waitUntil` condition. Used by the list and the workflow's page.
 */

const untilCommand = /(^|[(,]\s*)until(?: '((?:[^'\\]|\\.)*)')?(?=$|[\s,)])/g;

/** The engine's `waitingOn` / `pending.summary`, readable. */
export function waitingOnText(summary: string): string {
  return summary.replace(untilCommand, (_match, lead: string, name: string | undefined) =>
    name !== undefined && name !== '' && name !== 'until'
      ? `${lead}waitUntil condition '${name}'`
      : `${lead}waitUntil condition`,
  );
}
