#!/usr/bin/env node
// The `shuttle` command (see `shuttle help`). In this repository it runs the source (src/server/cli.ts)
// with tsx, and a definition file's `import … from 'shuttle'` gets the source too
// (scripts/source-resolve-hooks.mjs); from the installed package, it runs the build (lib/cli.js). Either
// way tsx is registered first, so definition files given to `shuttle worker --workflows` may be TypeScript.
import { existsSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { register } from 'tsx/esm/api';

register();
const source = new URL('../src/server/cli.ts', import.meta.url);
const fromSource = existsSync(source);
if (fromSource) registerHooks(new URL('../scripts/source-resolve-hooks.mjs', import.meta.url));
const { main } = await import(fromSource ? source.href : new URL('../lib/cli.js', import.meta.url).href);
await main(process.argv.slice(2));
