/**
 * The duplicate-commit audit of a studio database: every workflow in it (children included, as `list`
 * returns them), each timeline checked with `countDuplicateCommits`. A completed countdown must also have
 * exactly `from` committed ticks.
 */
import { countDuplicateCommits } from '../timeline-audit';
import type { StudioTab } from './tab';

/** The audit of one database. */
export type DatabaseAudit = {
  databaseName: string;
  workflows: number;
  duplicateCommits: number;
  findings: string[];
};

function countdownFrom(input: unknown): number | null {
  const from = (input as { from?: unknown } | null | undefined)?.from;
  return typeof from === 'number' && Number.isInteger(from) ? from : null;
}

/** Audits every workflow of the database `tab` is open on. */
export async function auditDatabase(tab: StudioTab, databaseName: string): Promise<DatabaseAudit> {
  const audit: DatabaseAudit = { databaseName, workflows: 0, duplicateCommits: 0, findings: [] };
  let cursor: string | undefined;
  do {
    const page = await tab.list(cursor);
    for (const summary of page.items) {
      const timeline = await tab.timeline(summary.workflowId);
      let expected: { kind: 'timer-fired'; count: number } | undefined;
      if (summary.workflowType === 'countdown' && summary.status === 'completed') {
        const from = countdownFrom((await tab.describe(summary.workflowId)).input);
        if (from !== null) expected = { kind: 'timer-fired', count: from };
      }
      const result = countDuplicateCommits(timeline, expected);
      audit.workflows++;
      audit.duplicateCommits += result.duplicates;
      for (const finding of result.findings) audit.findings.push(`${summary.workflowId}: ${finding}`);
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return audit;
}
