/**
 * Handoff latency in the studio: how long a workflow is without a working owner when its owner's tab goes
 * away, from the owner's exit to the new owner's first committed step.
 *
 * One database per kind. A survivor tab stays open throughout; each run opens a new owner tab, starts a
 * countdown there (20 ms ticks, so the workflow always has a step due), waits until the owner has committed
 * a few ticks, then takes `exitAt = Date.now()` in this process and makes the owner exit:
 *
 * - `graceful`: the tab is closed as a person closes it (unload handlers run; the studio shuts the engine
 *   down on `pagehide`, releasing its claims);
 * - `crash`: the tab's renderer process is crashed through DevTools (`Page.crash`, as `chrome://crash`);
 * - `freeze`: the engine is frozen through the chaos control channel (`shuttle.chaos.freeze`) for longer
 *   than the claim TTL and its grace; skipped, and reported as not measured, where the studio lacks it;
 * - `lifecycleFreeze`: the tab is frozen as the browser freezes a background tab, through DevTools
 *   (`Page.setWebLifecycleState` `frozen`); the studio hands its workflows over on `freeze`. Headless Chromium
 *   does not fire `freeze` for that call, so the event is then dispatched on the page's document right after
 *   it (`StudioTab.lifecycleFreeze`); `exitAt` is taken before the DevTools call, so the figure includes that
 *   call and the round trip that dispatches it. The tab is resumed (and rejoins with a new engine) once the
 *   handoff is measured;
 * - `shutdown` (details only): the engine is shut down through the console API (`shuttle.shutdown()`), the
 *   release the studio attempts on `pagehide`, here allowed to finish: the engine's own handoff path.
 *
 * The latency is the `at` of the first timeline entry the survivor wrote after its claim entry, minus
 * `exitAt` (both `Date.now()` on this machine's one clock; for a freeze, `exitAt` is the moment the stall
 * began as the studio reports it, since it waits for a quiet moment after a renewal before freezing). Graceful and crash runs then let the survivor
 * finish the countdown, so the duplicate audit can also count its ticks; freeze runs terminate it once the
 * handoff is measured.
 */
import type { BrowserContext } from '@playwright/test';
import { findTakeover } from '../timeline-audit';
import { summarize, type SampleSummary } from '../stats';
import { auditDatabase, type DatabaseAudit } from './audit';
import { pollUntil, StudioTab } from './tab';

export type HandoffKind = 'graceful' | 'crash' | 'freeze' | 'lifecycleFreeze' | 'shutdown';

/** What one handoff run saw. */
export type HandoffRun = {
  run: number;
  workflowId: string;
  ownerEngineId: string;
  exitAt: number;
  /** Ticks the owner committed before it exited. */
  ticksBeforeExit: number;
  newOwnerEngineId: string | null;
  /** `claim-acquired` when the owner released the claim, `claim-taken-over` when it expired or died. */
  claimKind: string | null;
  /** Whether the exiting owner wrote `claim-released` (a graceful shutdown that completed). */
  ownerReleased: boolean;
  claimLatencyMs: number | null;
  firstStepKind: string | null;
  /** Exit to the new owner's first committed step: the figure. */
  latencyMs: number | null;
  completed: boolean;
  /** Why the run measured nothing. */
  error?: string;
  /** What went wrong after the handoff was measured (finishing or terminating the countdown). */
  afterwards?: string;
  /** `lifecycleFreeze`: whether the browser fired `freeze` itself or the bench dispatched it. */
  freezeFiredBy?: 'browser' | 'dispatched';
  /** `lifecycleFreeze`: the same latency from the page's own `freeze` event (no DevTools round trips). */
  latencyFromFreezeEventMs?: number | null;
  /** `lifecycleFreeze`: whether the resumed tab's engine ran again, with a new engine id. */
  resumedWithNewEngine?: boolean;
};

export type HandoffFigure = {
  kind: HandoffKind;
  databaseName: string;
  /** Why the kind was not measured at all, if it was not. */
  skipped?: string;
  runs: HandoffRun[];
  latencyMs: SampleSummary;
  claimLatencyMs: SampleSummary;
  audit: DatabaseAudit | null;
};

