/**
 * Schedules: validation before any write, exactly one start per slot with engines racing at slot boundaries,
 * overlap, catch-up after engines were down, pause / resume / trigger / delete, replace, time zones across a
 * daylight-saving change, under `none` and `workflow-lease`, and over PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../storage/postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from '../../storage/postgres.test-support';
import type { Storage } from '../../storage/types';
import { MemoryStorage } from '../../storage/memory';
import type { ScanOptions } from '../../storage/types';
import { SimulatedClock, settle } from '../clock';
import { createEngine } from '../engine';
import { TestWorld, type TestEngine } from '../engine.test-support';
import {
  InvalidScheduleError,
  PayloadTooLargeError,
  ScheduleExistsError,
  ScheduleNotFoundError,
  WorkflowNotRegisteredError,
} from '../errors';
import { keys } from '../keys';
import type { EngineOptions } from '../options';
import { defineWorkflow } from '../workflow';
import type { ScheduleInfo, SlotOutcome } from './records';
import { maxStartsPerPass } from './schedules';

const minute = 60_000;
/** 2026-01-01T00:00:00Z, the simulated clock's start. */
const t0 = Date.UTC(2026, 0, 1);
const iso = (time: number) => new Date(time).toISOString();

const fencing = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const satisfies Partial<EngineOptions>;

/** Finishes at once. */
const tick = defineWorkflow({
  name: 'tick',
  version: 1,
  *run(ctx, input: { n?: number } | undefined) {
    return { at: yield* ctx.now(), n: input?.n ?? 0 };
  },
});

/** Runs until it is signalled `finish`. */
const longRun = defineWorkflow({
  name: 'long-run',
  version: 1,
  *run(ctx) {
    yield* ctx.waitForSignal('finish');
    return 'done';
  },
});

const workflows = [tick, longRun];

async function everyKey(storage: Storage): Promise<string[]> {
  return (await storage.scan('')).map(({ key, value }) => `${key}=${value}`);
}

/** Every workflow id of the store that a schedule `name` started, in order. */
async function startedBy(engine: TestEngine, name: string): Promise<string[]> {
  const page = await engine.list({ idPrefix: `${name}@`, limit: 1000 });
  return page.items.map((item) => item.workflowId).sort();
}

function outcomes(info: ScheduleInfo): string[] {
  return info.lastSlots.map((slot: SlotOutcome) => {
    const at = iso(slot.slot).slice(11, 19);
    if (slot.outcome === 'started') return `${at} started${slot.trigger ? ' (trigger)' : ''}`;
    if (slot.outcome === 'buffered') return `${at} buffered`;
    return `${at} skipped ${slot.reason}${slot.count !== undefined ? ` ×${slot.count}` : ''}`;
  });
}

