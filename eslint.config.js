import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

const nodeBuiltins = [
  'fs',
  'path',
  'os',
  'crypto',
  'child_process',
  'worker_threads',
  'util',
  'events',
  'stream',
  'http',
  'net',
  'process',
  'perf_hooks',
  'timers',
  'url',
  'buffer',
  'assert',
];

/**
 * Determinism of workflow bodies (README "Determinism rules", docs/authoring.md "Determinism is checked").
 *
 * A workflow body is the generator that is the `run` property of an object literal (`*run(ctx, input)` in
 * `defineWorkflow({ … })`). Inside it, time, randomness, ids and waiting come only from `ctx`, and I/O only
 * from activities: code lexically inside the body is checked, except code inside a function written as the
 * second argument of `….activity(name, fn, …)` (activity code may do anything). Helpers declared at module
 * level are not checked, even when the body calls them; a function declared inside the body and passed to
 * `ctx.activity` by name is checked (write it inline, or at module level).
 *
 * The studio applies the same table to authored definitions (src/host/authoring/determinism.ts);
 * src/workflows/determinism-lint.test.ts checks that both flag the same code with the same messages.
 */
const workflowBody = "Property[key.name='run'] > FunctionExpression[generator=true]";
const activityFunction = "CallExpression[callee.property.name='activity'] > :function:nth-child(2)";
/** An identifier used as a value: not a property name, an object key or part of a type. */
const valueReference = (name) =>
  `Identifier[name='${name}']` +
  ':not(MemberExpression[computed=false] > Identifier.property)' +
  ':not(Property[computed=false] > Identifier.key)' +
  ':not(TSTypeAnnotation *, TSTypeReference *, TSTypeQuery *)';
const useCtx = (hint) => `Workflow code must be deterministic: ${hint} — or move this into an activity.`;
const useActivity = (hint) => `Workflow code must be deterministic: ${hint} — move this into an activity.`;
const nonDeterministic = [
  [
    "MemberExpression[object.name='Date'][property.name='now']",
    useCtx('use yield* ctx.now() instead of Date.now()'),
  ],
  [
    "NewExpression[callee.name='Date'][arguments.length=0]",
    useCtx('use yield* ctx.now() instead of new Date()'),
  ],
  ["CallExpression[callee.name='Date']", useCtx('use yield* ctx.now() instead of Date()')],
  [valueReference('performance'), useCtx('use yield* ctx.now() instead of performance')],
  [
    "MemberExpression[object.name='Math'][property.name='random']",
    useCtx('use yield* ctx.random() instead of Math.random()'),
  ],
  [valueReference('crypto'), useCtx('use yield* ctx.uuid() or yield* ctx.random() instead of crypto')],
  [valueReference('setTimeout'), useCtx('use yield* ctx.sleep(ms) instead of setTimeout')],
  [valueReference('setInterval'), useCtx('use yield* ctx.sleep(ms) in a loop instead of setInterval')],
  [valueReference('setImmediate'), useCtx('use yield* ctx.sleep(ms) instead of setImmediate')],
  [valueReference('queueMicrotask'), useActivity("queueMicrotask runs code outside the workflow's steps")],
  ...['fetch', 'XMLHttpRequest', 'WebSocket', 'indexedDB', 'localStorage'].map((name) => [
    valueReference(name),
    useActivity(`${name} does I/O`),
  ]),
  [valueReference('process'), useActivity('process reads the environment')],
  [valueReference('require'), useActivity('require loads code at run time')],
  ['ImportExpression', useActivity('import() loads code at run time')],
].map(([selector, message]) => ({
  selector: `${workflowBody} ${selector}:not(${activityFunction} *)`,
  message,
}));

/** The folders of src, each a layer or a zone. */
const ourFolders = [
  'storage',
  'engine',
  'workflows',
  'host',
  'protocol',
  'worker',
  'server',
  'client',
  'react',
  'public',
  'ui',
  'test-kit',
  'observability',
];
const except = (...folders) => ourFolders.filter((folder) => !folders.includes(folder));

/**
 * Restricted-import patterns for folders of src, by relative path: every module in them (`../storage/memory`)
 * except the paths listed in `allow` (e.g. `storage/types`), and the folder itself (`../storage`, its
 * index.ts), which a glob cannot name without also naming everything inside it. Folders are matched by name:
 * a folder inside a zone named like one of ours (src/ui/screens/workflows) would match too, which is why the
 * UI zone does not name src/workflows.
 */
