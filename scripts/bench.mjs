#!/usr/bin/env node
// `npm run bench`: builds what the benchmarks need, runs the Node benchmarks (`node --expose-gc`), serves the
// built app with `vite preview` on a free port and runs the browser benchmarks against it in Chromium, then
// writes bench/results/latest.json (exactly the schema of bench/results.ts) and bench/results/details.json
// and prints a table of every figure with its ceiling, ratio, target and pass/miss.
//
// The app is built into bench/.build/app (not dist/), so a test run building dist/ at the same time cannot
// change the files under the benchmark. `SHUTTLE_BENCH_QUICK=1` runs fewer and shorter rounds;
// `SHUTTLE_BENCH_ONLY=node,long-lived,throughput,graceful,crash,freeze,lifecycle-freeze,shutdown,startup,cross-tab,scale`
// runs some parts only (`handoff` stands for every handoff kind; `long-lived`, continue-as-new handoff and
// replay speed, runs in Node after the Node benchmarks; `scale`, N parked workflows in studio tabs,
// runs in a browser of its own after the others; `queues`, workflow queues, runs its browser half in the browser
// runner and its PostgreSQL half, beside DBOS's WorkflowQueue, after the server part). `SHUTTLE_BENCH_MERGE=1`
// keeps, from the previous results/latest.json and details.json, every part this run measured nothing of
// (details.merged says which, and from which run). The Node
// benchmarks run 3 times each here (1 when quick; `SHUTTLE_BENCH_RUNS` overrides) to keep a full run near 5 minutes.
// Exits non-zero when a runner failed (figures that miss their targets do not fail the command).
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const quick = process.env.SHUTTLE_BENCH_QUICK === '1';
const handoffParts = ['graceful', 'crash', 'freeze', 'lifecycle-freeze', 'shutdown'];
const only = process.env.SHUTTLE_BENCH_ONLY?.split(',')
  .map((part) => part.trim())
  .flatMap((part) => (part === 'handoff' ? handoffParts : [part]));
const buildDir = path.join(root, 'bench', '.build');
const appDir = path.join(buildDir, 'app');
const resultsDir = path.join(root, 'bench', 'results');
const viteBin = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
const browserParts = ['throughput', ...handoffParts, 'startup', 'cross-tab', 'long-lived', 'queues'];
const merge = process.env.SHUTTLE_BENCH_MERGE === '1';

const started = Date.now();
const timings = {};
const failures = {};

function say(message) {
  console.log(`[bench] ${message}`);
}

async function timed(label, action) {
  const begin = Date.now();
  try {
    return await action();
  } finally {
    timings[label] = Date.now() - begin;
  }
}

/** Runs `node args…`, streaming stderr, and resolves with the last JSON line it printed on stdout. */
function runJson(label, args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').filter(Boolean).at(-1);
      if (code !== 0 || !line) return reject(new Error(`${label} exited with code ${code}`));
      try {
        resolve(JSON.parse(line));
      } catch (error) {
        reject(new Error(`${label} printed no JSON result: ${error.message}`));
      }
    });
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForServer(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`vite preview did not serve ${url} within ${timeoutMs} ms`);
}

