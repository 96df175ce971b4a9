/**
 * The studio protocol's claim calls and idempotent start, end to end through a worker host and the client
 * (the console API): `claimHolder`, `reclaim` (taken over only from an expired or dead holder, refused by a
 * viewer with `ObserverCannotClaimError`), and `startRun` saying whether an idempotency key returned an
 * earlier start's run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage';
import { builtInWorkflows } from '../workflows';
import { ListingLiveness, openTestTab, sharedStorage, type TestTab } from './host.test-support';

const tabs: TestTab[] = [];

/**
 * Claim timings so long that nothing but the call under test moves a workflow: renewals (and with them the
 * reclaim passes) every 15 s, and no death watch.
 */
const slowClaims = { workflowClaimTtlMs: 60_000, workflowClaimRenewIntervalMs: 15_000 };

function open(
  storage: MemoryStorage,
  liveness: ListingLiveness,
  options: { mode?: 'engine' | 'viewer'; host?: Parameters<typeof openTestTab>[0]['host'] } = {},
): TestTab {
  const tab = openTestTab({
    workflows: builtInWorkflows,
    storage: sharedStorage(storage),
    liveness,
    ...(options.mode ? { mode: options.mode } : {}),
    host: { ...slowClaims, ...options.host },
  });
  tabs.push(tab);
  return tab;
}

afterEach(async () => {
  await Promise.all(tabs.splice(0).map((tab) => tab.close()));
});

async function until<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The built-in approval's input: it waits up to two minutes for a decision. */
const approvalInput = {
  requestId: 'EXP-1',
  requester: 'grace',
  summary: 'Conference travel',
  amountCents: 1_000,
  approvers: ['ada', 'linus'],
  timeoutMs: 120_000,
};

/** Resolves once the approval has notified its approvers and waits for a decision. */
async function waitingForDecision(tab: TestTab, workflowId: string): Promise<void> {
  await until(
    () => tab.client.timeline(workflowId),
    (timeline) => timeline.some((entry) => entry.kind === 'activity-completed'),
  );
}

async function running(tab: TestTab): Promise<void> {
  await until(
    async () => (await tab.client.hello()).status.state,
    (state) => state === 'running',
  );
}