describe('schedule validation', () => {
  it('refuses bad specs with typed errors before anything is written', async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows);
    const before = await everyKey(world.storage);
    const bad: [string, unknown, RegExp | (new (...args: never[]) => Error)][] = [
      [
        'a',
        { cron: '61 * * * *', workflow: 'tick' },
        /Invalid cron "61 \* \* \* \*": Invalid value for minute: 61\. Accepted: 5 fields/,
      ],
      [
        'a',
        { cron: 'every day', workflow: 'tick' },
        // croner's own message ends with a full stop: one only
        /Invalid cron "every day": invalid configuration format \('every day'\), exactly five, six, or seven space separated parts are required\. Accepted: 5 fields 'minute hour/,
      ],
      ['a', { cron: '', workflow: 'tick' }, /non-empty string/],
      ['a', { cron: '0 0 30 2 *', workflow: 'tick' }, /never fires after now/],
      [
        'a',
        { cron: '* * * * *', timezone: 'Mars/Olympus', workflow: 'tick' },
        /Unknown time zone "Mars\/Olympus"/,
      ],
      ['a', { cron: '* * * * *', workflow: 'nope' }, WorkflowNotRegisteredError],
      [
        'a',
        { cron: '* * * * *', workflow: 'tick', overlap: 'queue' },
        /Unknown overlap "queue"; use 'skip', 'buffer-one', 'allow'/,
      ],
      ['a', { cron: '* * * * *', workflow: 'tick', catchUp: 'some' }, /Unknown catchUp "some"/],
      ['a', { cron: '* * * * *', workflow: 'tick', replace: true }, /replace goes in the third argument/],
      [
        'a',
        { cron: '* * * * *', workflow: 'tick', startOptions: { id: 'x' } },
        /startOptions.id is not allowed/,
      ],
      [
        'a',
        { cron: '* * * * *', workflow: 'tick', startOptions: { executionTimeoutMs: -1 } },
        /executionTimeoutMs must be a positive/,
      ],
      [
        'a',
        { cron: '* * * * *', workflow: 'tick', input: { blob: 'x'.repeat(300 * 1024) } },
        PayloadTooLargeError,
      ],
      ['', { cron: '* * * * *', workflow: 'tick' }, /A schedule name must be a non-empty string/],
      ['bad\nname', { cron: '* * * * *', workflow: 'tick' }, /control characters/],
    ];
    for (const [name, spec, expected] of bad) {
      const attempt = engine.schedule(name, spec as never);
      if (expected instanceof RegExp) await expect(attempt, JSON.stringify(spec)).rejects.toThrow(expected);
      else await expect(attempt, JSON.stringify(spec)).rejects.toBeInstanceOf(expected);
    }
    await expect(engine.schedule('a', { cron: 'x', workflow: 'tick' })).rejects.toMatchObject({
      name: 'InvalidScheduleError',
      field: 'cron',
    });
    await expect(
      engine.schedule('a', { cron: '* * * * *', workflow: 'tick', timezone: 'Nowhere/Else' }),
    ).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(engine.describeSchedule('a')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    for (const call of [
      () => engine.pauseSchedule('a'),
      () => engine.resumeSchedule('a'),
      () => engine.triggerSchedule('a'),
      () => engine.deleteSchedule('a'),
    ])
      await expect(call()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(await everyKey(world.storage)).toEqual(before);
    expect(await engine.schedules()).toEqual([]);
    await world.shutdownAll();
  });

  it('fills in defaults and reports the next five fire times', async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows);
    const info = await engine.schedule('hourly', { cron: '0 * * * *', workflow: tick });
    expect(info.spec).toEqual({
      cron: '0 * * * *',
      timezone: 'UTC',
      workflow: 'tick',
      overlap: 'skip',
      catchUp: 'latest',
    });
    expect(info.nextFireAt.map(iso)).toEqual([1, 2, 3, 4, 5].map((h) => iso(t0 + h * 60 * minute)));
    expect(info.paused).toBe(false);
    expect(info.lastSlots).toEqual([]);
    expect(await world.storage.scan(keys.scheduleDuePrefix)).toEqual([
      { key: keys.scheduleDue(t0 + 60 * minute, 'hourly'), value: 'hourly' },
    ]);
    await world.shutdownAll();
  });
});

