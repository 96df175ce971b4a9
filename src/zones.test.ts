/**
 * The ESLint zones of eslint.config.js (docs/architecture.md, "Layers"), each shown to hold: for every zone,
 * imports it forbids are reported with the zone's message, and imports it allows pass without any problem.
 * Each case is linted by ESLint's Node API as if it were a file of the zone (`lintText` with a `filePath`
 * there; the file need not exist), by one ESLint instance for every case. A zone whose rule is removed or
 * loosened fails its forbidden cases.
 */
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const eslint = new ESLint({ cwd: root });

type Zone = {
  /** Where the linted code is, relative to the repository. */
  file: string;
  /** Each import alone, with a distinctive part of the message it must be reported with. */
  forbidden: { code: string; message: string }[];
  /** Imports the zone allows, linted together: no problem at all. */
  allowed: string;
  /** Where `allowed` is, when not in `file`. */
  allowedFile?: string;
};

/** `import { … } from …` lines, then exports that use every imported name, so that none is left unused. */
function moduleOf(imports: string[]): string {
  const names = (typeOnly: boolean) =>
    imports.flatMap((line) => {
      const [, type, list] = /^import (type )?\{ ([^}]+) \}/.exec(line) ?? [];
      return list !== undefined && Boolean(type) === typeOnly ? list.split(', ') : [];
    });
  const values = names(false);
  const types = names(true);
  return [
    ...imports,
    ...(values.length > 0 ? [`export const used = [${values.join(', ')}];`] : []),
    ...(types.length > 0 ? [`export type Used = [${types.join(', ')}];`] : []),
    '',
  ].join('\n');
}

const testMachinery = 'Runtime code never imports test machinery';

