/**
 * The package phase's global setup: builds the package (scripts/build-package.mjs) and packs it with
 * `npm pack` into .build/pack, once per run; the tests read where the tarball is with `packed()`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const packDir = path.join(root, '.build', 'pack');
const record = path.join(packDir, 'packed.json');

export type Packed = { tarball: string; version: string };

/** The tarball this run packed. */
export function packed(): Packed {
  return JSON.parse(readFileSync(record, 'utf8')) as Packed;
}

/** Where the examples are copied and installed. */
export function scratch(): string {
  return path.join(root, '.build', 'examples');
}

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  return result.stdout;
}

export default function setup(): void {
  rmSync(packDir, { recursive: true, force: true });
  mkdirSync(packDir, { recursive: true });
  mkdirSync(scratch(), { recursive: true });
  run(process.execPath, ['scripts/build-package.mjs']);
  // The build just ran: `--ignore-scripts` skips `prepack`, which would build it again.
  const [entry] = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir]),
  ) as { filename: string; version: string }[];
  if (!entry) throw new Error('npm pack reported no tarball');
  writeFileSync(
    record,
    JSON.stringify({ tarball: path.join(packDir, entry.filename), version: entry.version }),
  );
}
