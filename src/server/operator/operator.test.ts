/**
 * The operator commands against a real engine fleet in this process: one claiming engine runs the
 * workflows, and every command opens its own observer engine on the same store, as `shuttle workflow …`
 * does on PostgreSQL (src/server/cli.test.ts runs the real process against a real server).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEngine, defineQueue, defineWorkflow, type Engine } from '../../engine';
import { validateQueueStart } from '../../engine/queues/queue-options';
import { activityLimitViews } from '../../host/activity-slots';
import { hostClaimTimings } from '../../protocol';
import { MemoryStorage } from '../../storage/memory';
import { StartupError } from '../store';
import { exitCodes, runOperator, type OperatorGroup, type OperatorIo, type StoreFlags } from './operator';

const greet = defineWorkflow({
  name: 'greet',
  version: 1,
  *run(ctx, input: { name: string }) {
    const greeting = yield* ctx.activity('compose', async () => `Hello, ${input.name}`);
    return { greeting };
  },
});

const approval = defineWorkflow({
  name: 'approval',
  version: 1,
  *run(ctx) {
    const decision = yield* ctx.waitForSignal<{ ok: boolean }>('decide');
    if (!decision?.ok) throw new Error('rejected by the approver');
    return 'approved';
  },
});

/** `approval` changed without a patch: it asks for a note before the decision. */
const approvalChanged = defineWorkflow({
  name: 'approval',
  version: 1,
  *run(ctx) {
    yield* ctx.waitForSignal('note');
    const decision = yield* ctx.waitForSignal<{ ok: boolean }>('decide');
    return decision?.ok ? 'approved' : 'rejected';
  },
});

/** Sets search attributes from its input, then waits for a decision. */
const tagged = defineWorkflow({
  name: 'tagged',
  version: 1,
  attributes: { customer: 'string', amount: 'number', due: 'time' },
  *run(ctx, input: { customer: string; amount: number; due: string }) {
    yield* ctx.setAttributes(input);
    yield* ctx.waitForSignal('decide');
  },
});

/** Goes onto the payments queue (its definition's), and holds its slot until it is told it is done. */
const charge = defineWorkflow({
  name: 'charge',
  version: 1,
  queue: 'payments',
  *run(ctx) {
    yield* ctx.waitForSignal('done');
    return 'charged';
  },
});

/** One at a time, one per key, ten a minute: declared by the worker, and by the commands given charge.ts. */
const payments = defineQueue('payments', {
  concurrency: 1,
  perKeyConcurrency: 1,
  rateLimit: { limit: 10, periodMs: 60_000 },
});

const timings = {
  ownership: 'workflow-lease',
  workflowClaimTtlMs: 3000,
  workflowClaimRenewIntervalMs: 1000,
} as const;

let storage: MemoryStorage;
let worker: Engine;
let opened: number;
let lastFlags: StoreFlags | undefined;
let closed: number;

beforeEach(async () => {
  storage = new MemoryStorage();
  worker = await createEngine({
    storage,
    workflows: [greet, approval, tagged, charge],
    queues: [payments],
    ...timings,
  });
  opened = 0;
  closed = 0;
});

afterEach(async () => {
  await worker.shutdown();
});

type Ran = { code: number; stdout: string; stderr: string };

async function shuttle(group: OperatorGroup, ...argv: string[]): Promise<Ran> {
  let stdout = '';
  let stderr = '';
  const io: OperatorIo = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    now: () => Date.now(),
    open: async (flags) => {
      if (flags.databaseUrl?.startsWith('mysql:'))
        throw new StartupError(`--database-url must be a PostgreSQL URL; got '${flags.databaseUrl}'.`);
      opened++;
      lastFlags = flags;
      const engine = await createEngine({
        storage,
        workflows: [
          ...(flags.workflows.includes('greet.ts') ? [greet] : []),
          ...(flags.workflows.includes('approval.ts') ? [approval] : []),
          ...(flags.workflows.includes('approval-changed.ts') ? [approvalChanged] : []),
          ...(flags.workflows.includes('tagged.ts') ? [tagged] : []),
          ...(flags.workflows.includes('charge.ts') ? [charge] : []),
        ],
        // A module that defines charge declares its queue too (as --workflows modules do).
        ...(flags.workflows.includes('charge.ts') ? { queues: [payments] } : {}),
        ...timings,
        claimWorkflows: false,
        recover: false,
      });
      return {
        engine,
        labels: async () => new Map([[worker.id, 'worker-1']]),
        activityLimits: async () =>
          activityLimitViews(await engine.activityLimits(), storage, Date.now(), hostClaimTimings.graceMs),
        close: async () => {
          closed++;
          await engine.shutdown();
        },
      };
    },
  };
  const code = await runOperator(group, argv, io);
  return { code, stdout, stderr };
}