const zones: Record<string, Zone> = {
  engine: {
    file: 'src/engine/zone-example.ts',
    forbidden: [
      {
        code: "import { PostgresStorage } from '../storage/postgres';",
        message: 'src/engine: the engine is environment-free',
      },
      {
        code: "import { MemoryStorage } from '../storage';",
        message: 'From src/storage it imports only types.ts, errors.ts and utf8.ts',
      },
      {
        code: "import { parseRequest } from '../protocol';",
        message: 'It imports nothing of ours but storage types, errors and utf8',
      },
    ],
    allowed: moduleOf([
      "import type { Storage } from '../storage/types';",
      "import { StorageError } from '../storage/errors';",
      "import { utf8Bytes } from '../storage/utf8';",
      "import { storageLimits } from '../storage/types';",
    ]),
  },
  storage: {
    file: 'src/storage/zone-example.ts',
    forbidden: [
      {
        code: "import type { Engine } from '../engine';",
        message: 'src/storage: the storage contract and its adapters. Storage imports nothing of ours',
      },
    ],
    allowed: moduleOf(["import { StorageError } from './errors';", "import { Dexie } from 'dexie';"]),
  },
  host: {
    file: 'src/host/zone-example.ts',
    forbidden: [
      {
        code: "import { launchClient } from '../client/launch';",
        message:
          'src/host: the host serves the studio protocol over any engine, in any runtime. Imports run down',
      },
      { code: "import { readFileSync } from 'node:fs';", message: 'src/host is runtime-neutral' },
    ],
    allowed: moduleOf([
      "import { createEngine } from '../engine';",
      "import { MemoryStorage } from '../storage';",
      "import { builtInWorkflows } from '../workflows';",
      "import { parseRequest } from '../protocol';",
    ]),
  },
  worker: {
    file: 'src/worker/zone-example.ts',
    forbidden: [
      {
        code: "import { serve } from '../server/serve';",
        message:
          "src/worker: the browser runtime: a tab's engine in a Web Worker. Imports run down the layers",
      },
    ],
    allowed: moduleOf([
      "import { serveEngineHost } from '../host/engine-host';",
      "import { IndexedDbStorage } from '../storage';",
    ]),
  },
  server: {
    file: 'src/server/zone-example.ts',
    forbidden: [
      {
        code: "import { webLocksLiveness } from '../worker/web-locks-liveness';",
        message: 'src/server: the Node runtime: worker processes, serve, dev. Imports run down the layers',
      },
    ],
    allowed: moduleOf([
      "import { PostgresStorage } from '../storage/postgres';",
      "import { readFileSync } from 'node:fs';",
      "import { serveEngineHost } from '../host/engine-host';",
    ]),
  },
  protocol: {
    file: 'src/protocol/zone-example.ts',
    forbidden: [
      {
        code: "import { classifyKey } from '../host/store-changes';",
        message: 'src/protocol: the wire contract, types, declarations and validators. It imports only types',
      },
      {
        code: "import { storageLimits } from '../storage/types';",
        message: 'From src/engine and src/storage it imports types only',
      },
      { code: "import { z } from 'zod';", message: 'It imports no packages' },
    ],
    allowed: moduleOf([
      "import type { SerializedError } from '../engine';",
      "import type { StorageUsage } from '../storage/types';",
      "import { method } from './declare';",
    ]),
  },
  client: {
    file: 'src/client/zone-example.ts',
    forbidden: [
      {
        code: "import { serveEngineHost } from '../host/engine-host';",
        message: "src/client: the studio's side of the protocol. It imports only src/protocol",
      },
      { code: "import { MemoryStorage } from '../storage';", message: 'never src/host, src/worker' },
      {
        code: "import { createEngine } from '../engine';",
        message: 'From the engine it imports types only',
      },
      { code: "import { readFileSync } from 'node:fs';", message: 'It imports no packages' },
    ],
    allowed: moduleOf([
      "import { PROTOCOL_VERSION } from '../protocol';",
      "import type { WorkflowStatus } from '../engine';",
      "import { isTerminal } from '../engine/vocabulary';",
      "import { ControlChannel } from './control-channel';",
    ]),
  },
  workflows: {
    file: 'src/workflows/zone-example.ts',
    forbidden: [
      {
        code: "import { createEngine } from '../engine/engine';",
        message: 'src/workflows: the built-in demos. Workflows import only the engine public API',
      },
      { code: "import { parseRequest } from '../protocol';", message: 'only the engine public API' },
    ],
    allowed: moduleOf(["import { defineWorkflow } from '../engine';"]),
  },
  'test-kit': {
    file: 'src/test-kit/zone-example.ts',
    forbidden: [
      {
        code: "import { createEngine } from '../engine/engine';",
        message: 'src/test-kit: the test kit (shuttle/testing)',
      },
      { code: "import { PostgresStorage } from '../storage/postgres';", message: 'the memory store' },
      { code: "import { serveEngineHost } from '../host/engine-host';", message: 'never a runtime' },
      { code: "import { Hono } from 'hono';", message: 'It imports no packages' },
    ],
    allowed: moduleOf([
      "import { createEngine } from '../engine';",
      "import { MemoryStorage } from '../storage/memory';",
      "import { seededRandom } from '../storage/seeded-random';",
    ]),
  },
  observability: {
    file: 'src/observability/zone-example.ts',
    forbidden: [
      {
        code: "import { createEngine } from '../engine/engine';",
        message:
          'src/observability: tracing adapters (shuttle/opentelemetry). From the engine it imports types only',
      },
      { code: "import { createEngine } from '../engine';", message: 'From the engine it imports types only' },
      { code: "import { MemoryStorage } from '../storage/memory';", message: 'never storage' },
      {
        code: "import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';",
        message: 'only @opentelemetry/api',
      },
    ],
    allowed: moduleOf([
      "import type { EngineTracer } from '../engine';",
      "import { trace } from '@opentelemetry/api';",
    ]),
  },
  react: {
    file: 'src/react/zone-example.ts',
    forbidden: [
      {
        code: "import { serveEngineHost } from '../host/engine-host';",
        message: "src/react: the React bindings (shuttle/react) and the data layer's shared core",
      },
      { code: "import { createShuttleClient } from '../client/client';", message: 'types only' },
      { code: "import { createEngine } from '../engine';", message: 'From the engine it imports types only' },
      { code: "import { create } from 'zustand';", message: 'Of packages it imports only react' },
      { code: "import { App } from '../ui/app/App';", message: 'never src/host' },
    ],
    allowed: moduleOf([
      "import { useQuery } from '@tanstack/react-query';",
      "import { useEffect } from 'react';",
      "import type { ShuttleClient } from '../client/client';",
      "import type { PushMessage } from '../protocol';",
      "import type { WorkflowDescription } from '../engine';",
      "import { isTerminal } from '../engine/vocabulary';",
      "import { queryKeys } from './query-keys';",
    ]),
  },
  public: {
    file: 'src/public/zone-example.ts',
    forbidden: [
      {
        code: "import { App } from '../ui/app/App';",
        message: "src/public: the package's entry points. An entry point re-exports the runtime layers",
      },
      { code: "import { order } from '../workflows/order';", message: 'never the studio' },
    ],
    allowed: moduleOf([
      "import { createEngine } from '../engine/engine';",
      "import { runBrowserEngine } from '../worker/browser-engine';",
      "import { startWorker } from '../server/worker';",
      "import { ShuttleProvider } from '../react/provider';",
      "import { connectBrowserEngine } from '../client/launch';",
    ]),
  },
  ui: {
    file: 'src/ui/zone-example.ts',
    forbidden: [
      {
        code: "import { serveEngineHost } from '../host/engine-host';",
        message: "src/ui: the React studio. The studio imports only the package's public entry points",
      },
      { code: "import { MemoryStorage } from '../storage';", message: 'public entry points' },
      { code: "import { createEngine } from '../engine';", message: 'public entry points' },
      { code: "import { createShuttleClient } from '../client/client';", message: 'public entry points' },
      { code: "import { isTerminal } from '../engine/vocabulary';", message: 'public entry points' },
      { code: "import { PROTOCOL_VERSION } from '../protocol';", message: 'public entry points' },
      { code: "import { useShuttleClient } from '../react/client-context';", message: 'public entry points' },
      { code: "import { createEngine } from '../public';", message: 'the studio imports types only' },
    ],
    allowed: moduleOf([
      "import { connectBrowserEngine, isTerminal, PROTOCOL_VERSION } from '../public/browser';",
      "import type { ShuttleClient } from '../public/browser';",
      "import type { WorkflowStatus } from '../public';",
      "import { useShuttleClient } from '../public/react';",
      "import _workflowSource from '../engine/workflow.ts?raw';",
    ]),
  },
  'ui screens': {
    file: 'src/ui/screens/detail/zone-example.tsx',
    forbidden: [
      {
        code: "import { WorkflowTable } from '../workflows/WorkflowTable';",
        message:
          "src/ui/screens: a screen of the studio. A screen imports its own folder (./), never another screen's",
      },
      {
        code: "import { Shell } from '../../shell/Shell';",
        message: 'never src/ui/shell, src/ui/app or another screen',
      },
      { code: "import { MemoryStorage } from '../../../storage';", message: 'public entry points' },
      {
        code: "import type { ShuttleClient } from '../../../client/client';",
        message: 'public entry points',
      },
      // The editor's type checker reads the declarations of a public entry point, never of an engine module.
      {
        code: "import _declarations from '../../../engine/workflow.ts?declarations';",
        message: 'public entry points',
      },
    ],
    allowed: moduleOf([
      "import { Button } from '../../components/Button';",
      "import { useWorkflow } from '../../data/workflow-queries';",
      "import { CustodyTimeline } from './CustodyTimeline';",
      "import { connectShuttleServer } from '../../../public/browser';",
      // The declarations of shuttle/workflow, emitted at build time (scripts/typecheck-environment.mjs).
      "import _declarations from '../../../public/workflow.ts?declarations';",
    ]),
  },
  'test machinery (runtime files may not import it)': {
    file: 'src/server/zone-example.ts',
    forbidden: [
      {
        code: "import { startCluster } from './testing/cluster-harness.test-support';",
        message: testMachinery,
      },
      { code: "import type { TestWorld } from '../engine/engine.test-support';", message: testMachinery },
      { code: "import { clusterOrder } from './fixtures/cluster-workflows';", message: testMachinery },
      { code: "import { describe } from 'vitest';", message: testMachinery },
    ],
    // Test code may import anything: test machinery, and what the zone of its folder forbids.
    allowedFile: 'src/server/zone-example.test.ts',
    allowed: moduleOf([
      "import { FaultInjectingStorage } from '../storage/faults.test-support';",
      "import { startCluster } from './testing/cluster-harness.test-support';",
      "import { describe } from 'vitest';",
      "import { webLocksLiveness } from '../worker/web-locks-liveness';",
    ]),
  },
};