describe('worker host: claimHolder and reclaim', () => {
  it('refuses to take a workflow from a live holder, and takes it over once that holder is dead', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open(storage, liveness);
    const b = open(storage, liveness);
    await Promise.all([running(a), running(b)]);
    // An approval waiting for a decision: no timer falls due during the test, so nothing but the calls
    // under test moves it (a due timer or message would have B take a dead holder's workflow by itself).
    const id = await a.client.start('approval', approvalInput);
    await waitingForDecision(a, id);

    const held = await b.client.claimHolder(id);
    expect(held).toMatchObject({ engineId: a.host.engineId, epoch: 1, live: true });
    expect(held!.expiresAt).toBeGreaterThan(Date.now());
    const refused = await b.client.reclaim(id);
    expect(refused).toEqual({ outcome: 'held-live', holder: expect.objectContaining({ live: true }) });
    if (refused.outcome === 'held-live') expect(refused.holder.engineId).toBe(a.host.engineId);
    expect(await a.client.reclaim(id)).toEqual({ outcome: 'already-held', epoch: 1 });
    expect((await b.client.describe(id)).owner).toMatchObject({ engineId: a.host.engineId, epoch: 1 });

    a.channel.worker.terminate(); // A's worker dies: its liveness hold and its storage go with it
    // Its claim is nowhere near its expiry: only the liveness oracle says it is dead.
    const dead = await b.client.claimHolder(id);
    expect(dead).toMatchObject({ engineId: a.host.engineId, epoch: 1, live: false });
    expect(dead!.expiresAt).toBeGreaterThan(Date.now() + 30_000);

    expect(await b.client.reclaim(id)).toEqual({ outcome: 'taken-over', epoch: 2 });
    expect(await b.client.claimHolder(id)).toMatchObject({
      engineId: b.host.engineId,
      epoch: 2,
      live: true,
    });
    expect(await b.client.ownedWorkflows()).toContain(id);
    const timeline = await b.client.timeline(id);
    expect(timeline.find((entry) => entry.kind === 'claim-taken-over')?.detail).toMatchObject({
      fromEngineId: a.host.engineId,
      toEngineId: b.host.engineId,
      toEpoch: 2,
      reason: 'holder-dead',
    });
    // B drives it on: a decision sent now is applied by B, and the approval completes.
    await b.client.update(id, 'approve', { by: 'ada' });
    const done = await b.client.waitFor(id, 'completed', { timeoutMs: 5_000 });
    expect(done).toMatchObject({ epoch: 2, result: { status: 'approved', decidedBy: 'ada' } });
  });

  it('says nobody holds a finished workflow (nothing to reclaim), and refuses unknown ids by name', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open(storage, liveness);
    await running(a);
    const id = await a.client.start('countdown', { from: 1, tickMs: 5 });
    await a.client.waitFor(id, 'completed', { timeoutMs: 5_000 });
    expect(await a.client.claimHolder(id)).toBeNull();
    expect(await a.client.reclaim(id)).toEqual({ outcome: 'not-running' });
    await expect(a.client.claimHolder('no-such-workflow')).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
      workflowId: 'no-such-workflow',
    });
    await expect(a.client.reclaim('no-such-workflow')).rejects.toMatchObject({
      name: 'WorkflowNotFoundError',
    });
  });

  it('a viewer reads the claim holder but refuses to reclaim with ObserverCannotClaimError, even from a dead holder', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open(storage, liveness);
    const viewer = open(storage, liveness, { mode: 'viewer' });
    await Promise.all([running(a), running(viewer)]);
    const id = await a.client.start('approval', approvalInput);
    await waitingForDecision(a, id);
    expect(await viewer.client.claimHolder(id)).toMatchObject({ engineId: a.host.engineId, live: true });

    a.channel.worker.terminate();
    expect(await viewer.client.claimHolder(id)).toMatchObject({ engineId: a.host.engineId, live: false });
    const refusal = viewer.client.reclaim(id);
    await expect(refusal).rejects.toMatchObject({
      name: 'ObserverCannotClaimError',
      workflowId: id,
      engineId: viewer.host.engineId,
    });
    await expect(refusal).rejects.toThrow(
      /viewer \(\?engine=off\).*cannot take .* over.*without \?engine=off/,
    );
    // Nothing was written: the dead holder still holds it.
    expect((await viewer.client.describe(id)).owner).toMatchObject({ engineId: a.host.engineId, epoch: 1 });
  });

  it('the studio server’s observer refuses to reclaim and says the workers take it over', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open(storage, liveness);
    const server = open(storage, liveness, {
      mode: 'viewer',
      host: { runtime: { kind: 'server', hostName: 'studio-host', pid: 4242 } },
    });
    await Promise.all([running(a), running(server)]);
    const id = await a.client.start('countdown', { from: 200, tickMs: 20 });
    await expect(server.client.reclaim(id)).rejects.toMatchObject({
      name: 'ObserverCannotClaimError',
      message: expect.stringMatching(/studio server's engine is an observer.*shuttle worker/),
    });
  });
});

describe('worker host: idempotent start', () => {
  it('a repeated idempotency key returns the first start’s run with started: false, and creates nothing', async () => {
    const storage = new MemoryStorage();
    const liveness = new ListingLiveness();
    const a = open(storage, liveness);
    const b = open(storage, liveness);
    await Promise.all([running(a), running(b)]);
    const first = await a.client.startRun('countdown', { from: 50, tickMs: 20 }, { idempotencyKey: 'k-1' });
    expect(first).toMatchObject({ run: 1, started: true });
    // Another tab, another id asked for: the key wins, and says so.
    const again = await b.client.startRun(
      'countdown',
      { from: 3 },
      { id: 'other-id', idempotencyKey: 'k-1' },
    );
    expect(again).toEqual({ workflowId: first.workflowId, run: 1, started: false });
    expect(await b.client.start('countdown', {}, { idempotencyKey: 'k-1' })).toBe(first.workflowId);
    const listed = await a.client.list({});
    expect(listed.items.map((item) => item.workflowId)).toEqual([first.workflowId]);
    await expect(a.client.describe('other-id')).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
    await expect(
      a.client.startRun('countdown', {}, { idempotencyKey: 'x'.repeat(201) }),
    ).rejects.toMatchObject({ name: 'InvalidOptionsError' });
  });
});

describe('console help', () => {
  it('lists claimHolder and reclaim with what they answer', async () => {
    const tab = open(new MemoryStorage(), new ListingLiveness());
    const lines: string[] = [];
    const original = console.log;
    console.log = (text: string) => lines.push(text);
    try {
      tab.client.help();
    } finally {
      console.log = original;
    }
    const help = lines.join('\n');
    expect(help).toMatch(/claimHolder\(id\).*\{ engineId, epoch, expiresAt, live \} or null/);
    expect(help).toMatch(/reclaim\(id\).*only if its holder is expired or dead/);
    expect(help).toMatch(/idempotencyKey\?/);
  });
});