describe('shuttle workflow', () => {
  it('list: a table with the owner by name, --json for scripts, filters, and a cursor for the next page', async () => {
    await worker.start(approval, undefined, { id: 'approval-1' });
    await (await worker.start(greet, { name: 'Ada' }, { id: 'greet-1' })).result();
    const listed = await shuttle('workflow', 'list');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+TYPE\s+STATUS\s+RUN\s+OWNER\s+WAITING ON\s+WHEN$/);
    expect(rows.find((row) => row.startsWith('approval-1'))).toMatch(
      /approval-1\s+approval\s+running\s+1\s+worker-1\s+signal 'decide'/,
    );
    expect(rows.find((row) => row.startsWith('greet-1'))).toMatch(
      /greet-1\s+greet\s+completed\s+1\s+-\s+-\s+ended/,
    );

    const json = await shuttle('workflow', 'list', '--status', 'completed', '--json');
    const page = JSON.parse(json.stdout) as { items: { workflowId: string }[]; nextCursor: string | null };
    expect(page.items.map((item) => item.workflowId)).toEqual(['greet-1']);

    const first = await shuttle('workflow', 'list', '--limit', '1');
    const cursor = /More: --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();
    const second = await shuttle('workflow', 'list', '--limit', '1', '--cursor', cursor!);
    expect(second.stdout).not.toContain(first.stdout.split('\n')[1]!.split(' ')[0]);
    expect(second.stdout.split('\n')[1]).toMatch(/^(approval-1|greet-1)\s/);

    const refused = await shuttle('workflow', 'list', '--status', 'finished');
    expect(refused).toMatchObject({ code: exitCodes.usage, stdout: '' });
    expect(refused.stderr).toContain("--status 'finished' is not a status. Statuses: pending, running");

    // Time ranges: a duration ago or an ISO time; an unfinished workflow has not ended.
    const ids = async (...flags: string[]) =>
      (
        JSON.parse((await shuttle('workflow', 'list', '--json', ...flags)).stdout) as {
          items: { workflowId: string }[];
        }
      ).items
        .map((item) => item.workflowId)
        .sort();
    expect(await ids('--created-since', '1h')).toEqual(['approval-1', 'greet-1']);
    expect(await ids('--created-until', '1h')).toEqual([]);
    expect(await ids('--ended-since', '1h')).toEqual(['greet-1']);
    expect(await ids('--created-since', new Date(Date.now() + 60_000).toISOString())).toEqual([]);
    const badTime = await shuttle('workflow', 'list', '--ended-since', 'yesterday');
    expect(badTime).toMatchObject({
      code: exitCodes.usage,
      stderr:
        "--ended-since must be a duration ago (2h, 30m, 7d) or an ISO 8601 time (2026-12-07T09:00Z); got 'yesterday'.\n",
    });
  });

  it('list --where: by search attributes (typed from the index when the definitions are not given), a column of them; describe shows them; a bad condition exits 2', async () => {
    const starts: [string, string, number, string][] = [
      ['t-1', 'acme', 120, '2026-03-01'],
      ['t-2', 'acme', 80, '2026-04-01'],
      ['t-3', 'globex, inc', 300, '2026-03-15T12:00:00Z'],
    ];
    for (const [id, customer, amount, due] of starts)
      await worker.start(tagged, { customer, amount, due }, { id });
    await worker.start(approval, undefined, { id: 'untagged' });
    await vi.waitFor(async () => expect((await worker.describe('t-3')).attributes).toBeDefined());
    const ids = async (...where: string[]) => {
      const ran = await shuttle('workflow', 'list', '--json', ...where.flatMap((w) => ['--where', w]));
      expect(ran.code, ran.stderr).toBe(0);
      return (JSON.parse(ran.stdout) as { items: { workflowId: string }[] }).items
        .map((i) => i.workflowId)
        .sort();
    };
    expect(await ids('customer=acme')).toEqual(['t-1', 't-2']);
    expect(await ids('customer=acme', 'amount>=100')).toEqual(['t-1']);
    expect(await ids('amount>100')).toEqual(['t-1', 't-3']);
    expect(await ids("customer='globex, inc'")).toEqual(['t-3']);
    expect(await ids('due>=2026-03-01', 'due<2026-04-01')).toEqual(['t-1', 't-3']);
    expect(await ids('customer=initech')).toEqual([]);

    const table = await shuttle('workflow', 'list', '--where', 'customer=acme');
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toMatch(/\sATTRIBUTES$/);
    expect(rows.find((row) => row.startsWith('t-1'))).toMatch(
      /amount=120 customer=acme due=2026-03-01T00:00:00.000Z$/,
    );
    const described = await shuttle('workflow', 'describe', 't-2');
    expect(described.stdout).toMatch(/Attributes:\s+amount=80 customer=acme due=2026-04-01T00:00:00.000Z/);

    // start --attribute: text read as the declared types; a bad one exits 2 and starts nothing.
    const start = (...flags: string[]) =>
      shuttle(
        'workflow',
        'start',
        'tagged',
        '--workflows',
        'tagged.ts',
        '--input',
        '{"customer":"initech","amount":5,"due":"2026-05-01"}',
        ...flags,
      );
    // (Pending for an hour: its own setAttributes has not run yet, so what the list finds is the start's.)
    const started = await start(
      '--id',
      't-4',
      '--start-delay',
      '1h',
      '--attribute',
      'amount=42.5',
      '--attribute',
      "customer='initech corp'",
    );
    expect(started.code, started.stderr).toBe(0);
    expect(await ids('customer=initech corp', 'amount>42')).toEqual(['t-4']);
    expect((await worker.describe('t-4')).attributes).toEqual({
      amount: { type: 'number', value: 42.5 },
      customer: { type: 'string', value: 'initech corp' },
    });
    const badStart = await start('--id', 't-5', '--attribute', 'amount=many');
    expect(badStart).toMatchObject({ code: exitCodes.usage, stdout: '' });
    expect(badStart.stderr).toContain(
      "start option attributes in workflow type 'tagged': attribute 'amount' is declared 'number'",
    );
    const undeclared = await start('--id', 't-5', '--attribute', 'colour=red');
    expect(undeclared.stderr).toContain("attribute 'colour' is not declared");
    await expect(worker.describe('t-5')).rejects.toThrow(/t-5/);

    for (const [where, message] of [
      ['amount>=lots', "attribute 'amount' is declared 'number' and takes a finite number; got \"lots\""],
      ['amount~3', "is not 'name op value'"],
      ['due<soon', "attribute 'due' is declared 'time'"],
    ] as const) {
      const refused = await shuttle('workflow', 'list', '--where', where);
      expect(refused, where).toMatchObject({ code: exitCodes.usage, stdout: '' });
      expect(refused.stderr).toContain(message);
    }
  });

  it('start checks the input against the definition before writing; result waits and prints it', async () => {
    const noType = await shuttle('workflow', 'start', 'greet', '--input', '{"name":"Ada"}');
    expect(noType.code).toBe(exitCodes.refused);
    expect(noType.stderr).toMatch(/^WorkflowNotRegisteredError: .*greet/);

    const openedBefore = opened;
    const badJson = await shuttle(
      'workflow',
      'start',
      'greet',
      '--workflows',
      'greet.ts',
      '--input',
      '{name: Ada}',
    );
    expect(badJson.code).toBe(exitCodes.usage);
    expect(badJson.stderr).toMatch(/^--input is not JSON \(.*\)\. Quote it for the shell/);
    expect(opened).toBe(openedBefore); // refused before the store was even opened
    expect((await worker.list()).items).toEqual([]);

    const started = await shuttle(
      'workflow',
      'start',
      'greet',
      '--workflows',
      'greet.ts',
      '--id',
      'g-7',
      '--input',
      '{"name":"Grace"}',
    );
    expect(started).toMatchObject({ code: 0, stdout: 'Started g-7 (run 1).\n' });
    const result = await shuttle('workflow', 'result', 'g-7');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ greeting: 'Hello, Grace' });

    const again = await shuttle(
      'workflow',
      'start',
      'greet',
      '--workflows',
      'greet.ts',
      '--id',
      'g-7',
      '--input',
      '{"name":"Grace"}',
    );
    expect(again.code).toBe(0); // a finished id starts its next run (idReuse 'same-type')
    expect(again.stdout).toBe('Started g-7 (run 2).\n');
    expect(opened).toBe(closed);
  });

  it('signal, describe and result: exit 1 for a workflow that failed, 5 when the wait times out, 3 for none', async () => {
    await worker.start(approval, undefined, { id: 'a-1' });
    const waiting = await shuttle('workflow', 'result', 'a-1', '--timeout', '200ms');
    expect(waiting.code).toBe(exitCodes.timedOut);
    expect(waiting.stderr).toContain("Workflow 'a-1' has not finished after 200ms");

    const described = await shuttle('workflow', 'describe', 'a-1');
    expect(described.stdout).toMatch(/^Workflow:\s+a-1$/m);
    expect(described.stdout).toMatch(/^Status:\s+running$/m);
    expect(described.stdout).toMatch(/^Owner:\s+worker-1 \(epoch \d+/m);
    expect(described.stdout).toMatch(/^Waiting on:\s+signal 'decide'/m);

    expect(await shuttle('workflow', 'signal', 'a-1', 'decide', '--payload', '{"ok":false}')).toMatchObject({
      code: 0,
      stdout: "Sent signal 'decide' to a-1.\n",
    });
    const failed = await shuttle('workflow', 'result', 'a-1');
    expect(failed.code).toBe(exitCodes.workflowDidNotComplete);
    expect(failed.stdout).toMatch(/^failed: .*rejected by the approver/);
    const failedJson = await shuttle('workflow', 'result', 'a-1', '--json');
    expect(JSON.parse(failedJson.stdout)).toMatchObject({
      status: 'failed',
      error: { message: 'rejected by the approver' },
    });

    const missing = await shuttle('workflow', 'describe', 'nobody');
    expect(missing.code).toBe(exitCodes.notFound);
    expect(missing.stderr).toMatch(/^WorkflowNotFoundError: .*nobody/);
    expect((await shuttle('workflow', 'result', 'nobody', '--timeout', '5s')).code).toBe(exitCodes.notFound);
  });

  it('timeline lists events with engine and epoch; cancel, terminate; purge needs --yes and a finished workflow', async () => {
    await worker.start(approval, undefined, { id: 'a-2' });
    await worker.start(approval, undefined, { id: 'a-3' });
    const notFinished = await shuttle('workflow', 'purge', 'a-2', '--yes');
    expect(notFinished.code).toBe(exitCodes.refused);
    expect(notFinished.stderr).toMatch(/^InvalidWorkflowStateError: /);

    expect((await shuttle('workflow', 'cancel', 'a-2', '--reason', 'customer left')).stdout).toBe(
      'Asked a-2 to cancel.\n',
    );
    expect((await shuttle('workflow', 'terminate', 'a-3', '--reason', 'stuck')).code).toBe(0);
    await expect(worker.handle('a-2').result()).rejects.toThrow();
    expect((await worker.describe('a-3')).status).toBe('terminated');

    const timeline = await shuttle('workflow', 'timeline', 'a-3');
    const [header, ...rows] = timeline.stdout.trim().split('\n');
    expect(header).toMatch(/^SEQ\s+AT\s+ENGINE\s+EPOCH\s+KIND\s+DETAIL$/);
    expect(rows.some((row) => /\sworker-1\s+\d+\s+started\s/.test(row))).toBe(true);
    expect(rows.some((row) => /\sterminated\s.*stuck/.test(row))).toBe(true);

    const unconfirmed = await shuttle('workflow', 'purge', 'a-3');
    expect(unconfirmed.code).toBe(exitCodes.usage);
    expect(unconfirmed.stderr).toBe(
      "This deletes every run of workflow 'a-3' and cannot be undone. Add --yes to do it.\n",
    );
    expect((await worker.describe('a-3')).status).toBe('terminated');
    expect((await shuttle('workflow', 'purge', 'a-3', '--yes')).code).toBe(0);
    await expect(worker.describe('a-3')).rejects.toThrow(/a-3/);
  });

  it('fork runs a workflow again from an operation, or from where it stopped; refusals exit 2, 3 and 4', async () => {
    await worker.start(approval, undefined, { id: 'a-9' });
    await worker.signal('a-9', 'decide', { ok: false });
    await expect(worker.handle('a-9').result()).rejects.toThrow(/rejected by the approver/);

    // From #0: the decision is not replayed, so run 2 waits for it again, and a worker drives it.
    const forked = await shuttle('workflow', 'fork', 'a-9', '--from', '0', '--workflows', 'approval.ts');
    expect(forked).toMatchObject({ code: 0, stdout: 'Forked a-9 run 1 from #0 into a-9 (run 2).\n' });
    await worker.recoverAll();
    await worker.signal('a-9', 'decide', { ok: true });
    expect(await worker.handle('a-9', { run: 2 }).result()).toBe('approved');

    // Terminated while it waited (#0): without --from it is forked from there, into a new id, as JSON.
    await worker.start(approval, undefined, { id: 'a-10' });
    await worker.terminate('a-10', 'stuck');
    const json = await shuttle(
      'workflow',
      'fork',
      'a-10',
      '--new-id',
      'a-10b',
      '--json',
      '--workflows',
      'approval.ts',
    );
    expect(JSON.parse(json.stdout)).toEqual({
      workflowId: 'a-10b',
      run: 1,
      forkedFrom: { id: 'a-10', run: 1, position: 0 },
    });

    const unknownType = await shuttle('workflow', 'fork', 'a-10');
    expect(unknownType.code).toBe(exitCodes.refused);
    expect(unknownType.stderr).toMatch(/^WorkflowNotRegisteredError: .*'approval' version 1/);
    const running = await shuttle('workflow', 'fork', 'a-10b', '--from', '0', '--workflows', 'approval.ts');
    expect(running.code).toBe(exitCodes.refused);
    expect(running.stderr).toMatch(
      /^InvalidWorkflowStateError: Cannot fork into the same id workflow 'a-10b': it is running/,
    );
    const tooFar = await shuttle(
      'workflow',
      'fork',
      'a-10',
      '--from',
      '7',
      '--new-id',
      'x',
      '--workflows',
      'approval.ts',
    );
    expect(tooFar.code).toBe(exitCodes.usage);
    expect(tooFar.stderr).toMatch(/resolved only 0 operation\(s\): fork from 0 to 0/);
    expect((await shuttle('workflow', 'fork', 'a-10', '--from', '-1')).code).toBe(exitCodes.usage);
    expect((await shuttle('workflow', 'fork', 'nobody', '--from', '0')).code).toBe(exitCodes.notFound);
  });

  it('replay checks the definitions against the histories of the store, or of files; exit 1 on a divergence', async () => {
    await worker.start(approval, undefined, { id: 'r-1' });
    await worker.start(approval, undefined, { id: 'r-2' });
    await worker.start(greet, { name: 'Ada' }, { id: 'r-greet' });
    await expect(worker.handle('r-greet').result()).resolves.toMatchObject({ greeting: 'Hello, Ada' });
    for (const id of ['r-1', 'r-2'])
      await vi.waitFor(async () => expect((await worker.describe(id)).pending).not.toBeNull());

    const clean = await shuttle('workflow', 'replay', '--workflows', 'approval.ts');
    expect(clean).toMatchObject({ code: 0, stdout: 'Replayed 2 histories: 2 clean, 0 diverged.\n' });
    expect(lastFlags?.memory).toBeUndefined();
    // Every status, so the finished greet is read too: its type is not among the definitions, so skipped.
    expect(
      (await shuttle('workflow', 'replay', '--workflows', 'approval.ts', '--status', 'running,completed'))
        .stdout,
    ).toBe('Replayed 2 histories: 2 clean, 0 diverged; 1 skipped (type not in the definitions).\n');

    const diverged = await shuttle('workflow', 'replay', '--workflows', 'approval-changed.ts', '--id', 'r-1');
    expect(diverged.code).toBe(exitCodes.replayDiverged);
    const [header, row, , summary] = diverged.stdout.trim().split('\n');
    expect(header).toMatch(/^WORKFLOW\s+RUN\s+TYPE\s+VERSION\s+AT\s+WHAT$/);
    expect(row).toMatch(
      /^r-1\s+1\s+approval\s+1\s+#0\s+recorded signal 'decide'; the code now yields signal 'note'$/,
    );
    expect(summary).toBe('Replayed 1 history: 0 clean, 1 diverged.');
    const json = JSON.parse(
      (await shuttle('workflow', 'replay', '--workflows', 'approval-changed.ts', '--json')).stdout,
    );
    expect(json).toMatchObject({ checked: 2, clean: 0, diverged: 2, skipped: 0 });
    expect(json.reports[0]).toMatchObject({ ok: false, problem: 'diverged', position: 0 });

    // From files, without a store: a history as JSON, an array of them; and bad files, refused in one line.
    const dir = mkdtempSync(join(tmpdir(), 'shuttle-replay-'));
    const one = join(dir, 'r-1.json');
    const both = join(dir, 'both.json');
    writeFileSync(one, JSON.stringify(await worker.history('r-1')));
    writeFileSync(both, JSON.stringify([await worker.history('r-1'), await worker.history('r-2')]));
    const fromFiles = await shuttle(
      'workflow',
      'replay',
      '--file',
      one,
      '--file',
      both,
      '--workflows',
      'approval.ts',
    );
    expect(fromFiles).toMatchObject({ code: 0, stdout: 'Replayed 3 histories: 3 clean, 0 diverged.\n' });
    expect(lastFlags?.memory).toBe(true);
    expect(
      (await shuttle('workflow', 'replay', '--file', both, '--workflows', 'approval-changed.ts')).code,
    ).toBe(exitCodes.replayDiverged);
    const notJson = join(dir, 'bad.json');
    writeFileSync(notJson, '{');
    const bad = await shuttle('workflow', 'replay', '--file', notJson, '--workflows', 'approval.ts');
    expect(bad.code).toBe(exitCodes.usage);
    expect(bad.stderr).toMatch(/^--file .*bad\.json is not JSON/);
    writeFileSync(notJson, JSON.stringify({ format: 'other' }));
    expect(
      (await shuttle('workflow', 'replay', '--file', notJson, '--workflows', 'approval.ts')).stderr,
    ).toMatch(/bad\.json is not a recorded history: format is "other", not 'shuttle-history\/1'/);
    const without = await shuttle('workflow', 'replay', '--file', one);
    expect(without.code).toBe(exitCodes.usage);
    expect(without.stderr).toMatch(/give the definitions with --workflows PATH/);
  });

  it('list --watch prints one line per workflow that appears or changes, until stopped', async () => {
    await worker.start(approval, undefined, { id: 'w-1' });
    for (let i = 0; i < 400 && (await worker.describe('w-1')).pending?.kind !== 'signal'; i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    const stop = new AbortController();
    const lines: string[] = [];
    let buffered = '';
    const watching = runOperator('workflow', ['list', '--watch', '--interval', '50ms', '--id-prefix', 'w-'], {
      stdout: (text) => {
        buffered += text;
        const parts = buffered.split('\n');
        buffered = parts.pop()!;
        lines.push(...parts);
      },
      stderr: (text) => lines.push(`stderr: ${text}`),
      now: () => Date.now(),
      signal: stop.signal,
      open: async () => {
        const engine = await createEngine({
          storage,
          workflows: [],
          ...timings,
          claimWorkflows: false,
          recover: false,
        });
        return {
          engine,
          labels: async () => new Map([[worker.id, 'worker-1']]),
          close: async () => void (await engine.shutdown()),
        };
      },
    });
    const until = async (what: string, check: () => boolean) => {
      for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      if (!check()) throw new Error(`${what}: not seen in ${JSON.stringify(lines)}`);
    };
    await until('the first page', () => lines.some((line) => line.startsWith('Watching (every 50ms')));
    expect(lines[1]).toMatch(/^w-1\s+approval\s+running/);
    await worker.start(approval, undefined, { id: 'w-2' });
    await until('w-2 appears', () =>
      lines.some((line) =>
        /Z {2}w-2 {2}approval {2}running {2}owner worker-1 {2}signal 'decide'$/.test(line),
      ),
    );
    // w-1 has not changed since the first page: no line for it (lines are printed only for changes).
    expect(lines.filter((line) => /^\d{4}-.*Z {2}w-1 /.test(line))).toEqual([]);
    await worker.signal('w-1', 'decide', { ok: true });
    await until('w-1 completes', () =>
      lines.some((line) => /Z {2}w-1 {2}approval {2}completed {2}owner - {2}-$/.test(line)),
    );
    stop.abort();
    expect(await watching).toBe(exitCodes.ok);
  });

  it('refuses a bad command line in one line with exit 2, and answers --help', async () => {
    const usage = await shuttle('workflow');
    expect(usage.code).toBe(exitCodes.usage);
    expect(usage.stdout).toContain('shuttle workflow <command> [options]');
    const help = await shuttle('workflow', 'signal', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^shuttle workflow signal <id> <name> \[options\]: /);
    expect(help.stdout).toContain('--payload JSON');
    expect(help.stdout).toContain('--database-url URL');
    expect((await shuttle('workflow', '-h')).code).toBe(0);

    const unknown = await shuttle('workflow', 'reset', 'x');
    expect(unknown).toMatchObject({ code: exitCodes.usage });
    expect(unknown.stderr).toMatch(/^Unknown command 'shuttle workflow reset'\. Commands: list, describe/);
    const arity = await shuttle('workflow', 'signal', 'a-1');
    expect(arity.stderr).toBe("shuttle workflow signal takes <id> <name>; got 'a-1'.\n");
    const flag = await shuttle('workflow', 'list', '--colour');
    expect(flag.code).toBe(exitCodes.usage);
    expect(flag.stderr).toMatch(
      /^shuttle workflow list: Unknown option '--colour'\. Run 'shuttle workflow list --help'/,
    );
    const store = await shuttle('workflow', 'list', '--database-url', 'mysql://x');
    expect(store).toMatchObject({
      code: exitCodes.usage,
      stderr: "--database-url must be a PostgreSQL URL; got 'mysql://x'.\n",
    });
    expect(opened).toBe(0);
  });
});