/** What ESLint reports for `code` as the file `file`. */
async function lint(code: string, file: string): Promise<ESLint.LintResult['messages']> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${file}` });
  return result!.messages;
}

describe('the ESLint zones of eslint.config.js', () => {
  for (const [name, zone] of Object.entries(zones)) {
    describe(name, () => {
      for (const { code, message } of zone.forbidden) {
        it(`forbids ${code}`, async () => {
          const messages = await lint(moduleOf([code]), zone.file);
          expect(messages).toEqual([
            expect.objectContaining({
              ruleId: expect.stringMatching(/^(@typescript-eslint\/)?no-restricted-imports$/),
              severity: 2,
              message: expect.stringContaining(message),
            }),
          ]);
        });
      }
      it('allows what it allows', async () => {
        expect(await lint(zone.allowed, zone.allowedFile ?? zone.file)).toEqual([]);
      });
    });
  }

  it('lets test code import anything: a test of the engine opens storage and injects faults', async () => {
    const code = moduleOf([
      "import { MemoryStorage } from '../storage/memory';",
      "import { FaultInjectingStorage } from '../storage/faults.test-support';",
      "import { TestWorld } from './engine.test-support';",
      "import { describe } from 'vitest';",
    ]);
    expect(await lint(code, 'src/engine/zone-example.test.ts')).toEqual([]);
  });
});