describe.each([
  { mode: 'none', options: {} },
  { mode: 'workflow-lease', options: fencing },
] as const)('schedules under $mode', ({ options }) => {
  it('start one workflow per slot, with a deterministic id and scheduledBy on its record and timeline', async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows, options);
    await engine.schedule('every-minute', { cron: '* * * * *', workflow: 'tick', input: { n: 7 } });
    await world.advance(30_000);
    expect(await startedBy(engine, 'every-minute')).toEqual([]);
    await world.advance(3 * minute, { stepMs: 10_000 });
    const ids = [1, 2, 3].map((m) => `every-minute@${iso(t0 + m * minute)}`);
    expect(await startedBy(engine, 'every-minute')).toEqual(ids);
    const description = await engine.describe(ids[0]!);
    expect(description.scheduledBy).toEqual({ schedule: 'every-minute', slot: t0 + minute });
    expect(description.status).toBe('completed');
    expect(description.result).toEqual({ at: t0 + minute, n: 7 });
    const timeline = await engine.timeline(ids[0]!);
    expect(timeline[0]).toMatchObject({
      kind: 'started',
      detail: { workflowType: 'tick', scheduledBy: { schedule: 'every-minute', slot: t0 + minute } },
    });
    const info = await engine.describeSchedule('every-minute');
    expect(outcomes(info)).toEqual(['00:03:00 started', '00:02:00 started', '00:01:00 started']);
    expect(info.lastSlots[0]).toMatchObject({ workflowId: ids[2], engineId: engine.id, at: t0 + 3 * minute });
    expect(engine.metrics().scheduleStarts).toBe(3);
    await world.shutdownAll();
  });

  it('pause, resume (catch-up from the pause), trigger and delete', async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows, options);
    await engine.schedule('p', { cron: '* * * * *', workflow: 'tick' });
    await world.advance(minute);
    const paused = await engine.pauseSchedule('p');
    expect(paused.paused).toBe(true);
    expect(paused.pausedAt).toBe(t0 + minute);
    expect(paused.nextFireAt).toEqual([]);
    expect(await world.storage.scan(keys.scheduleDuePrefix)).toEqual([]);
    expect((await engine.pauseSchedule('p')).updatedAt).toBe(t0 + minute); // idempotent: no second write
    await world.advance(5 * minute, { stepMs: 20_000 });
    expect(await startedBy(engine, 'p')).toEqual([`p@${iso(t0 + minute)}`]);
    // A trigger starts a run even while paused, with its own id.
    const handle = await engine.triggerSchedule('p');
    expect(handle.workflowId).toBe('p@trigger-1');
    await world.idle();
    expect((await handle.describe()).scheduledBy).toEqual({
      schedule: 'p',
      slot: t0 + 6 * minute,
      trigger: true,
    });
    expect((await engine.triggerSchedule('p')).workflowId).toBe('p@trigger-2');
    // Resume at 00:06:30: catch-up 'latest' fires the latest slot missed while paused (00:06), once.
    await world.advance(30_000);
    const resumed = await engine.resumeSchedule('p');
    expect(resumed.paused).toBe(false);
    expect(resumed.nextFireAt[0]).toBe(t0 + 7 * minute);
    await world.advance(0);
    expect(await startedBy(engine, 'p')).toEqual([
      `p@${iso(t0 + minute)}`,
      `p@${iso(t0 + 6 * minute)}`,
      'p@trigger-1',
      'p@trigger-2',
    ]);
    expect(outcomes(await engine.describeSchedule('p'))).toEqual([
      '00:06:00 started',
      '00:02:00 skipped missed ×4',
      '00:06:00 started (trigger)',
      '00:06:00 started (trigger)',
      '00:01:00 started',
    ]);
    await world.advance(minute);
    expect(await startedBy(engine, 'p')).toContain(`p@${iso(t0 + 7 * minute)}`);
    await engine.deleteSchedule('p');
    await expect(engine.describeSchedule('p')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(await world.storage.scan(keys.scheduleDuePrefix)).toEqual([]);
    expect(await world.storage.scan(keys.schedulesPrefix)).toEqual([]);
    await world.advance(3 * minute, { stepMs: 30_000 });
    expect(await startedBy(engine, 'p')).toHaveLength(5);
    // Made again under the same name: its triggers skip the ids its predecessor used.
    await engine.schedule('p', { cron: '0 0 1 1 *', workflow: 'tick' });
    expect((await engine.triggerSchedule('p')).workflowId).toBe('p@trigger-3');
    await world.shutdownAll();
  });
});