describe('shuttle schedule', () => {
  it('create, list, describe, pause, resume, trigger and delete (with --yes)', async () => {
    expect((await shuttle('schedule', 'list')).stdout).toBe('No schedules.\n');
    // create: required flags and the engine's own checks first, nothing written.
    const noCron = await shuttle('schedule', 'create', 'nightly', '--workflow', 'greet');
    expect(noCron).toMatchObject({
      code: exitCodes.usage,
      stderr: "--cron is required, e.g. --cron '0 9 * * *'.\n",
    });
    const badCron = await shuttle('schedule', 'create', 'nightly', '--cron', 'daily', '--workflow', 'greet');
    expect(badCron.code).toBe(exitCodes.usage);
    expect(badCron.stderr).toMatch(/^InvalidScheduleError: Invalid cron "daily"/);
    const badOverlap = await shuttle(
      'schedule',
      'create',
      'nightly',
      '--cron',
      '0 3 * * *',
      '--workflow',
      'greet',
      '--overlap',
      'queue',
    );
    expect(badOverlap.stderr).toMatch(
      /^InvalidScheduleError: Unknown overlap "queue"; use 'skip', 'buffer-one', 'allow'/,
    );
    expect(await worker.schedules()).toEqual([]);
    const nightly = [
      'create',
      'nightly',
      '--cron',
      '0 3 * * *',
      '--workflow',
      'greet',
      '--input',
      '{"name":"night"}',
      '--execution-timeout',
      '1h',
      '--workflows',
      'greet.ts',
    ];
    const created = await shuttle('schedule', ...nightly);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^Schedule 'nightly': 0 3 \* \* \* \(UTC\) starts greet; next \d{4}-/);
    expect((await worker.describeSchedule('nightly')).spec).toMatchObject({
      input: { name: 'night' },
      startOptions: { executionTimeoutMs: 3_600_000 },
    });
    // The same spec again changes nothing; another one needs --replace.
    expect((await shuttle('schedule', ...nightly)).code).toBe(0);
    const other = await shuttle(
      'schedule',
      'create',
      'nightly',
      '--cron',
      '0 4 * * *',
      '--workflow',
      'greet',
      '--workflows',
      'greet.ts',
    );
    expect(other.code).toBe(exitCodes.refused);
    expect(other.stderr).toMatch(/^ScheduleExistsError: /);
    const listed = await shuttle('schedule', 'list');
    expect(listed.stdout).toMatch(/^NAME\s+CRON\s+TIME ZONE\s+WORKFLOW\s+STATE\s+NEXT\s+RUNNING$/m);
    expect(listed.stdout).toMatch(/^nightly\s+0 3 \* \* \*\s+\S+\s+greet\s+active\s+\d{4}-/m);
    expect((await shuttle('schedule', 'pause', 'nightly')).stdout).toBe("Paused schedule 'nightly'.\n");
    expect((await worker.describeSchedule('nightly')).paused).toBe(true);
    expect((await shuttle('schedule', 'describe', 'nightly')).stdout).toMatch(/^State:\s+paused since /m);
    expect((await shuttle('schedule', 'resume', 'nightly')).code).toBe(0);
    const unknown = await shuttle('schedule', 'trigger', 'nightly');
    expect(unknown.code).toBe(exitCodes.refused);
    expect(unknown.stderr).toMatch(
      /^WorkflowNotRegisteredError: .*'greet'.* Here: give the file that defines it with --workflows PATH/,
    );
    const triggered = await shuttle('schedule', 'trigger', 'nightly', '--workflows', 'greet.ts', '--json');
    expect(triggered.stderr).toBe('');
    const { workflowId } = JSON.parse(triggered.stdout) as { workflowId: string };
    expect(await worker.handle(workflowId).result()).toEqual({ greeting: 'Hello, night' });
    expect((await shuttle('schedule', 'delete', 'nightly')).code).toBe(exitCodes.usage);
    expect((await shuttle('schedule', 'delete', 'nightly', '--yes')).code).toBe(0);
    expect((await shuttle('schedule', 'describe', 'nightly')).code).toBe(exitCodes.notFound);
  });
});

