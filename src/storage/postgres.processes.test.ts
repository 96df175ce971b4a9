/**
 * PostgresStorage from several operating-system processes at once: each child process is plain Node
 * running the adapter itself (src/storage transpiled to JavaScript by TypeScript), on one shared schema.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from './postgres';
import { createTestDatabase, freshSchema, type TestDatabase } from './postgres.test-support';

const storageDir = fileURLToPath(new URL('.', import.meta.url));
const repositoryRoot = join(storageDir, '..', '..');
// Inside the repository, so that the children resolve `pg` from its node_modules.
const buildDir = join(repositoryRoot, 'node_modules', '.cache', `shuttle-postgres-processes-${process.pid}`);

/** Transpiles src/storage (without tests) to ES modules in `buildDir`, with `.js` import specifiers. */
function buildStorage(): void {
  mkdirSync(buildDir, { recursive: true });
  for (const file of readdirSync(storageDir)) {
    if (!file.endsWith('.ts') || /\.test(-support)?\.ts$/.test(file)) continue;
    const source = readFileSync(join(storageDir, file), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    const withExtensions = outputText.replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\2/g, '$1$2$3.js$2');
    writeFileSync(join(buildDir, file.replace(/\.ts$/, '.js')), withExtensions);
  }
  writeFileSync(join(buildDir, 'package.json'), '{ "type": "module" }');
  writeFileSync(
    join(buildDir, 'increment.js'),
    `import { PostgresStorage } from './postgres.js';
const [url, schema, name, loops, increments, startAt] = process.argv.slice(2);
const storage = await PostgresStorage.open({ connectionString: url, schema, maxConnections: Number(loops) });
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
let conflicts = 0;
let done = 0;
async function loop() {
  while (done < Number(increments)) {
    done++;
    for (;;) {
      const current = await storage.get('counter');
      const next = String(Number(current ?? '0') + 1);
      const applied = await storage.conditionalBatch(
        [{ key: 'counter', expected: current }, { key: 'by:' + next, expected: null }],
        [{ type: 'put', key: 'counter', value: next }, { type: 'put', key: 'by:' + next, value: name }],
      );
      if (applied) break;
      conflicts++;
    }
  }
}
await Promise.all(Array.from({ length: Number(loops) }, loop));
await storage.close();
process.stdout.write(JSON.stringify({ name, conflicts }));
`,
  );
}

function runChild(args: string[]): Promise<{ name: string; conflicts: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(buildDir, 'increment.js'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(stdout) as { name: string; conflicts: number });
      else reject(new Error(`child ${args[2]} exited with ${code}: ${stderr}`));
    });
  });
}

let database: TestDatabase;
beforeAll(async () => {
  buildStorage();
  database = await createTestDatabase();
});
afterAll(async () => {
  rmSync(buildDir, { recursive: true, force: true });
  await database?.drop();
});

describe('PostgresStorage across processes', () => {
  it('4 processes × 250 compare-and-swap increments of one key end at exactly 1,000, each value won once', async () => {
    const schema = freshSchema();
    const storage = await PostgresStorage.open({ connectionString: database.url, schema, maxConnections: 2 });
    try {
      const startAt = String(Date.now() + 1500); // all children start incrementing together
      const children = await Promise.all(
        ['p0', 'p1', 'p2', 'p3'].map((name) => runChild([database.url, schema, name, '2', '250', startAt])),
      );
      expect(await storage.get('counter')).toBe('1000');
      const winners = await storage.scan('by:');
      expect(winners).toHaveLength(1000);
      const perProcess = new Map<string, number>();
      for (const { value } of winners) perProcess.set(value, (perProcess.get(value) ?? 0) + 1);
      expect(Object.fromEntries(perProcess)).toEqual({ p0: 250, p1: 250, p2: 250, p3: 250 });
      const conflicts = children.reduce((sum, child) => sum + child.conflicts, 0);
      expect(conflicts, 'the processes must have raced, or this proves nothing').toBeGreaterThan(0);
    } finally {
      await storage.close();
    }
  });
});
