/**
 * A CPU profile of the 50-workflow throughput measurement in the bench worker, through the Chromium DevTools
 * protocol: `npx tsx bench/browser/profile.ts [--no-build] [--measurements n] [--steps n] [--workflows n]
 * [--tree <checkout>] [--cpu]` (`--tree`: profile another checkout's engine, e.g. an older commit with this
 * harness's bench/browser copied in; `--cpu`: no profiler, but the CPU time Chromium's processes spent per
 * step, from /proc, which a busy machine disturbs much less than it disturbs rates).
 *
 * Builds bench.html unminified (so function names survive) into `bench/.build/profile-app`, serves it with
 * `vite preview`, opens bench.html in Chromium, attaches to the bench worker as it starts (paused until the
 * Profiler domain is enabled), and calls `shuttleBench.profile`: one warm-up, then the measurements between
 * `console.profile` and `console.profileEnd` in the worker. Writes the raw profile to
 * `bench/.build/parallel.cpuprofile` (open it in DevTools' Performance panel) and prints where the worker's
 * time went: self time by category (idle, i.e. waiting for IndexedDB; IndexedDB requests and transactions;
 * the storage adapter; the engine; garbage collection; …, from the module each bundled line came from) and
 * self and total time by function.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type CDPSession } from '@playwright/test';
import { build } from 'vite';
import { chromiumArgs, resolveChromium } from '../../e2e/fixtures/chromium';
import type { EngineSample, ProfileOptions } from './protocol';

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
};
type CpuProfile = {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
};

const root = fileURLToPath(new URL('../..', import.meta.url));
const appDir = path.join(root, 'bench', '.build', 'profile-app');
const viteBin = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

/** `--tree <dir>`: build bench.html from another checkout (with this harness's bench/browser), to compare. */
function tree(): string {
  const index = process.argv.indexOf('--tree');
  return index >= 0 ? path.resolve(process.argv[index + 1]!) : root;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForServer(url: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`vite preview did not serve ${url}`);
}

/**
 * Attaches to every dedicated worker the page starts, paused, enables the Profiler there and lets it run;
 * collects every profile a worker finishes with `console.profileEnd`.
 */
function profileWorkers(session: CDPSession): CpuProfile[] {
  let nextId = 1;
  const profiles: CpuProfile[] = [];
  {
    const send = (sessionId: string, method: string, params: object = {}) =>
      session
        .send('Target.sendMessageToTarget', {
          sessionId,
          message: JSON.stringify({ id: nextId++, method, params }),
        })
        .catch(() => undefined);
    session.on('Target.attachedToTarget', (event) => {
      const { sessionId, targetInfo } = event;
      if (targetInfo.type !== 'worker') {
        void send(sessionId, 'Runtime.runIfWaitingForDebugger');
        return;
      }
      void (async () => {
        await send(sessionId, 'Profiler.enable');
        await send(sessionId, 'Profiler.setSamplingInterval', { interval: 200 });
        await send(sessionId, 'Runtime.runIfWaitingForDebugger');
      })();
    });
    session.on('Target.receivedMessageFromTarget', (event) => {
      const message = JSON.parse(event.message) as { method?: string; params?: { profile?: CpuProfile } };
      if (message.method === 'Profiler.consoleProfileFinished' && message.params?.profile)
        profiles.push(message.params.profile);
    });
    void session.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: false,
    });
  }
  return profiles;
}

/** Several profiles as one (their nodes renumbered apart), for a summary over all of them. */
function mergeProfiles(profiles: readonly CpuProfile[]): CpuProfile {
  const merged: CpuProfile = { nodes: [], startTime: 0, endTime: 0, samples: [], timeDeltas: [] };
  let offset = 0;
  for (const profile of profiles) {
    let maxId = 0;
    for (const node of profile.nodes) {
      merged.nodes.push({
        ...node,
        id: node.id + offset,
        ...(node.children ? { children: node.children.map((child) => child + offset) } : {}),
      });
      maxId = Math.max(maxId, node.id);
    }
    for (const sample of profile.samples) merged.samples.push(sample + offset);
    // timeDeltas[i] is the time before sample i; the first one of each profile counts from its start.
    profile.timeDeltas.forEach((delta, index) => merged.timeDeltas.push(index === 0 ? 0 : delta));
    merged.endTime += profile.endTime - profile.startTime;
    offset += maxId;
  }
  return merged;
}

