#!/usr/bin/env node
// Runs every test: unit and integration (Vitest, Node), then end-to-end (Playwright, Chromium), and ends
// with one line `N passed, N failed` totalling both. Exits non-zero if anything failed or did not run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

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

const e2eStatus = run('end-to-end', 'npx', ['playwright', 'test']);
const e2e = readJson(`${reports}/e2e.json`);
const e2ePassed = e2e ? e2e.stats.expected + e2e.stats.flaky : 0;
const e2eFailed = e2e ? e2e.stats.unexpected + (e2eStatus !== 0 && e2e.stats.unexpected === 0 ? 1 : 0) : 1;

console.log(`\nunit: ${unitPassed} passed, ${unitFailed} failed`);
console.log(`end-to-end: ${e2ePassed} passed, ${e2eFailed} failed`);
const failed = unitFailed + e2eFailed;
console.log(`${unitPassed + e2ePassed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
