#!/usr/bin/env node
// The `shuttle` command: runs src/server/cli.ts with tsx (TypeScript, no build step). See `shuttle help`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/server/cli.ts');
await main(process.argv.slice(2));