/**
 * CPU time (ms) used so far by this process's descendants — the Chromium it launched — by process type
 * (`browser`: the browser process, which runs IndexedDB's backend; `renderer`: the page and the bench worker),
 * from /proc. Linux only: elsewhere null.
 */
function chromiumCpuMs(): Record<string, number> | null {
  if (!existsSync('/proc/self/stat')) return null;
  const parents = new Map<string, string>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name)))
    try {
      parents.set(pid, /^\d+ \(.*\) \S (\d+)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))![1]!);
    } catch {
      // gone meanwhile
    }
  const ours = new Set([String(process.pid)]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of parents)
      if (!ours.has(pid) && ours.has(parent)) {
        ours.add(pid);
        grew = true;
      }
  }
  ours.delete(String(process.pid));
  const byType: Record<string, number> = {};
  const ticksPerMs = 100 / 1000; // USER_HZ
  for (const pid of ours)
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!command.includes('chrom')) continue;
      const type = /--type=([a-z-]+)/.exec(command)?.[1] ?? 'browser';
      byType[type] = (byType[type] ?? 0) + (Number(fields[11]) + Number(fields[12])) / ticksPerMs;
    } catch {
      // gone meanwhile
    }
  return byType;
}

/** The module each line of a bundle belongs to, from the `// <path>` line the bundler puts before each. */
function modulesOf(bundle: string): (line: number) => string {
  const starts: { line: number; module: string }[] = [];
  bundle.split('\n').forEach((text, line) => {
    const match = /^\/\/ (?:\S*?\/)?((?:src|bench|node_modules)\/\S+)$/.exec(text);
    if (match) starts.push({ line, module: match[1]! });
  });
  return (line) => {
    let module = '?';
    for (const start of starts) if (start.line <= line) module = start.module;
    return module;
  };
}

/** What a profile node's self time is spent on, in the categories bench/README.md reports. */
function categoryOf(node: ProfileNode, moduleAt: (url: string, line: number) => string): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) {
    if (functionName === '(idle)') return 'idle (waiting for IndexedDB)';
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (['put', 'add', 'get', 'getAll', 'delete', 'openCursor', 'continue'].includes(functionName))
      return 'IndexedDB requests (native)';
    if (functionName === 'transaction') return 'IndexedDB transactions (native)';
    if (functionName === 'postMessage') return 'change feed (BroadcastChannel postMessage)';
    return 'other native / program';
  }
  const module = moduleAt(url, lineNumber);
  if (module.startsWith('src/storage/')) return 'storage adapter (src/storage)';
  if (module.startsWith('src/engine/run/')) return 'engine: runs (src/engine/run)';
  if (module.startsWith('src/engine/')) return 'engine: other (src/engine)';
  if (module.includes('dexie')) return 'Dexie';
  if (module.startsWith('bench/')) return 'bench harness';
  return `other (${module})`;
}

