/**
 * The package as its users get it (`npm test`'s package phase, vitest.package.config.ts): the tarball
 * `npm pack` makes, linted by publint and @arethetypeswrong/cli, its public API against the reviewed reports
 * in api/, the browser runtime against its size budget (.size-limit.json), and the three example consumers
 * in this folder — each copied to a scratch folder, given the tarball with `npm install <tarball>` (never
 * the source tree) and run with its own `npm test`.
 *
 * The build and the tarball are made once, by the global setup (package.global-setup.ts).
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { packed, scratch } from './package.global-setup';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

function run(
  command: string,
  args: readonly string[],
  cwd = root,
  timeoutMs = 600_000,
): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

function output(result: SpawnSyncReturns<string>): string {
  return `${result.stdout ?? ''}\n${result.stderr ?? ''}`.trim();
}

describe('the tarball', () => {
  test('holds the built entry points, the CLI and the studio, and no source or test files', () => {
    const listing = run('tar', ['-tzf', packed().tarball]);
    expect(listing.status, output(listing)).toBe(0);
    const files = listing.stdout.split('\n').filter(Boolean);
    for (const entry of [
      'index',
      'workflow',
      'browser',
      'browser-worker',
      'react',
      'server',
      'testing',
      'opentelemetry',
    ]) {
      expect(files).toContain(`package/lib/${entry}.js`);
      expect(files).toContain(`package/lib/${entry}.d.ts`);
    }
    expect(files).toContain('package/lib/cli.js');
    expect(files).toContain('package/bin/shuttle.mjs');
    expect(files).toContain('package/lib/studio/index.html');
    expect(files.filter((file) => /\.test\.|test-support|\/src\/|\.soak/.test(file))).toEqual([]);
    console.log(
      `[package] ${path.basename(packed().tarball)}: ${(statSync(packed().tarball).size / 1024).toFixed(0)} KiB, ${files.length} files`,
    );
  });

  test('publint finds nothing wrong', () => {
    const result = run(bin('publint'), [packed().tarball]);
    expect(result.status, output(result)).toBe(0);
    expect(output(result)).toContain('All good');
  });

  test('@arethetypeswrong/cli finds every entry point typed for Node 16+ ESM and bundlers', () => {
    // ESM only (Node ≥ 20.19 can `require` it too): the CommonJS and node10 resolutions are not offered.
    const result = run(bin('attw'), [packed().tarball, '--profile', 'esm-only', '--format', 'table-flipped']);
    expect(result.status, output(result)).toBe(0);
    // Every 💀 or ⚠️ left is in an ignored column (CommonJS, node10).
    const problems = output(result)
      .split('\n')
      .flatMap((line) => line.split('│'))
      .filter((cell) => /❌|💀|⚠️/u.test(cell) && !cell.includes('(ignored'));
    expect(problems).toEqual([]);
  });
});

describe('the public API', () => {
  test.each([
    'index',
    'workflow',
    'browser',
    'browser-worker',
    'react',
    'server',
    'testing',
    'opentelemetry',
  ])(
    "api/%s.api.md is what was built (a change is reviewed: `npm run build:package -- --update`, then commit the report's diff)",
    (entry) => {
      const built = path.join(root, '.build', 'api', `${entry}.api.md`);
      expect(existsSync(built), `the build wrote no API report for ${entry}`).toBe(true);
      const reviewed = path.join(root, 'api', `${entry}.api.md`);
      expect(readFileSync(built, 'utf8')).toBe(readFileSync(reviewed, 'utf8'));
    },
  );
});

test('the browser runtime stays within its size budget (.size-limit.json: minified and gzipped)', () => {
  const result = run(bin('size-limit'), ['--json']);
  const report = JSON.parse(result.stdout) as { name: string; size: number; passed: boolean }[];
  for (const entry of report) console.log(`[package] ${entry.name}: ${(entry.size / 1000).toFixed(2)} kB`);
  expect(
    report.filter((entry) => !entry.passed).map((entry) => entry.name),
    output(result),
  ).toEqual([]);
  expect(result.status, output(result)).toBe(0);
});

/** The example consumers: every folder here with a package.json. */
const examples = readdirSync(fileURLToPath(new URL('.', import.meta.url))).filter((name) =>
  existsSync(fileURLToPath(new URL(`./${name}/package.json`, import.meta.url))),
);

describe('the example consumers, each installing the tarball', () => {
  test('there are three: a Node service, a web app, a type test', () => {
    expect(examples.sort()).toEqual(['browser-app', 'node-service', 'types']);
  });

  test.each(examples)('examples/%s passes its own tests', (name) => {
    const source = fileURLToPath(new URL(`./${name}`, import.meta.url));
    const folder = path.join(scratch(), name);
    rmSync(folder, { recursive: true, force: true });
    cpSync(source, folder, {
      recursive: true,
      filter: (from) => !/[/\\](node_modules|dist|test-results|playwright-report|\.data)([/\\]|$)/.test(from),
    });
    // The example names the tarball `npm pack` leaves at the repository's root; the copy names this run's.
    const manifestPath = path.join(folder, 'package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    manifest.dependencies.shuttle = `file:${packed().tarball}`;
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    const install = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], folder);
    expect(install.status, output(install)).toBe(0);
    const installed = JSON.parse(
      readFileSync(path.join(folder, 'node_modules', 'shuttle', 'package.json'), 'utf8'),
    );
    expect(installed.version).toBe(packed().version);
    const tests = run('npm', ['test'], folder);
    const text = output(tests);
    for (const line of text.split('\n').filter((l) => /handoff|# (pass|fail)|passed|failed/.test(l)))
      console.log(`[package] ${name}: ${line.trim()}`);
    expect(tests.status, text).toBe(0);
  });
});