describe('exactly one start per slot with engines racing', () => {
  for (const count of [2, 3]) {
    it(`${count} engines racing at every slot boundary start one workflow per slot; the others see the conflict`, async () => {
      const world = new TestWorld();
      const engines: TestEngine[] = [];
      for (let i = 0; i < count; i++) engines.push(await world.engine(workflows, fencing));
      await engines[0]!.schedule('race', { cron: '*/10 * * * * *', workflow: 'tick', overlap: 'allow' });
      for (let slot = 1; slot <= 6; slot++) {
        await world.clock.advance(10_000);
        // Every engine runs its pass at the same moment: they all read the same schedule record.
        await Promise.all(engines.map((engine) => engine.runMaintenance()));
        await world.idle();
      }
      const ids = await startedBy(engines[0]!, 'race');
      expect(ids).toEqual([1, 2, 3, 4, 5, 6].map((s) => `race@${iso(t0 + s * 10_000)}`));
      const starts = engines.map((engine) => engine.metrics().scheduleStarts);
      const conflicts = engines.map((engine) => engine.metrics().scheduleSlotConflicts);
      expect(starts.reduce((a, b) => a + b)).toBe(6);
      // Each slot had count - 1 losers, each of which saw the slot taken.
      expect(conflicts.reduce((a, b) => a + b)).toBe(6 * (count - 1));
      for (const id of ids) {
        const timeline = await engines[0]!.timeline(id);
        expect(timeline.filter((entry) => entry.kind === 'started')).toHaveLength(1);
        expect((await engines[0]!.describe(id)).status).toBe('completed');
      }
      expect(outcomes(await engines[1]!.describeSchedule('race'))).toHaveLength(6);
      for (const engine of engines) expect(engine.warnings).toEqual([]);
      await world.shutdownAll();
    });
  }

  it('an observer engine never fires; an engine without the definition leaves the slot to one that has it', async () => {
    const world = new TestWorld();
    const observer = await world.engine(workflows, { ...fencing, claimWorkflows: false });
    const stranger = await world.engine([longRun], fencing);
    await observer.schedule('o', { cron: '* * * * *', workflow: 'tick' });
    await world.advance(2 * minute, { stepMs: 20_000 });
    expect(await startedBy(observer, 'o')).toEqual([]);
    const worker = await world.engine(workflows, fencing);
    await world.advance(0);
    // catch-up 'latest': the 00:01 slot was missed, 00:02 fires on the engine that may run 'tick'.
    expect(await startedBy(observer, 'o')).toEqual([`o@${iso(t0 + 2 * minute)}`]);
    expect(worker.metrics().scheduleStarts).toBe(1);
    expect(observer.metrics().scheduleStarts + stranger.metrics().scheduleStarts).toBe(0);
    await world.shutdownAll();
  });
});

describe('overlap', () => {
  async function run(overlap: 'skip' | 'buffer-one' | 'allow') {
    const world = new TestWorld();
    const engine = await world.engine(workflows, fencing);
    await engine.schedule('o', { cron: '* * * * *', workflow: 'long-run', overlap });
    await world.advance(3 * minute, { stepMs: 20_000 });
    return { world, engine };
  }

  it("'skip': a slot whose previous run has not finished is skipped and recorded", async () => {
    const { world, engine } = await run('skip');
    const first = `o@${iso(t0 + minute)}`;
    expect(await startedBy(engine, 'o')).toEqual([first]);
    const info = await engine.describeSchedule('o');
    expect(outcomes(info)).toEqual([
      '00:03:00 skipped overlap',
      '00:02:00 skipped overlap',
      '00:01:00 started',
    ]);
    expect(info.lastSlots[0]).toMatchObject({ workflowId: first });
    expect(info.running).toEqual([first]);
    await engine.signal(first, 'finish');
    await world.advance(minute);
    expect(await startedBy(engine, 'o')).toEqual([first, `o@${iso(t0 + 4 * minute)}`]);
    await world.shutdownAll();
  });

  it("'buffer-one': one slot waits and starts when the previous run finishes; a second is skipped", async () => {
    const { world, engine } = await run('buffer-one');
    const first = `o@${iso(t0 + minute)}`;
    expect(await startedBy(engine, 'o')).toEqual([first]);
    let info = await engine.describeSchedule('o');
    expect(outcomes(info)).toEqual(['00:03:00 skipped buffer-full', '00:02:00 buffered', '00:01:00 started']);
    expect(info.buffered).toBe(t0 + 2 * minute);
    await world.advance(20_000);
    expect(await startedBy(engine, 'o')).toEqual([first]);
    await engine.signal(first, 'finish');
    await world.advance(0);
    await world.advance(0);
    const buffered = `o@${iso(t0 + 2 * minute)}`;
    expect(await startedBy(engine, 'o')).toEqual([first, buffered]);
    info = await engine.describeSchedule('o');
    expect(info.buffered).toBe(null);
    expect(info.running).toEqual([buffered]);
    expect(outcomes(info)).toEqual(['00:02:00 started', '00:03:00 skipped buffer-full', '00:01:00 started']);
    expect(info.lastSlots[0]).toMatchObject({ bufferedMs: 3 * minute + 20_000 - 2 * minute });
    expect((await engine.describe(buffered)).scheduledBy).toEqual({ schedule: 'o', slot: t0 + 2 * minute });
    await world.shutdownAll();
  });

  it("'allow': every slot starts, whatever is still running", async () => {
    const { world, engine } = await run('allow');
    expect(await startedBy(engine, 'o')).toEqual([1, 2, 3].map((m) => `o@${iso(t0 + m * minute)}`));
    expect((await engine.describeSchedule('o')).running).toEqual([]);
    await world.shutdownAll();
  });
});

