import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresStorage } from './postgres';

describe('PostgresStorage.embedded (PGlite)', () => {
  it('keeps data in its folder across close and reopen, and declares itself durable', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'shuttle-pglite-test-'));
    const dataDir = join(parent, 'db');
    try {
      const first = await PostgresStorage.embedded({ dataDir, schema: 'app' });
      expect(first.capabilities).toEqual({
        conditionalBatch: true,
        durable: true,
        changeFeed: true,
        groupCommit: true,
      });
      const seen: string[][] = [];
      first.watch('k', (keys) => seen.push(keys));
      await first.batch([{ type: 'put', key: 'k\u{1F600}', value: 'nul\u0000value' }]);
      await first.close();
      expect(seen).toEqual([['k\u{1F600}']]);
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);

      const reopened = await PostgresStorage.embedded({ dataDir, schema: 'app' });
      try {
        expect(await reopened.get('k\u{1F600}')).toBe('nul\u0000value');
        expect(await reopened.conditionalBatch([{ key: 'k\u{1F600}', expected: 'nul\u0000value' }], [])).toBe(
          true,
        );
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 120_000); // two PGlite starts (WebAssembly): slow on a loaded 2-core machine
});