function folders(names, message, { allow = [], allowTypeImports = false } = {}) {
  return [
    {
      group: [...names.map((name) => `**/${name}/**`), ...allow.map((path) => `!**/${path}`)],
      allowTypeImports,
      message,
    },
    { regex: `^(\\.\\./)+(${names.join('|')})/?$`, allowTypeImports, message },
  ];
}

/** Import patterns that would run back up the layers (storage ← engine ← host ← worker/server ← client ← ui). */
function layersAbove(names) {
  return folders(
    names,
    `Imports run down the layers only, never into ${names.map((name) => `src/${name}`).join(', ')}.`,
  );
}

/** Any package, Node built-ins included: an import that is not a relative path. */
const anyPackage = (message) => ({ regex: '^[^.]', message });

/**
 * Test machinery: what only tests load — tests (`*.test.ts`), their shared drivers (`*.test-support.ts`),
 * soaks and their drivers (`*.soak.ts`, `*.soak-support.ts`, `*.fault-soak.ts`), the Vitest global setup
 * (`*.global-setup.ts`), everything in a `testing/` or `fixtures/` folder, and the test libraries. It is a
 * zone of its own: no zone below applies to it (test code may import anything), and no runtime file of src
 * may import it (the last block). A module is test machinery by its name or its folder, nothing else.
 */
const testSuffixes = ['.test', '.test-support', '.soak', '.soak-support', '.fault-soak', '.global-setup'];
const testFolders = ['testing', 'fixtures'];
const testLibraries = ['vitest', '@playwright/test', 'fast-check', 'fake-indexeddb'];
const testMachinery = [
  ...testSuffixes.map((suffix) => `src/**/*${suffix}.{ts,tsx}`),
  ...testFolders.map((folder) => `src/**/${folder}/**`),
];
const testMachineryImports = [
  ...testSuffixes.flatMap((suffix) => [`*${suffix}`, `*${suffix}.*`]),
  ...testFolders.map((folder) => `**/${folder}/**`),
  ...testLibraries, // a name matches its subpaths too (`vitest/config`)
];

/**
 * An ESLint zone for a folder of src: what its runtime sources (everything but test machinery) may not
 * import. Every message starts with the folder and what it is. `extra` adds other rules and language options.
 */
function zone(folder, what, { paths = [], patterns }, extra = {}) {
  const prefixed = (entry) => ({ ...entry, message: `${folder}: ${what}. ${entry.message}` });
  return [
    {
      files: [`${folder}/**/*.{ts,tsx}`],
      ignores: testMachinery,
      ...extra,
      rules: {
        'no-restricted-imports': ['error', { paths: paths.map(prefixed), patterns: patterns.map(prefixed) }],
        ...extra.rules,
      },
    },
  ];
}

/**
 * What the UI's runtime files may not import (the `src/ui` zone, and the screens' zone which adds to it). The
 * studio is an app on the package's public entry points, like any other: src/public (`shuttle/browser` and
 * `shuttle/react` at runtime, the types of `shuttle`) and its own folders.
 */
const uiPatterns = [
  {
    group: ['dexie'],
    message: 'The UI never opens storage: it talks to engines through the client.',
  },
  // src/workflows is not named: a screen folder of the same name (src/ui/screens/workflows) would match too
  ...folders(
    except('ui', 'public', 'workflows'),
    "The studio imports only the package's public entry points (src/public: shuttle/browser, shuttle/react, the types of shuttle) and its own folders. Its one exception is the editor's copy of the workflow API's source (engine/workflow.ts?raw); its worker (src/worker/engine.worker.ts) is started by URL.",
    { allow: ['engine/workflow.ts?raw'] },
  ),
  {
    regex: '^(\\.\\./)+public(/index)?/?$',
    allowTypeImports: true,
    message:
      'From shuttle (src/public/index.ts, the engine) the studio imports types only: its runtime values come from shuttle/browser and shuttle/react (a page holds no engine).',
  },
];

/**
 * A screen (src/ui/screens/<screen>/) is self-contained: it imports src/ui/components, data, state and
 * routing, and its own folder — never another screen, the shell or the app. What two screens share lives in
 * src/ui/components (docs/studio.md, "Where the code lives").
 */