describe('catch-up after every engine was down across several slots', () => {
  /** One slot fires, every engine stops, 5 slots and 30 s pass, a new engine comes up. */
  async function outage(
    catchUp: 'none' | 'latest' | 'all',
    minutesDown = 5,
    overlap: 'skip' | 'allow' = 'skip',
  ) {
    const world = new TestWorld();
    const first = await world.engine(workflows, fencing);
    await first.schedule('c', { cron: '* * * * *', workflow: 'tick', catchUp, overlap });
    await world.advance(minute);
    await first.shutdown();
    await world.clock.advance(minutesDown * minute + 30_000);
    const second = await world.engine(workflows, fencing);
    await world.advance(0);
    return { world, engine: second };
  }

  it("'none': nothing missed fires; the next future slot does", async () => {
    const { world, engine } = await outage('none');
    expect(await startedBy(engine, 'c')).toEqual([`c@${iso(t0 + minute)}`]);
    expect(outcomes(await engine.describeSchedule('c'))).toEqual([
      '00:02:00 skipped missed ×5',
      '00:01:00 started',
    ]);
    expect((await engine.describeSchedule('c')).lastSlots[0]).toMatchObject({ through: t0 + 6 * minute });
    await world.advance(30_000);
    expect(await startedBy(engine, 'c')).toEqual([`c@${iso(t0 + minute)}`, `c@${iso(t0 + 7 * minute)}`]);
    await world.shutdownAll();
  });

  it("'none': a slot found on time (within the window) still fires", async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows, fencing);
    await engine.schedule('c', { cron: '* * * * *', workflow: 'tick', catchUp: 'none' });
    await world.clock.advance(minute + 10_000);
    await world.advance(0);
    expect(await startedBy(engine, 'c')).toEqual([`c@${iso(t0 + minute)}`]);
    await world.shutdownAll();
  });

  it("'latest': only the most recent missed slot fires", async () => {
    const { world, engine } = await outage('latest');
    expect(await startedBy(engine, 'c')).toEqual([`c@${iso(t0 + minute)}`, `c@${iso(t0 + 6 * minute)}`]);
    expect(outcomes(await engine.describeSchedule('c'))).toEqual([
      '00:06:00 started',
      '00:02:00 skipped missed ×4',
      '00:01:00 started',
    ]);
    await world.shutdownAll();
  });

  it("'all': every missed slot fires, each once, at most a bounded number per pass", async () => {
    const { world, engine } = await outage('all', 5, 'allow');
    expect(await startedBy(engine, 'c')).toEqual([1, 2, 3, 4, 5, 6].map((m) => `c@${iso(t0 + m * minute)}`));
    await world.advance(0);
    expect(await startedBy(engine, 'c')).toHaveLength(6);
    await world.shutdownAll();

    // With overlap 'skip', catch-up obeys the overlap too: a slot decided while the previous run has not
    // finished is skipped (the runs of this quick workflow finish between passes, not within one).
    const skipping = await outage('all', 5, 'skip');
    const decided = outcomes(await skipping.engine.describeSchedule('c'));
    expect(decided).toHaveLength(6);
    expect(decided.filter((line) => line.endsWith('started')).length).toBeGreaterThanOrEqual(2);
    expect(decided.every((line) => line.endsWith('started') || line.endsWith('skipped overlap'))).toBe(true);
    await skipping.world.shutdownAll();

    const long = await outage('all', 150, 'allow');
    expect(await startedBy(long.engine, 'c')).toHaveLength(1 + maxStartsPerPass);
    await long.world.advance(0);
    expect(await startedBy(long.engine, 'c')).toHaveLength(1 + 150);
    await long.world.shutdownAll();
  });
});

