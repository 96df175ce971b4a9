/**
 * Where Shuttle's own files are, whether it runs from this repository's source (src/server/*.ts) or from the
 * installed package's build (lib/*.js, lib/chunks/*.js): the nearest folder up from here with a
 * package.json.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** The folder of Shuttle's package.json. */
export const packageRoot = findPackageRoot();

/** Running from the source (TypeScript through tsx), not the package's build. */
export const runningFromSource = import.meta.url.endsWith('.ts');

/** The `shuttle` command's script, which worker processes are started with. */
export const shuttleBin = join(packageRoot, 'bin', 'shuttle.mjs');