/** Starts `vite preview` on the built app; resolves with its base URL and a function that stops it. */
async function startPreview() {
  const port = await freePort();
  const server = spawn(
    process.execPath,
    [viteBin, 'preview', '--outDir', appDir, '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const exited = new Promise((resolve) => server.on('exit', resolve));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
    await exited;
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      waitForServer(`${baseUrl}/bench.html`, 30_000),
      exited.then((code) => Promise.reject(new Error(`vite preview exited early (code ${code})`))),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, stop };
}

/** The commit measured, and the files under src/ that differed from it when the run began (shared trees). */
function sourceState() {
  const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const head = git(['rev-parse', '--short', 'HEAD']);
  const status = git(['status', '--porcelain', '--', 'src']);
  if (head.status !== 0) return null;
  const changed = status.stdout.split('\n').filter(Boolean);
  return { commit: head.stdout.trim(), uncommittedUnderSrc: changed.length, files: changed.slice(0, 100) };
}

function wants(part) {
  return !only || only.includes(part);
}

async function main() {
  say(
    `${quick ? 'quick' : 'full'} run on ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  const loadBefore = os.loadavg();
  const source = sourceState();

  await timed('build', async () => {
    say('building the app (bench/.build/app) and the runners (bench/.build/*.js)');
    const app = spawnSync(
      process.execPath,
      [viteBin, 'build', '--outDir', appDir, '--emptyOutDir', '--logLevel', 'warn'],
      { cwd: root, stdio: 'inherit' },
    );
    if (app.status !== 0) throw new Error('vite build of the app failed');
    await build({
      root,
      configFile: false,
      logLevel: 'warn',
      build: {
        ssr: true,
        outDir: buildDir,
        emptyOutDir: false,
        target: 'node20',
        minify: false,
        rolldownOptions: {
          input: {
            node: path.join(root, 'bench', 'node.ts'),
            browser: path.join(root, 'bench', 'browser.ts'),
            report: path.join(root, 'bench', 'report.ts'),
            'long-lived': path.join(root, 'bench', 'long-lived.ts'),
            scale: path.join(root, 'bench', 'scale.ts'),
          },
          output: { entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js' },
        },
      },
    });
  });

  let node = null;
  if (wants('node')) {
    say('Node benchmarks (memory store)');
    node = await timed('node', () =>
      runJson('the Node benchmarks', ['--expose-gc', path.join(buildDir, 'node.js')], {
        SHUTTLE_BENCH_RUNS: process.env.SHUTTLE_BENCH_RUNS ?? (quick ? '1' : '3'),
      }),
    ).catch((error) => {
      failures.node = error.message;
      say(`Node benchmarks failed: ${error.message}`);
      return null;
    });
  }

  // `long-lived`: a workflow continued as new through 1,000 runs handed over beside a one-run one, and the
  // speed of replay() (bench/long-lived.ts; memory store).
  let longLived = null;
  if (wants('long-lived')) {
    say('long-lived workflows: continue-as-new handoff and replay speed (memory store)');
    longLived = await timed('long-lived', () =>
      runJson('the long-lived benchmarks', ['--expose-gc', path.join(buildDir, 'long-lived.js')]),
    ).catch((error) => {
      failures['long-lived'] = error.message;
      say(`long-lived benchmarks failed: ${error.message}`);
      return null;
    });
  }

  let browser = null;
  const selected = browserParts.filter(wants);
  if (selected.length > 0) {
    const preview = await startPreview();
    say(`browser benchmarks against ${preview.baseUrl} (${selected.join(', ')})`);
    try {
      browser = await timed('browser', () =>
        runJson(
          'the browser benchmarks',
          [path.join(buildDir, 'browser.js'), '--base-url', preview.baseUrl],
          {
            SHUTTLE_BENCH_ONLY: selected.join(','),
          },
        ),
      );
    } catch (error) {
      failures.browser = error.message;
      say(`browser benchmarks failed: ${error.message}`);
    } finally {
      await preview.stop();
    }
  }

  let scale = null;
  if (wants('scale')) {
    const preview = await startPreview();
    say(`scale benchmark against ${preview.baseUrl}${quick ? ' (quick: N = 100 and 1,000 only)' : ''}`);
    try {
      scale = await timed('scale', () =>
        runJson('the scale benchmark', [path.join(buildDir, 'scale.js'), '--base-url', preview.baseUrl]),
      );
    } catch (error) {
      failures.scale = error.message;
      say(`scale benchmark failed: ${error.message}`);
    } finally {
      await preview.stop();
    }
  }

  // `server`: Shuttle over PostgresStorage on a throwaway PostgreSQL server beside its ceiling and the peer
  // (bench/server.ts, run with tsx: it spawns engine and peer processes of its own).
  let server = null;
  if (wants('server')) {
    say('server benchmarks (PostgreSQL, fsync on; the peer: DBOS Transact)');
    server = await timed('server', () =>
      runJson('the server benchmarks', ['--import', 'tsx', path.join(root, 'bench', 'server.ts')]),
    ).catch((error) => {
      failures.server = error.message;
      say(`server benchmarks failed: ${error.message}`);
      return null;
    });
  }

  // `queues`: the PostgreSQL half (bench/queues.ts, run with tsx: it spawns the DBOS peers), after the server
  // part; its browser half ran in the browser runner.
  let queues = null;
  if (wants('queues')) {
    say('queues, PostgreSQL half (fsync on; beside DBOS WorkflowQueue)');
    queues = await timed('queues', () =>
      runJson('the queues benchmark', ['--import', 'tsx', path.join(root, 'bench', 'queues.ts')]),
    ).catch((error) => {
      failures.queues = error.message;
      say(`queues benchmark failed: ${error.message}`);
      return null;
    });
  }

  let previous = null;
  if (merge) {
    const read = async (name) => JSON.parse(await readFile(path.join(resultsDir, name), 'utf8'));
    previous = { latest: await read('latest.json'), details: await read('details.json') };
    say(
      `merging: parts this run measured nothing of are kept from the run of ${previous.latest.generatedAt}`,
    );
  }

  const { writeBenchResults } = await import(pathToFileURL(path.join(buildDir, 'report.js')).href);
  const { table } = await writeBenchResults({
    resultsDir,
    generatedAt: new Date().toISOString(),
    node,
    browser,
    server,
    scale,
    longLived,
    queues,
    previous,
    run: {
      quick,
      only: only ?? null,
      merge,
      source,
      totalMs: Date.now() - started,
      timingsMs: timings,
      loadAverageBefore: loadBefore,
      loadAverageAfter: os.loadavg(),
      failures,
    },
  });
  console.log(`\n${table}\n`);
  const runFailures = browser?.details?.runFailures ?? [];
  if (runFailures.length > 0)
    say(`${runFailures.length} run(s) measured nothing (not counted):\n  ${runFailures.join('\n  ')}`);
  const skipped = browser?.details?.handoffs?.freeze?.skipped;
  if (skipped) say(`freeze handoff not measured: ${skipped}`);
  const scaleErrors = (scale?.details?.cases ?? []).flatMap((entry) =>
    entry.errors.map((error) => `N=${entry.parked}: ${error}`),
  );
  if (scaleErrors.length > 0) say(`scale steps that measured nothing:\n  ${scaleErrors.join('\n  ')}`);
  say(
    `wrote bench/results/latest.json and bench/results/details.json in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  const queueFailures = [
    ...(queues?.details?.failures ?? []).map((failure) => `PostgreSQL: ${failure}`),
    ...(browser?.queues?.details?.failures ?? []).map((failure) => `Chromium: ${failure}`),
  ];
  if (queueFailures.length > 0)
    say(`queue runs that measured nothing (not counted):\n  ${queueFailures.join('\n  ')}`);
  const serverFailures = server?.details?.failures ?? {};
  if (Object.keys(serverFailures).length > 0) {
    say(`server parts that failed: ${Object.keys(serverFailures).join(', ')} (details.server.failures)`);
    process.exitCode = 1;
  }
  const browserFailures = browser?.details?.failures ?? {};
  const failed = Object.keys(failures).length + Object.keys(browserFailures).length;
  if (failed > 0) {
    say(`some benchmarks failed: ${JSON.stringify({ ...failures, ...browserFailures })}`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