export type HandoffOptions = {
  runs: number;
  /** Countdown length for graceful and crash runs (the survivor finishes it). */
  countdownFrom: number;
  tickMs: number;
  /** How long the owner stays frozen, in s: longer than TTL + grace + a renew interval. */
  freezeSeconds: number;
  log: (message: string) => void;
};

function remainingOf(state: Record<string, unknown>): number | null {
  return typeof state.remaining === 'number' ? state.remaining : null;
}

/**
 * Makes the owner exit; resolves with the exit moment. For a freeze that is when the stall began, as the
 * studio reports it (it waits for a quiet moment after the request), else when the freeze was requested.
 */
async function exit(owner: StudioTab, kind: HandoffKind, freezeSeconds: number): Promise<number> {
  if (kind === 'crash') await owner.prepareCrash();
  if (kind === 'lifecycleFreeze') await owner.prepareLifecycleFreeze();
  const exitAt = Date.now();
  if (kind === 'graceful') await owner.close();
  else if (kind === 'crash') await owner.crash();
  else if (kind === 'freeze') return (await owner.freeze(freezeSeconds)) ?? exitAt;
  else if (kind === 'lifecycleFreeze') await owner.lifecycleFreeze();
  else await owner.shutdownEngine();
  return exitAt;
}

async function measureRun(
  context: BrowserContext,
  baseUrl: string,
  databaseName: string,
  survivor: StudioTab,
  kind: HandoffKind,
  run: number,
  options: HandoffOptions,
): Promise<HandoffRun> {
  const owner = await StudioTab.open(context, baseUrl, databaseName);
  const from = kind === 'freeze' ? 5_000 : options.countdownFrom;
  const workflowId = `handoff-${kind}-${run}`;
  const record: HandoffRun = {
    run,
    workflowId,
    ownerEngineId: owner.engineId,
    exitAt: 0,
    ticksBeforeExit: 0,
    newOwnerEngineId: null,
    claimKind: null,
    ownerReleased: false,
    claimLatencyMs: null,
    firstStepKind: null,
    latencyMs: null,
    completed: false,
  };
  try {
    await owner.start('countdown', { from, tickMs: options.tickMs }, { id: workflowId });
    const before = await pollUntil(
      'the owner to commit a few ticks',
      async () => {
        const description = await owner.describe(workflowId);
        const remaining = remainingOf(description.state);
        return remaining !== null && remaining <= from - 3 ? description : undefined;
      },
      { intervalMs: 20, timeoutMs: 20_000 },
    );
    if (before.owner?.engineId !== owner.engineId)
      throw new Error(
        `the countdown is owned by ${before.owner?.engineId ?? 'nobody'}, not the tab that started it`,
      );
    record.ticksBeforeExit = from - (remainingOf(before.state) ?? from);
    record.exitAt = await exit(owner, kind, options.freezeSeconds);

    const takeover = await pollUntil(
      'the survivor to commit a step',
      async () => {
        const found = findTakeover(await survivor.timeline(workflowId), owner.engineId);
        return found?.firstStep ? found : undefined;
      },
      // A freeze that works hands over after TTL + grace, well inside the freeze; one that does not never will.
      {
        intervalMs: kind === 'freeze' ? 250 : 50,
        timeoutMs: kind === 'freeze' ? options.freezeSeconds * 1_000 + 10_000 : 20_000,
      },
    ).catch(async (error: unknown) => {
      const description = await survivor.describe(workflowId).catch(() => null);
      const holder =
        description?.owner?.engineId === owner.engineId
          ? 'the exited tab'
          : (description?.owner?.engineId ?? 'nobody');
      throw new Error(
        `${error instanceof Error ? error.message : String(error)} The workflow is ${description?.status ?? 'unknown'}, held by ${holder} at epoch ${description?.epoch ?? '?'}.`,
      );
    });
    record.newOwnerEngineId = takeover.engineId;
    record.claimKind = takeover.claim.kind;
    record.claimLatencyMs = takeover.claim.at - record.exitAt;
    record.firstStepKind = takeover.firstStep!.kind;
    record.latencyMs = takeover.firstStep!.at - record.exitAt;
    const timeline = await survivor.timeline(workflowId);
    record.ownerReleased = timeline.some(
      (entry) => entry.kind === 'claim-released' && entry.engineId === owner.engineId,
    );
    if (takeover.engineId !== survivor.engineId)
      throw new Error(`the workflow went to ${takeover.engineId}, not the survivor tab`);
    if (kind === 'lifecycleFreeze') {
      // The page's own event time (a page the browser really froze answers only after the resume).
      record.freezeFiredBy = await owner.lifecycleResume();
      const frozeAt = await owner.lifecycleFrozeAt();
      record.latencyFromFreezeEventMs = frozeAt === null ? null : takeover.firstStep!.at - frozeAt;
      record.resumedWithNewEngine = await pollUntil(
        'the resumed tab to run a new engine',
        async () => {
          const hello = await owner.page.evaluate(() => window.shuttle!.hello()).catch(() => null);
          return hello?.status.state === 'running' && hello.engineId !== owner.engineId ? true : undefined;
        },
        { intervalMs: 100, timeoutMs: 20_000 },
      ).catch(() => false);
    }
  } catch (error) {
    record.error = error instanceof Error ? error.message : String(error);
  }
  try {
    if (record.error) return record;
    if (kind === 'freeze') await survivor.terminate(workflowId, 'freeze handoff measured');
    else {
      await pollUntil(
        'the survivor to finish the countdown',
        async () => ((await survivor.describe(workflowId)).status === 'completed' ? true : undefined),
        { intervalMs: 200, timeoutMs: 120_000 },
      );
      record.completed = true;
    }
  } catch (error) {
    record.afterwards = error instanceof Error ? error.message : String(error);
  } finally {
    if (!owner.page.isClosed()) await owner.page.close().catch(() => undefined);
  }
  return record;
}