describe('shuttle queue, and workflow start onto a queue', () => {
  const admitted = (id: string) =>
    vi.waitFor(async () => expect((await worker.queuePosition(id))?.status).toBe('admitted'), {
      timeout: 5_000,
    });

  it('start --queue/--concurrency-key/--priority says where it waits; queue list and describe show limits, holders, who waits next and each key; describe shows the position', async () => {
    const start = (id: string, ...flags: string[]) =>
      shuttle('workflow', 'start', 'charge', '--workflows', 'charge.ts', '--id', id, ...flags);
    const first = await start('c-1', '--concurrency-key', 'acme');
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(
      /^Started c-1 \(run 1\)\. (It waits in queue 'payments' at position 1|Queue 'payments' admitted it \(slot 0\))\.\n$/,
    );
    await admitted('c-1');
    // Its key is full (and the queue): it waits, first in line by its priority.
    expect(
      (await start('c-2', '--queue', 'payments', '--concurrency-key', 'acme', '--priority', '2')).stdout,
    ).toBe("Started c-2 (run 1). It waits in queue 'payments' at position 1.\n");
    expect((await start('c-3', '--concurrency-key', 'zeta')).stdout).toBe(
      "Started c-3 (run 1). It waits in queue 'payments' at position 2.\n",
    );

    // Without --workflows: the queue as the worker declared it in the store.
    const listed = await shuttle('queue', 'list');
    expect(listed.code).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+LIMITS\s+RUNNING\s+WAITING\s+NEXT WAITED\s+RATE$/);
    expect(row).toMatch(
      /^payments\s+concurrency 1, per key 1, rate 10\/1m\s+1\/1\s+2\s+\d+(ms|s)\s+1\/10 per 1m$/,
    );
    const json = JSON.parse((await shuttle('queue', 'list', '--json')).stdout) as {
      name: string;
      running: number;
      waiting: number;
    }[];
    expect(json).toEqual([expect.objectContaining({ name: 'payments', running: 1, waiting: 2 })]);

    const described = await shuttle('queue', 'describe', 'payments');
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/^Limits:\s+concurrency 1, per key 1, rate 10\/1m$/m);
    expect(described.stdout).toMatch(/^Running:\s+1 of 1$/m);
    expect(described.stdout).toMatch(/^Rate:\s+1 of 10 admissions used in the last 1m$/m);
    expect(described.stdout).toMatch(
      /Slot holders:\nSLOT\s+WORKFLOW\s+SINCE\s+ADMITTED BY\n0\s+c-1\s+\S+ ago\s+worker-1$/m,
    );
    expect(described.stdout).toMatch(
      /Next waiting, in admission order:\n#\s+WORKFLOW\s+TYPE\s+KEY\s+NOT BEFORE\n1\s+c-2\s+charge\s+acme\s+-\n2\s+c-3\s+charge\s+zeta\s+-$/m,
    );
    expect(described.stdout).toMatch(
      /By concurrency key \(at most 1 running each\):\nKEY\s+RUNNING\s+WAITING\n/,
    );
    expect(described.stdout).toMatch(/^acme\s+1\s+1$/m);
    expect(described.stdout).toMatch(/^zeta\s+0\s+1$/m);
    // show is describe; --json is the engine's view.
    const durationless = (text: string) => text.replace(/\d+(ms|s)\b/g, 'T');
    expect(durationless((await shuttle('queue', 'show', 'payments')).stdout)).toBe(
      durationless(described.stdout),
    );
    const view = JSON.parse((await shuttle('queue', 'show', 'payments', '--json')).stdout);
    // (drivenHere is the answering engine's own count: the command's observer drives none.)
    expect({ ...view, drivenHere: 1 }).toEqual(await worker.describeQueue('payments'));
    const missing = await shuttle('queue', 'describe', 'refunds');
    expect(missing.code).toBe(exitCodes.notFound);
    expect(missing.stderr).toMatch(
      /^QueueNotFoundError: Queue 'refunds' is not declared.*'shuttle queue list' lists/,
    );

    // workflow describe: where it stands.
    expect((await shuttle('workflow', 'describe', 'c-2')).stdout).toMatch(
      /^Queue:\s+payments: waiting, position 1 \(1 = admitted next\), for \S+; priority 2, key 'acme'$/m,
    );
    expect((await shuttle('workflow', 'describe', 'c-1')).stdout).toMatch(
      /^Queue:\s+payments: admitted \S+ ago \(slot 0\) after waiting \S+; priority 5, key 'acme'$/m,
    );
    const asJson = JSON.parse((await shuttle('workflow', 'describe', 'c-3', '--json')).stdout);
    expect(asJson.queuePosition).toMatchObject({ queue: 'payments', status: 'waiting', position: 2 });
    expect((await shuttle('workflow', 'describe', 'a-none', '--json')).code).toBe(exitCodes.notFound);

    // c-1 done: c-2 (the same key, first in line) takes the slot; c-3 still waits, now first.
    await worker.signal('c-1', 'done');
    await admitted('c-2');
    expect((await shuttle('workflow', 'describe', 'c-3')).stdout).toMatch(
      /^Queue:\s+payments: waiting, position 1 /m,
    );
    expect((await shuttle('workflow', 'describe', 'c-1')).stdout).toMatch(
      /^Queue:\s+payments: waited \S+; priority 5/m,
    );
    for (const id of ['c-2', 'c-3']) await worker.terminate(id);
    const empty = await shuttle('queue', 'list');
    expect(empty.stdout).toMatch(/^payments\s+.*\s+0\/1\s+0\s+-\s+/m);
  });

  it('list: a second table, ACTIVITY LIMITS, of the slots held in the store now with their holders (limits are not stored: ?); activity-limits alone, --json', async () => {
    // Nothing held: no second table.
    expect((await shuttle('queue', 'list')).stdout).not.toMatch(/ACTIVITY LIMITS/);
    expect((await shuttle('queue', 'activity-limits')).stdout).toMatch(/^No activity slots held/);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const card = defineWorkflow({
      name: 'card',
      version: 1,
      *run(ctx) {
        return yield* ctx.activity('charge-card', () => gate.then(() => 'charged'));
      },
    });
    const runner = await createEngine({
      storage,
      workflows: [card],
      activityLimits: { 'charge-card': { concurrency: 1 } },
      ...timings,
    });
    try {
      for (const id of ['k-1', 'k-2']) await runner.start(card, undefined, { id });
      const held = async () => {
        for (;;) {
          const [group] = await runner.activityLimits();
          if (group?.running.length === 1 && group.waitingHere === 1) return group.running[0]!.workflowId;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const holder = await held();
      const listed = await shuttle('queue', 'list');
      expect(listed.code).toBe(0);
      const section = listed.stdout.slice(listed.stdout.indexOf('ACTIVITY LIMITS'));
      expect(section).toMatch(/^ACTIVITY LIMITS \(slots held in the store now; \? = limits declared in code/);
      expect(section).toMatch(/\nGROUP\s+CONCURRENCY\s+PER ENGINE\s+RUNNING\s+HOLDERS\n/);
      expect(section).toMatch(
        new RegExp(`^charge-card\\s+\\?\\s+\\?\\s+1\\s+${holder}@${runner.id.slice(0, 8)}$`, 'm'),
      );
      // --json of list stays the queues; activity-limits --json is the groups as seen from the store.
      expect(JSON.parse((await shuttle('queue', 'list', '--json')).stdout)).toEqual([
        expect.objectContaining({ name: 'payments' }),
      ]);
      const json = JSON.parse((await shuttle('queue', 'activity-limits', '--json')).stdout);
      expect(json).toEqual([
        {
          name: 'charge-card',
          concurrency: null,
          perEngine: null,
          running: [expect.objectContaining({ engineId: runner.id, workflowId: holder, attempt: 1 })],
          runningHere: 0,
          waitingHere: 0,
          declared: false,
        },
      ]);
    } finally {
      open();
      await runner.shutdown();
    }
    expect((await shuttle('queue', 'list')).stdout).not.toMatch(/ACTIVITY LIMITS/);
  });

  it('singleton and debounce starts: join prints the active one, refuse exits 4; a debounced repeat takes the new input', async () => {
    const start = (...flags: string[]) =>
      shuttle('workflow', 'start', 'charge', '--workflows', 'charge.ts', ...flags);
    expect((await start('--id', 's-1', '--singleton', 'nightly')).code).toBe(0);
    const joined = await start('--id', 's-2', '--singleton', 'nightly');
    expect(joined.code).toBe(0);
    expect(joined.stdout).toMatch(
      /^Not started: singleton key 'nightly' belongs to s-1 \(run 1\), which is still active\./,
    );
    const refused = await start('--id', 's-3', '--singleton', 'nightly', '--if-active', 'refuse');
    expect(refused.code).toBe(exitCodes.refused);
    expect(refused.stderr).toMatch(
      /^SingletonConflictError: Singleton key 'nightly' belongs to workflow 's-1'/,
    );
    await expect(worker.describe('s-3')).rejects.toThrow(/s-3/);

    const debounced = (input: string) =>
      start('--id', 'd-1', '--debounce', 'cust-7:1m', '--input', input, '--json');
    expect(JSON.parse((await debounced('{"n":1}')).stdout)).toMatchObject({
      workflowId: 'd-1',
      started: true,
    });
    const again = await shuttle(
      'workflow',
      'start',
      'charge',
      '--workflows',
      'charge.ts',
      '--debounce',
      'cust-7:60000',
      '--input',
      '{"n":2}',
    );
    expect(again.stdout).toMatch(
      /^Debounced: d-1 \(run 1\) was waiting with key 'cust-7'; it takes this input/,
    );
    expect((await worker.describe('d-1')).input).toEqual({ n: 2 });
    for (const id of ['s-1', 'd-1']) await worker.terminate(id);
  });

  it("refuses bad queue flags in the engine's words (exit 2) before it opens the store", async () => {
    const start = (...flags: string[]) =>
      shuttle('workflow', 'start', 'charge', '--workflows', 'charge.ts', '--id', 'bad-1', ...flags);
    const engineWords = (options: Parameters<typeof validateQueueStart>[0]) => {
      try {
        validateQueueStart(options);
      } catch (error) {
        return `InvalidOptionsError: ${(error as Error).message}\n`;
      }
      throw new Error('accepted');
    };
    expect(await start('--priority', '0')).toMatchObject({
      code: exitCodes.usage,
      stderr: engineWords({ priority: 0 }),
    });
    expect((await start('--priority', 'high')).stderr).toBe(engineWords({ priority: 'high' as never }));
    expect((await start('--queue', 'pay ments')).stderr).toBe(engineWords({ queue: 'pay ments' }));
    expect((await start('--singleton', 'k', '--if-active', 'wait')).stderr).toBe(
      engineWords({ singleton: { key: 'k', ifActive: 'wait' as never } }),
    );
    expect((await start('--singleton', 'k', '--debounce', 'k:5s')).stderr).toBe(
      engineWords({ singleton: { key: 'k' }, debounce: { key: 'k', windowMs: 5000 } }),
    );
    expect((await start('--debounce', 'k:5s', '--debounce-max-wait', '1s')).stderr).toBe(
      engineWords({ debounce: { key: 'k', windowMs: 5000, maxWaitMs: 1000 } }),
    );
    const noWindow = await start('--debounce', 'cust-7');
    expect(noWindow).toMatchObject({ code: exitCodes.usage });
    expect(noWindow.stderr).toMatch(/^--debounce must be KEY:WINDOW/);
    expect((await start('--debounce', 'cust-7:soon')).stderr).toMatch(
      /^--debounce must be a duration like 30d/,
    );
    expect((await start('--if-active', 'refuse')).stderr).toMatch(
      /^--if-active .* give it with --singleton KEY/,
    );
    expect(opened).toBe(0);
    // A queue option on a type without a queue: the engine refuses it, nothing started.
    const unqueued = await shuttle(
      'workflow',
      'start',
      'greet',
      '--workflows',
      'greet.ts',
      '--id',
      'g-q',
      '--priority',
      '1',
      '--input',
      '{"name":"x"}',
    );
    expect(unqueued.code).toBe(exitCodes.usage);
    expect(unqueued.stderr).toMatch(/^InvalidOptionsError: start option priority needs a queue/);
    // A queue the given modules do not declare: the engine's words, and where the declaration comes from here.
    const undeclared = await shuttle(
      'workflow',
      'start',
      'greet',
      '--workflows',
      'greet.ts',
      '--input',
      '{"name":"x"}',
      '--queue',
      'payments',
    );
    expect(undeclared.code).toBe(exitCodes.usage);
    expect(undeclared.stderr).toMatch(
      /^InvalidOptionsError: Queue 'payments' is not declared on this engine.* Here: give the module that declares it .* with --workflows/,
    );
    await expect(worker.describe('g-q')).rejects.toThrow(/g-q/);
    expect((await shuttle('queue', '--help')).stdout).toMatch(
      /^ {2}list +List the queues.*\n {2}describe +A queue's limits.*\n {2}show +The same as describe\.$/m,
    );
  });
});