const screenPatterns = [
  {
    regex: '^\\.\\./(?!\\.\\./)',
    message:
      "A screen imports its own folder (./), never another screen's (../<screen>/): what two screens share lives in src/ui/components.",
  },
  {
    regex: '^\\.\\./\\.\\./(?!\\.\\./)(?!(components|data|state|routing)(/|$))',
    message:
      'A screen imports src/ui/components, data, state and routing (and its own folder): never src/ui/shell, src/ui/app or another screen.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist',
      'node_modules',
      'test-results',
      'playwright-report',
      'bench/results',
      'bench/.build',
      '.test-reports',
      'lib',
      '.build',
      'examples/*/node_modules',
      'examples/*/dist',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      // A workflow generator that finishes without yielding is valid.
      'require-yield': 'off',
    },
  },
  {
    files: ['src/ui/**/*.{ts,tsx}', 'src/react/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules, 'react-hooks/set-state-in-effect': 'off' },
  },
  // The engine is environment-free: storage, clock, randomness and liveness are injected.
  ...zone(
    'src/engine',
    'the engine is environment-free (storage, clock, randomness and liveness are injected)',
    {
      paths: ['react', 'react-dom', 'dexie', 'zustand', ...nodeBuiltins].map((name) => ({
        name,
        message: 'No React, Dexie, zustand, DOM or Node imports.',
      })),
      patterns: [
        { group: ['node:*'], message: 'No Node built-ins.' },
        { group: ['@tanstack/*', 'react-dom/*'], message: 'No React, Dexie, zustand, DOM or Node imports.' },
        ...folders(
          except('engine', 'storage'),
          'It imports nothing of ours but storage types, errors and utf8.',
        ),
        ...folders(
          ['storage'],
          'From src/storage it imports only types.ts, errors.ts and utf8.ts: never an adapter, the index, fault injection or the conformance suite.',
          { allow: ['storage/types', 'storage/errors', 'storage/utf8'] },
        ),
      ],
    },
    {
      languageOptions: { globals: { ...globals.es2023 } },
      rules: {
        'no-restricted-globals': [
          'error',
          'window',
          'document',
          'navigator',
          'localStorage',
          'indexedDB',
          'self',
          'process',
          'Buffer',
        ],
        'no-restricted-properties': [
          'error',
          { object: 'Date', property: 'now', message: 'Use the injected clock.' },
          { object: 'Math', property: 'random', message: 'Use the injected random source.' },
        ],
      },
    },
  ),
  ...zone('src/storage', 'the storage contract and its adapters', {
    patterns: folders(except('storage'), 'Storage imports nothing of ours.'),
  }),
  // The runtime folders, each in its own zone.
  ...zone('src/host', 'the host serves the studio protocol over any engine, in any runtime', {
    patterns: [
      ...layersAbove(['ui', 'public', 'react', 'worker', 'server', 'client']),
      {
        group: ['node:*', ...nodeBuiltins, 'pg', 'ws', 'react', 'react-dom'],
        message: 'src/host is runtime-neutral: no Node, no DOM, no React.',
      },
    ],
  }),
  ...zone('src/worker', "the browser runtime: a tab's engine in a Web Worker", {
    patterns: [
      ...layersAbove(['ui', 'public', 'react', 'server']),
      {
        group: ['node:*', ...nodeBuiltins, 'pg', 'ws'],
        message: 'src/worker runs in the browser: no Node modules.',
      },
    ],
  }),
  ...zone('src/server', 'the Node runtime: worker processes, serve, dev', {
    patterns: layersAbove(['ui', 'public', 'react', 'worker', 'client']),
  }),
  ...zone('src/protocol', 'the wire contract, types, declarations and validators', {
    patterns: [
      ...folders(
        except('protocol', 'engine', 'storage'),
        'It imports only types from src/engine and src/storage, and its own files.',
      ),
      ...folders(['engine', 'storage'], 'From src/engine and src/storage it imports types only.', {
        allowTypeImports: true,
      }),
      anyPackage('It imports no packages: only types from src/engine and src/storage, and its own files.'),
    ],
  }),
  ...zone('src/client', "the studio's side of the protocol", {
    patterns: [
      ...folders(
        except('client', 'protocol', 'engine'),
        "It imports only src/protocol, the engine's types and its own files: never src/host, src/worker, src/server, src/storage, src/workflows or src/ui.",
      ),
      ...folders(
        ['engine'],
        'From the engine it imports types only (runtime values only from the pure engine/vocabulary).',
        { allow: ['engine/vocabulary'], allowTypeImports: true },
      ),
      anyPackage(
        'It imports no packages (no Node modules, pg or ws): only src/protocol, engine types and its own files.',
      ),
    ],
  }),
  ...zone('src/react', "the React bindings (shuttle/react) and the data layer's shared core", {
    patterns: [
      ...folders(
        except('react', 'client', 'protocol', 'engine'),
        'It imports the client, the protocol and the engine (types; runtime values only from engine/vocabulary), and its own files: never src/host, src/worker, src/server, src/storage, src/workflows, src/public or src/ui.',
      ),
      ...folders(['client', 'protocol'], 'From the client and the protocol it imports types only.', {
        allowTypeImports: true,
      }),
      ...folders(
        ['engine'],
        'From the engine it imports types only (runtime values only from engine/vocabulary).',
        {
          allow: ['engine/vocabulary'],
          allowTypeImports: true,
        },
      ),
      {
        regex: '^(?!react$|react/|@tanstack/react-query$)[^.]',
        message: 'Of packages it imports only react and @tanstack/react-query (its peer dependencies).',
      },
    ],
  }),
  ...zone('src/public', "the package's entry points", {
    patterns: folders(
      ['ui', 'workflows'],
      'An entry point re-exports the runtime layers: never the studio (src/ui) or its demos (src/workflows).',
    ),
  }),
  ...zone('src/test-kit', 'the test kit (shuttle/testing): an engine in memory on a simulated clock', {
    patterns: [
      {
        group: ['**/engine/**', '!**/engine/index'],
        message: 'It imports the engine through src/engine/index.ts only.',
      },
      ...folders(['storage'], 'From src/storage it imports the memory store and the seeded random only.', {
        allow: ['storage/memory', 'storage/seeded-random'],
      }),
      ...folders(
        except('test-kit', 'engine', 'storage'),
        'It imports the engine and the memory store only: never a runtime, the protocol or the studio.',
      ),
      anyPackage('It imports no packages: it runs wherever the engine runs.'),
    ],
  }),
  ...zone('src/observability', 'tracing adapters (shuttle/opentelemetry)', {
    patterns: [
      ...folders(['engine'], 'From the engine it imports types only.', { allowTypeImports: true }),
      ...folders(
        except('observability', 'engine'),
        'It imports the engine (types) only: never storage, a runtime, the protocol or the studio.',
      ),
      {
        regex: '^(?!@opentelemetry/api$)[^.]',
        message: 'Of packages it imports only @opentelemetry/api (an optional peer dependency).',
      },
    ],
  }),
  ...zone('src/workflows', 'the built-in demos', {
    patterns: [
      {
        group: ['**/engine/**', '!**/engine/index'],
        message: 'Workflows import only the engine public API (src/engine/index.ts).',
      },
      ...folders(
        except('workflows', 'engine'),
        'Workflows import only the engine public API (src/engine/index.ts).',
      ),
    ],
  }),
  {
    // Workflow bodies are deterministic; see `nonDeterministic` above.
    files: ['src/workflows/**/*.ts'],
    ignores: testMachinery,
    rules: { 'no-restricted-syntax': ['error', ...nonDeterministic] },
  },
  ...zone(
    'src/ui',
    'the React studio',
    {
      patterns: uiPatterns,
    },
    {
      rules: {
        // Tabs talk to each other only through the client's control channel (src/client/control-channel.ts).
        'no-restricted-globals': [
          'error',
          {
            name: 'BroadcastChannel',
            message: "The UI opens no channel between tabs: use the client's control API (client.chaos).",
          },
        ],
      },
    },
  ),
  // A later block's no-restricted-imports replaces an earlier one's for the same files: the screens' zone
  // repeats the UI's patterns and adds its own.
  ...zone('src/ui/screens', 'a screen of the studio', { patterns: [...uiPatterns, ...screenPatterns] }),
  {
    // Test machinery (see `testMachinery`) is for tests only: no runtime file of src imports it. A rule of its
    // own (typescript-eslint's twin of no-restricted-imports), so that it adds to each zone's rule instead of
    // replacing it; type imports count too.
    files: ['src/**/*.{ts,tsx}'],
    ignores: testMachinery,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: testMachineryImports,
              message:
                'Runtime code never imports test machinery (*.test.ts, *.test-support.ts, *.soak.ts, *.soak-support.ts, *.fault-soak.ts, *.global-setup.ts, testing/ and fixtures/ folders) or a test library (vitest, @playwright/test, fast-check, fake-indexeddb).',
            },
          ],
        },
      ],
    },
  },
);