describe('replace', () => {
  it('an identical spec is idempotent; a different one is refused unless replace: true', async () => {
    const world = new TestWorld();
    const engine = await world.engine(workflows);
    const spec = { cron: '* * * * *', workflow: 'tick', input: { n: 1, m: 2 } };
    const created = await engine.schedule('r', spec);
    await world.advance(minute);
    const stored = await everyKey(world.storage);
    await world.clock.advance(1000);
    // The same spec, defaults written out and keys in another order: nothing is written.
    const again = await engine.schedule('r', {
      workflow: 'tick',
      input: { m: 2, n: 1 },
      cron: '* * * * *',
      timezone: 'UTC',
      overlap: 'skip',
      catchUp: 'latest',
    });
    expect(again.createdAt).toBe(created.createdAt);
    expect(again.updatedAt).toBe(created.updatedAt);
    expect(await everyKey(world.storage)).toEqual(stored);
    const refused = engine.schedule('r', { ...spec, cron: '*/2 * * * *', input: { n: 2 } });
    await expect(refused).rejects.toBeInstanceOf(ScheduleExistsError);
    await expect(refused).rejects.toMatchObject({ differences: ['cron', 'input'] });
    await expect(refused).rejects.toThrow(/Pass \{ replace: true \}/);
    expect(await everyKey(world.storage)).toEqual(stored);
    const replaced = await engine.schedule('r', { ...spec, cron: '*/2 * * * *' }, { replace: true });
    expect(replaced.spec.cron).toBe('*/2 * * * *');
    expect(replaced.createdAt).toBe(created.createdAt);
    expect(replaced.updatedAt).toBe(t0 + minute + 1000);
    expect(replaced.lastSlots).toHaveLength(1);
    expect(replaced.nextFireAt[0]).toBe(t0 + 2 * minute);
    await world.advance(minute, { stepMs: 20_000 });
    expect(await startedBy(engine, 'r')).toEqual([`r@${iso(t0 + minute)}`, `r@${iso(t0 + 2 * minute)}`]);
    await world.advance(minute, { stepMs: 20_000 });
    expect(await startedBy(engine, 'r')).toHaveLength(2); // 00:03 is not a slot of */2
    await world.shutdownAll();
  });
});

describe('time zones', () => {
  it("a daily slot in 'America/New_York' fires at 09:00 local time across the change to daylight saving", async () => {
    const world = new TestWorld();
    world.clock.set(Date.UTC(2026, 2, 6, 0, 0)); // Friday 6 March 2026; DST starts Sunday 8 March at 02:00
    const engine = await world.engine(workflows, fencing);
    const info = await engine.schedule('ny', {
      cron: '0 9 * * *',
      timezone: 'America/New_York',
      workflow: 'tick',
    });
    expect(info.nextFireAt.slice(0, 4).map(iso)).toEqual([
      '2026-03-06T14:00:00.000Z',
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
      '2026-03-09T13:00:00.000Z',
    ]);
    await world.advance(4 * 24 * 60 * minute, { stepMs: 30 * minute });
    expect(await startedBy(engine, 'ny')).toEqual([
      'ny@2026-03-06T14:00:00.000Z',
      'ny@2026-03-07T14:00:00.000Z',
      'ny@2026-03-08T13:00:00.000Z',
      'ny@2026-03-09T13:00:00.000Z',
    ]);
    for (const id of await startedBy(engine, 'ny')) {
      const { startedAt } = await engine.describe(id);
      const local = new Intl.DateTimeFormat('en-US', {
        timeZone: 'America/New_York',
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      }).format(startedAt!);
      expect(local).toBe('09:00');
    }
    await world.shutdownAll();
  });
});

