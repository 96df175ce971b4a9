#!/usr/bin/env node
// Runs every test: unit and integration (Vitest, Node), then end-to-end (Playwright, Chromium) and, at the
// same time, the package (vitest.package.config.ts: the tarball, its lints, API reports and size budget, and
// the example consumers installed from it; its output is printed after the end-to-end tests'), and ends
// with one line `N passed, N failed` totalling all three. Exits non-zero if anything failed or did not run.
//
// The package phase runs beside the end-to-end tests because they are independent (its own build folders,
// scratch copies and browser) and the end-to-end run leaves a CPU mostly idle (one Playwright worker);
// the end-to-end tests wait on conditions and are known to pass under load (docs/testing.md).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';

const reports = '.test-reports';
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

function run(label, command, args) {
  console.log(`\n=== ${label}: ${command} ${args.join(' ')}\n`);
  const result = spawnSync(command, args, { stdio: 'inherit', shell: process.platform === 'win32' });
  return result.status ?? 1;
}

function readJson(path) {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

const unitStatus = run('unit', 'npx', [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${reports}/unit.json`,
]);
const unit = readJson(`${reports}/unit.json`);
const unitPassed = unit?.numPassedTests ?? 0;
const unitFailed = unit ? unit.numFailedTests + (unitStatus !== 0 && unit.numFailedTests === 0 ? 1 : 0) : 1;

const packageArgs = [
  'vitest',
  'run',
  '--config',
  'vitest.package.config.ts',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${reports}/package.json`,
];
const packageLog = `${reports}/package.log`;
console.log(
  `\n=== package (beside the end-to-end tests; its output follows theirs): npx ${packageArgs.join(' ')}\n`,
);
// Its output goes straight to a file: this process blocks while the end-to-end tests run (spawnSync), so a
// pipe it had to drain would stall the package phase.
const packageLogFd = openSync(packageLog, 'w');
const packageDone = new Promise((resolve) => {
  const child = spawn('npx', packageArgs, {
    stdio: ['ignore', packageLogFd, packageLogFd],
    shell: process.platform === 'win32',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  child.on('error', () => resolve(1));
  child.on('close', (code) => resolve(code ?? 1));
});

const e2eStatus = run('end-to-end', 'npx', ['playwright', 'test']);
const e2e = readJson(`${reports}/e2e.json`);
const e2ePassed = e2e ? e2e.stats.expected + e2e.stats.flaky : 0;
const e2eFailed = e2e ? e2e.stats.unexpected + (e2eStatus !== 0 && e2e.stats.unexpected === 0 ? 1 : 0) : 1;

const packageStatus = await packageDone;
closeSync(packageLogFd);
console.log(`\n=== package: its output (${packageLog})\n`);
console.log(readFileSync(packageLog, 'utf8'));
const pkg = readJson(`${reports}/package.json`);
const packagePassed = pkg?.numPassedTests ?? 0;
const packageFailed = pkg
  ? pkg.numFailedTests + (packageStatus !== 0 && pkg.numFailedTests === 0 ? 1 : 0)
  : 1;

// Name what failed just above the totals, so that the tail of a long log says which test to look at.
// The terminal's colour codes (ESC [ … m) in a test runner's message.
// eslint-disable-next-line no-control-regex
const colourCodes = /\u001b\[[0-9;]*m/g;
const failures = [];
for (const [phase, report] of [
  ['unit', unit],
  ['package', pkg],
]) {
  for (const file of report?.testResults ?? []) {
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) {
      failures.push(
        `${phase} ${file.name.replace(`${process.cwd()}/`, '')} › ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`,
      );
    }
    if (failedTests.length === 0 && file.status === 'failed') {
      failures.push(`${phase} ${file.name.replace(`${process.cwd()}/`, '')}: ${firstLine(file.message)}`);
    }
  }
}
function visit(suite, titles) {
  for (const spec of suite.specs ?? []) {
    for (const test of spec.tests ?? []) {
      if (test.status !== 'unexpected') continue;
      const last = test.results?.[test.results.length - 1];
      failures.push(
        `end-to-end ${spec.file}:${spec.line} › ${[...titles, spec.title].join(' › ')}: ${firstLine(last?.error?.message)}`,
      );
    }
  }
  for (const child of suite.suites ?? []) visit(child, [...titles, child.title]);
}
try {
  for (const suite of e2e?.suites ?? []) visit(suite, []);
} catch (error) {
  failures.push(`(could not read the end-to-end report's failures: ${error})`);
}
function firstLine(text) {
  const line =
    String(text ?? '')
      .replace(colourCodes, '')
      .split('\n')
      .find((l) => l.trim() !== '') ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
if (failures.length > 0) {
  console.log('\nfailed:');
  for (const failure of failures) console.log(`  ${failure}`);
}

console.log(`\nunit: ${unitPassed} passed, ${unitFailed} failed`);
console.log(`end-to-end: ${e2ePassed} passed, ${e2eFailed} failed`);
console.log(`package: ${packagePassed} passed, ${packageFailed} failed`);
const failed = unitFailed + e2eFailed + packageFailed;
console.log(`${unitPassed + e2ePassed + packagePassed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
