import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";

const nodeBuiltins = [
  "fs",
  "path",
  "os",
  "crypto",
  "child_process",
  "worker_threads",
  "util",
  "events",
  "stream",
  "http",
  "net",
  "process",
  "perf_hooks",
  "timers",
  "url",
  "buffer",
  "assert",
];

export default tseslint.config(
  {
    ignores: [
      "dist",
      "node_modules",
      "test-results",
      "playwright-report",
      "bench/results",
      "bench/.build",
      ".test-reports",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrors: "none",
        },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
      // A workflow generator that finishes without yielding is valid.
      "require-yield": "off",
    },
  },
  {
    files: ["src/ui/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "react-hooks/set-state-in-effect": "off",
    },
  },
  {
    // The engine is environment-free: storage, clock, randomness and liveness are injected.
    files: ["src/engine/**/*.ts"],
    ignores: [
      "src/engine/**/*.test.ts",
      "src/engine/**/*.test-support.ts",
      "src/engine/**/*.soak*.ts",
    ],
    languageOptions: { globals: { ...globals.es2023 } },
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            "react",
            "react-dom",
            "dexie",
            "zustand",
            ...nodeBuiltins,
          ].map((name) => ({
            name,
            message:
              "src/engine must stay free of React, Dexie, DOM and Node imports.",
          })),
          patterns: [
            {
              group: ["node:*"],
              message: "src/engine must not import Node built-ins.",
            },
            {
              group: [
                "**/ui/**",
                "**/worker/**",
                "**/workflows/**",
                "@tanstack/*",
                "react-dom/*",
              ],
              message: "src/engine imports only storage types.",
            },
            {
              group: ["**/storage/indexeddb*", "**/storage/memory*"],
              message: "src/engine imports only storage types and errors.",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        "window",
        "document",
        "navigator",
        "localStorage",
        "indexedDB",
        "self",
        "process",
        "Buffer",
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "Use the injected clock." },
        {
          object: "Math",
          property: "random",
          message: "Use the injected random source.",
        },
      ],
    },
  },
  {
    files: ["src/storage/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/engine/**",
                "**/ui/**",
                "**/worker/**",
                "**/workflows/**",
              ],
              message: "storage imports nothing of ours.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/workflows/**/*.ts"],
    ignores: [
      "src/workflows/**/*.test.ts",
      "src/workflows/**/*.test-support.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/engine/*",
                "!**/engine/index",
                "**/storage/**",
                "**/ui/**",
                "**/worker/**",
              ],
              message:
                "workflows import only the engine public API (src/engine/index.ts).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/ui/**/*.{ts,tsx}"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/storage/**", "dexie"],
              message:
                "The UI never opens storage; it talks to the worker client.",
            },
            {
              // The engine's pure modules are the exception: one definition of statuses, timeline kinds, the
              // ownership invariants and payload measures, read by the UI at runtime instead of copied.
              group: [
                "**/engine/**",
                "!**/engine/vocabulary",
                "!**/engine/invariants",
                "!**/engine/codec",
              ],
              allowTypeImports: true,
              message:
                "The UI imports only types from the engine (runtime values only from its pure modules engine/vocabulary, engine/invariants and engine/codec).",
            },
          ],
        },
      ],
    },
  },
);