/** Measures `options.runs` handoffs of `kind` on a fresh database. */
export async function measureHandoffs(
  context: BrowserContext,
  baseUrl: string,
  kind: HandoffKind,
  options: HandoffOptions,
): Promise<HandoffFigure> {
  const databaseName = `bench-handoff-${kind}-${Date.now().toString(36)}`;
  let survivor = await StudioTab.open(context, baseUrl, databaseName);
  const figure: HandoffFigure = {
    kind,
    databaseName,
    runs: [],
    latencyMs: summarize([]),
    claimLatencyMs: summarize([]),
    audit: null,
  };
  try {
    if (kind === 'freeze' && !(await survivor.hasFreeze())) {
      figure.skipped = 'the studio has no shuttle.chaos.freeze (chaos control channel) in this build';
      options.log(`handoff ${kind}: skipped (${figure.skipped})`);
      return figure;
    }
    for (let run = 1; run <= options.runs; run++) {
      const record = await measureRun(context, baseUrl, databaseName, survivor, kind, run, options);
      figure.runs.push(record);
      options.log(
        `handoff ${kind} ${run}/${options.runs}: ` +
          (record.error
            ? `failed: ${record.error}`
            : `${record.latencyMs} ms to first step (${record.claimKind} after ${record.claimLatencyMs} ms, ` +
              `owner ${record.ownerReleased ? 'released' : 'did not release'})`),
      );
      if (!(await survivor.isResponsive())) {
        options.log(`handoff ${kind}: the survivor tab stopped answering; opening a new one`);
        await survivor.page.close().catch(() => undefined);
        survivor = await StudioTab.open(context, baseUrl, databaseName);
      }
    }
    figure.latencyMs = summarize(
      figure.runs.flatMap((run) => (run.latencyMs === null || run.error ? [] : [run.latencyMs])),
    );
    figure.claimLatencyMs = summarize(
      figure.runs.flatMap((run) => (run.claimLatencyMs === null || run.error ? [] : [run.claimLatencyMs])),
    );
    figure.audit = await auditDatabase(survivor, databaseName);
    return figure;
  } finally {
    await survivor.page.close().catch(() => undefined);
  }
}
