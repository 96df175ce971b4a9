/**
 * The embedded store (PGlite in a folder) serves one store handle: a second open of an open folder — from
 * this process too — is refused before it touches the data, and the folder opens again once closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, StartupError } from './store';

const folder = mkdtempSync(join(tmpdir(), 'shuttle-store-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('openStore without a database URL', () => {
  it('refuses a second handle on an open embedded folder in the same process, and reopens it once closed', async () => {
    const dataDir = join(folder, 'db');
    const first = await openStore({ dataDir });
    try {
      await first.storage.batch([{ type: 'put', key: 'kept', value: 'by the first handle' }]);
      const second = openStore({ dataDir });
      await expect(second).rejects.toBeInstanceOf(StartupError);
      await expect(second).rejects.toThrow(
        /^The embedded store in .*db is already open in this process.*--database-url postgres:\/\//,
      );
      expect(await first.storage.get('kept')).toBe('by the first handle');
    } finally {
      await first.close();
    }
    const again = await openStore({ dataDir });
    try {
      expect(await again.storage.get('kept')).toBe('by the first handle');
    } finally {
      await again.close();
    }
  }, 60_000);
});
