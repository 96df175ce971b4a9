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

/** Import patterns that would run back up the layers (storage ← engine ← host ← worker/server ← client ← ui). */
function layersAbove(folders) {
  return [
    {
      group: folders.map((folder) => `**/${folder}/**`),
      message: `Imports run down the layers only, never into ${folders.map((folder) => `src/${folder}`).join(', ')}.`,
    },
  ];
}

/** An ESLint zone for a runtime folder: what its non-test sources may not import. */
function runtimeZone(folder, what, patterns) {
  return [
    {
      files: [`${folder}/**/*.ts`],
      ignores: [
        `${folder}/**/*.test.ts`,
        `${folder}/**/*.test-support.ts`,
        `${folder}/**/*-harness.ts`,
        `${folder}/**/*.soak.ts`,
      ],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: patterns.map((pattern) => ({
              ...pattern,
              message: `${folder}: ${what}. ${pattern.message}`,
            })),
          },
        ],
      },
    },
  ];
}

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
    files: ['src/ui/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules, 'react-hooks/set-state-in-effect': 'off' },
  },
  {
    // The engine is environment-free: storage, clock, randomness and liveness are injected.
    files: ['src/engine/**/*.ts'],
    ignores: ['src/engine/**/*.test.ts', 'src/engine/**/*.test-support.ts', 'src/engine/**/*.soak*.ts'],
    languageOptions: { globals: { ...globals.es2023 } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['react', 'react-dom', 'dexie', 'zustand', ...nodeBuiltins].map((name) => ({
            name,
            message: 'src/engine must stay free of React, Dexie, DOM and Node imports.',
          })),
          patterns: [
            { group: ['node:*'], message: 'src/engine must not import Node built-ins.' },
            {
              group: [
                '**/ui/**',
                '**/worker/**',
                '**/host/**',
                '**/server/**',
                '**/client/**',
                '**/workflows/**',
                '@tanstack/*',
                'react-dom/*',
              ],
              message: 'src/engine imports only storage types.',
            },
            {
              group: ['**/storage/indexeddb*', '**/storage/memory*'],
              message: 'src/engine imports only storage types and errors.',
            },
          ],
        },
      ],
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
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/engine/**',
                '**/host/**',
                '**/ui/**',
                '**/worker/**',
                '**/server/**',
                '**/client/**',
                '**/workflows/**',
              ],
              message: 'storage imports nothing of ours.',
            },
          ],
        },
      ],
    },
  },
  // The runtime folders, each in its own zone (tests and harnesses may reach further).
  ...runtimeZone('src/host', 'the host serves the studio protocol over any engine, in any runtime', [
    ...layersAbove(['ui', 'worker', 'server', 'client']),
    {
      group: ['node:*', ...nodeBuiltins, 'pg', 'ws', 'react', 'react-dom'],
      message: 'src/host is runtime-neutral: no Node, no DOM, no React.',
    },
  ]),
  ...runtimeZone('src/worker', "the browser runtime: a tab's engine in a Web Worker", [
    ...layersAbove(['ui', 'server']),
    {
      group: ['node:*', ...nodeBuiltins, 'pg', 'ws'],
      message: 'src/worker runs in the browser: no Node modules.',
    },
  ]),
  ...runtimeZone('src/server', 'the Node runtime: worker processes, serve, dev', [
    ...layersAbove(['ui', 'worker', 'client']),
  ]),
  ...runtimeZone('src/client', "the studio's side of the protocol", [
    ...layersAbove(['ui', 'server']),
    {
      group: ['**/storage/**', 'node:*', ...nodeBuiltins, 'pg'],
      message: 'src/client talks to an engine host; it never opens storage.',
    },
  ]),
  {
    files: ['src/workflows/**/*.ts'],
    ignores: ['src/workflows/**/*.test.ts', 'src/workflows/**/*.test-support.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/engine/*', '!**/engine/index', '**/storage/**', '**/ui/**', '**/worker/**'],
              message: 'workflows import only the engine public API (src/engine/index.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow bodies are deterministic; see `nonDeterministic` above.
    files: ['src/workflows/**/*.ts'],
    ignores: ['src/workflows/**/*.test.ts', 'src/workflows/**/*.test-support.ts'],
    rules: { 'no-restricted-syntax': ['error', ...nonDeterministic] },
  },
  {
    files: ['src/ui/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/storage/**', 'dexie'],
              message: 'The UI never opens storage; it talks to the worker client.',
            },
            {
              // The engine's pure modules are the exception: one definition of statuses, timeline kinds, the
              // ownership invariants, payload measures and list rows, read by the UI at runtime instead of copied.
              group: [
                '**/engine/**',
                '!**/engine/vocabulary',
                '!**/engine/invariants',
                '!**/engine/codec',
                '!**/engine/list-row',
              ],
              allowTypeImports: true,
              message:
                'The UI imports only types from the engine (runtime values only from its pure modules engine/vocabulary, engine/invariants, engine/codec and engine/list-row).',
            },
            {
              // Of the layers below, the UI uses the client, its launcher and its pure source edits for the
              // editor; the wire contract is src/protocol.
              group: [
                '**/worker/**',
                '**/server/**',
                '**/host/**',
                '**/client/**',
                '!**/client/client',
                '!**/client/launch',
                '!**/client/source-edits',
              ],
              message:
                'The UI reaches engines only through the client (src/client/client.ts, started by src/client/launch.ts) and the wire contract (src/protocol).',
            },
          ],
        },
      ],
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
);
