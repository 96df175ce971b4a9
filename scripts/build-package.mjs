#!/usr/bin/env node
// `npm run build:package`: builds the package's entry points (src/public) into lib/ — ESM JavaScript with
// source maps (esbuild: one bundle per entry point, shared code split into chunks, so every entry point sees
// the same classes) and type declarations (tsc emits them, rollup-plugin-dts rolls each entry point's up,
// shared declarations split into chunks the same way), and the studio `shuttle serve` serves (lib/studio) —
// then checks or updates the API reports in api/.
//
//   node scripts/build-package.mjs            build lib/; write the API reports of what was built into
//                                             .build/api/ and say which differ from api/*.api.md
//   node scripts/build-package.mjs --update   the same, then rewrite api/*.api.md (review the diff)
//
// `npm test` fails while a report differs (scripts/package.test.ts, "the public API"): a change to the
// public API is a reviewed diff of api/.
//
// Every package (dependency or not) and every Node built-in stays an import: the app's bundler or Node
// resolves them from the installed package's dependencies.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { rollup } from 'rollup';
import { dts } from 'rollup-plugin-dts';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const lib = path.join(root, 'lib');
const typesDir = path.join(root, '.build', 'types');
const apiDir = path.join(root, 'api');
const update = process.argv.includes('--update');

/** The package's entry points: the `exports` subpath each one is, and its source. */
export const entryPoints = {
  index: { subpath: '.', source: 'src/public/index.ts' },
  workflow: { subpath: './workflow', source: 'src/public/workflow.ts' },
  browser: { subpath: './browser', source: 'src/public/browser.ts' },
  'browser-worker': { subpath: './browser-worker', source: 'src/public/browser-worker.ts' },
  react: { subpath: './react', source: 'src/public/react.ts' },
  server: { subpath: './server', source: 'src/public/server.ts' },
  testing: { subpath: './testing', source: 'src/public/testing.ts' },
  opentelemetry: { subpath: './opentelemetry', source: 'src/public/opentelemetry.ts' },
};
/** The `shuttle` command's code (bin/shuttle.mjs loads it): not an entry point of the API. */
const cliSource = 'src/server/cli.ts';

function step(message) {
  console.log(`[build:package] ${message}`);
}

rmSync(lib, { recursive: true, force: true });
rmSync(typesDir, { recursive: true, force: true });

step('JavaScript (esbuild)');
const started = Date.now();
await build({
  absWorkingDir: root,
  entryPoints: {
    ...Object.fromEntries(Object.entries(entryPoints).map(([name, { source }]) => [name, source])),
    cli: cliSource,
  },
  outdir: lib,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  packages: 'external',
  external: ['node:*'],
  sourcemap: true,
  sourcesContent: true,
  chunkNames: 'chunks/[name]-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
});

step('declarations (tsc)');
const tsc = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.package.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

step('declarations rolled up per entry point (rollup-plugin-dts)');
const bundle = await rollup({
  input: Object.fromEntries(
    Object.entries(entryPoints).map(([name, { source }]) => [
      name,
      path.join(typesDir, source.replace(/^src\//, '').replace(/\.ts$/, '.d.ts')),
    ]),
  ),
  plugins: [dts({ respectExternal: false })],
  external: (id) => !id.startsWith('.') && !path.isAbsolute(id),
  onwarn(warning, warn) {
    if (warning.code === 'CIRCULAR_DEPENDENCY') return;
    warn(warning);
  },
});
await bundle.write({
  dir: lib,
  format: 'es',
  entryFileNames: '[name].d.ts',
  chunkFileNames: 'chunks/[name]-[hash].d.ts',
});
await bundle.close();

step('the studio, for `shuttle serve` (vite, into lib/studio)');
process.env.SHUTTLE_STUDIO_BUILD = 'package';
const { build: viteBuild } = await import('vite');
await viteBuild({
  root,
  logLevel: 'error',
  build: { outDir: path.join(lib, 'studio'), emptyOutDir: true },
});

step(`API reports (api-extractor): ${update ? 'updating' : 'checking'} api/*.api.md`);
mkdirSync(apiDir, { recursive: true });
const changed = [];
for (const [name] of Object.entries(entryPoints)) {
  const reportFileName = `${name}.api.md`;
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: path.join(lib, `${name}.d.ts`),
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            lib: ['ES2023', 'DOM', 'DOM.Iterable'],
            types: ['node'],
            skipLibCheck: true,
            moduleResolution: 'bundler',
            module: 'esnext',
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFileName,
        reportFolder: apiDir,
        reportTempFolder: path.join(root, '.build', 'api'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: {
          default: { logLevel: 'none' },
          'ae-missing-release-tag': { logLevel: 'none' },
        },
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: path.join(root, 'api', `${name}.api-extractor.json`),
    packageJsonFullPath: path.join(root, 'package.json'),
  });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  if (result.apiReportChanged) changed.push(`api/${reportFileName}`);
  if (!result.succeeded && !result.apiReportChanged) {
    console.error(`[build:package] api-extractor failed on ${name}: ${result.errorCount} errors`);
    process.exit(1);
  }
}
if (changed.length > 0 && !update)
  console.warn(
    `[build:package] The public API changed: ${changed.join(', ')} no longer match what was built (.build/api/). If the change is meant, run \`npm run build:package -- --update\` and commit the reports: the diff is the review.`,
  );

const files = readdirSync(lib, { recursive: true }).filter((file) => !String(file).endsWith('.map'));
step(
  `done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${files.length} files in lib/${update && changed.length > 0 ? `; updated ${changed.join(', ')}` : ''}`,
);
