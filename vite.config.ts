/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { typecheckEnvironment } from './scripts/typecheck-environment.mjs';

/**
 * The built app ships a Content-Security-Policy that allows only its own origin. Workers are module workers
 * (`worker.format: 'es'`). Authored workflow code is evaluated inside the worker with `new Function`, which
 * is why the policy keeps `'unsafe-eval'` for scripts (and only that); nothing else loads from elsewhere.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' ws://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * `SHUTTLE_STUDIO_BUILD=package`: the studio alone, without source maps, as the package ships it for
 * `shuttle serve` (scripts/build-package.mjs builds it into lib/studio). Otherwise the app and the test and
 * benchmark pages, with source maps.
 */
const forPackage = process.env.SHUTTLE_STUDIO_BUILD === 'package';
const pages = {
  index: fileURLToPath(new URL('./index.html', import.meta.url)),
  // The storage conformance suite's browser harness, driven by e2e/storage-conformance.spec.ts.
  storageConformance: fileURLToPath(new URL('./storage-conformance.html', import.meta.url)),
  bench: fileURLToPath(new URL('./bench.html', import.meta.url)), // browser benchmarks (npm run bench)
};

export default defineConfig({
  plugins: [
    react(),
    // The definition editor's type checker: the workflow API's declarations and the standard libs.
    typecheckEnvironment(),
    {
      name: 'shuttle-csp',
      transformIndexHtml: {
        order: 'post',
        handler: (html, context) =>
          context.server
            ? html
            : html.replace(
                '<head>',
                `<head>\n    <meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}" />`,
              ),
      },
    },
  ],
  // Workers are bundled with their own plugins: the type checker's worker reads the typecheck environment.
  worker: { format: 'es', plugins: () => [typecheckEnvironment()] },
  server: { port: 5173, strictPort: true },
  preview: { port: 5173, strictPort: true },
  build: {
    target: 'es2022',
    sourcemap: !forPackage,
    chunkSizeWarningLimit: 2000,
    rolldownOptions: { input: forPackage ? { index: pages.index } : pages },
  },
  test: {
    include: ['src/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['src/server/postgres.global-setup.ts'], // one throwaway PostgreSQL server for the run
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