/**
 * Makes engines race for real on a store that does not interleave them by itself: while armed, a read of a
 * schedule record waits until `parties` such reads have been made, so every engine decides a slot from the
 * same record before any of them writes.
 */
class ReadBarrier {
  #waiting: (() => void)[] = [];
  #armed = false;
  rounds = 0;

  constructor(readonly parties: number) {}

  arm(): void {
    this.#armed = true;
  }

  wrap(inner: Storage): Storage {
    return new Proxy(inner, {
      get: (target, property) => {
        if (property === 'get')
          return async (key: string) => {
            const value = await target.get(key);
            if (this.#armed && key.startsWith(keys.schedulesPrefix)) await this.#arrive();
            return value;
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  #arrive(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      if (this.#waiting.length < this.parties) return;
      this.#armed = false;
      this.rounds++;
      for (const release of this.#waiting.splice(0)) release();
    });
  }
}

describe('over PostgreSQL', () => {
  let database: TestDatabase;
  const opened: PostgresStorage[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await database?.drop();
  });

  it('two engines racing every slot start one workflow per slot', async () => {
    const storage = await PostgresStorage.open({
      connectionString: database.url,
      schema: freshSchema(),
      maxConnections: 4,
    });
    opened.push(storage);
    const world = new TestWorld({ storage });
    const barrier = new ReadBarrier(2);
    const a = await world.engine(workflows, { ...fencing, storage: barrier.wrap(storage) });
    const b = await world.engine(workflows, { ...fencing, storage: barrier.wrap(storage) });
    await a.schedule('pg', { cron: '*/10 * * * * *', workflow: 'tick', overlap: 'allow' });
    for (let slot = 1; slot <= 4; slot++) {
      await world.clock.advance(10_000);
      barrier.arm();
      await Promise.all([a.runMaintenance(), b.runMaintenance()]);
      await world.idle();
    }
    expect(barrier.rounds).toBe(4);
    expect(await startedBy(a, 'pg')).toEqual([1, 2, 3, 4].map((s) => `pg@${iso(t0 + s * 10_000)}`));
    expect(a.metrics().scheduleStarts + b.metrics().scheduleStarts).toBe(4);
    expect(a.metrics().scheduleSlotConflicts + b.metrics().scheduleSlotConflicts).toBe(4);
    for (const id of await startedBy(a, 'pg')) {
      expect((await b.describe(id)).status).toBe('completed');
      expect((await b.timeline(id)).filter((entry) => entry.kind === 'started')).toHaveLength(1);
    }
    await world.shutdownAll();
  });
});

describe('a failing schedule pass', () => {
  it('at start-up is a warning, never an unhandled rejection, and the next pass runs', async () => {
    const memory = new MemoryStorage();
    let failures = 1;
    const storage = new Proxy(memory, {
      get(target, property) {
        if (property === 'scan')
          return (prefix: string, options?: ScanOptions) => {
            if (prefix === keys.scheduleDuePrefix && failures-- > 0)
              return Promise.reject(new Error('the store is restarting'));
            return target.scan(prefix, options);
          };
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const warnings: string[] = [];
    const clock = new SimulatedClock(t0);
    const engine = await createEngine({
      storage,
      clock,
      workflows,
      onWarning: (warning) => warnings.push(warning.message),
    });
    await settle();
    expect(warnings).toEqual([
      expect.stringMatching(/Schedule pass failed \(will run again\): the store is restarting/),
    ]);
    await engine.schedule('after', { cron: '* * * * *', workflow: 'tick' });
    await clock.advance(minute);
    await settle();
    expect((await engine.list({ idPrefix: 'after@' })).items).toHaveLength(1);
    await engine.shutdown();
  });
});