/** Where the time went: per category and per function (self and total), and the special nodes V8 reports. */
export function summarizeProfile(
  profile: CpuProfile,
  moduleAt: (url: string, line: number) => string = () => '?',
  top = 25,
) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url ? url.slice(url.lastIndexOf('/') + 1).replace(/-[\w-]{8}\.js$/, '.js') : '';
    return `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ' (native)'}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const categories = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, index) => {
    const ms = (profile.timeDeltas[index + 1] ?? 0) / 1000;
    totalMs += ms;
    const node = byId.get(id)!;
    self.set(label(node), (self.get(label(node)) ?? 0) + ms);
    const category = categoryOf(node, moduleAt);
    categories.set(category, (categories.get(category) ?? 0) + ms);
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const name = label(byId.get(current)!);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + ms);
    }
  });
  const rank = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: Math.round((ms / totalMs) * 1000) / 10 }));
  const special = (name: string) => Math.round(self.get(`${name} (native)`) ?? 0);
  return {
    totalMs: Math.round(totalMs),
    idleMs: special('(idle)'),
    programMs: special('(program)'),
    garbageCollectorMs: special('(garbage collector)'),
    categories: rank(categories),
    self: rank(self),
    total: rank(total),
  };
}

async function main(): Promise<void> {
  const options: ProfileOptions = {
    workflows: argument('--workflows', 50),
    steps: argument('--steps', 60),
    measurements: argument('--measurements', 3),
  };
  if (!process.argv.includes('--no-build')) {
    process.stderr.write('[profile] building bench.html unminified into bench/.build/profile-app\n');
    await build({
      root: tree(),
      configFile: false,
      logLevel: 'warn',
      worker: { format: 'es' },
      build: {
        target: 'es2022',
        minify: false,
        outDir: appDir,
        emptyOutDir: true,
        rolldownOptions: { input: { bench: path.join(tree(), 'bench.html') } },
      },
    });
  }
  const port = await freePort();
  const server = spawn(
    process.execPath,
    [viteBin, 'preview', '--outDir', appDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const browser = await chromium.launch({ executablePath: resolveChromium(), args: [...chromiumArgs] });
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForServer(`${baseUrl}/bench.html`);
    const page = await browser.newPage();
    page.on('console', (message) => {
      if (message.text().startsWith('[shuttle bench]'))
        process.stderr.write(`[profile] ${message.text().slice('[shuttle bench] '.length)}\n`);
    });
    await page.goto(`${baseUrl}/bench.html`);
    await page.waitForFunction(() => window.shuttleBench !== undefined);
    if (process.argv.includes('--cpu')) {
      const before = chromiumCpuMs();
      const samples: EngineSample[] = await page.evaluate((o) => window.shuttleBench!.profile(o), options);
      const after = chromiumCpuMs();
      // Every step the worker took, the unprofiled warm-up's included, as the CPU covers it too.
      const steps =
        samples.reduce((sum, sample) => sum + sample.operations, 0) +
        options.workflows * Math.max(4, Math.round(options.steps / 4));
      const perStep =
        before && after
          ? Object.fromEntries(
              Object.keys(after).map((type) => [
                type,
                Math.round(((after[type]! - (before[type] ?? 0)) * 1000) / steps),
              ]),
            )
          : null;
      console.log(
        JSON.stringify({
          options,
          perSecond: samples.map((sample) => Math.round(sample.perSecond)),
          cpuMicrosecondsPerStep: perStep,
        }),
      );
      return;
    }
    const session = await page.context().newCDPSession(page);
    const profiles = profileWorkers(session);
    const samples: EngineSample[] = await page.evaluate((o) => window.shuttleBench!.profile(o), options);
    for (let wait = 0; profiles.length < options.measurements && wait < 50; wait++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const profile = mergeProfiles(profiles);
    const file = path.join(root, 'bench', '.build', 'parallel.cpuprofile');
    writeFileSync(file, JSON.stringify(profile));
    const bundles = new Map<string, (line: number) => string>();
    const moduleAt = (url: string, line: number) => {
      let modules = bundles.get(url);
      if (!modules) {
        const local = path.join(appDir, new URL(url).pathname);
        modules = existsSync(local) ? modulesOf(readFileSync(local, 'utf8')) : () => '?';
        bundles.set(url, modules);
      }
      return modules(line);
    };
    const summary = summarizeProfile(profile, moduleAt);
    console.log(
      JSON.stringify(
        {
          options,
          samples: samples.map((sample) => ({
            perSecond: Math.round(sample.perSecond),
            elapsedMs: Math.round(sample.elapsedMs),
            startsMs: Math.round(sample.startsMs ?? 0),
            transactions: sample.transactions,
            groupedTransactions: sample.groupedTransactions,
            groupedBatches: sample.groupedBatches,
          })),
          profileFile: path.relative(root, file),
          summary,
        },
        null,
        2,
      ),
    );
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1]))
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
