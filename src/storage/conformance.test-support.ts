/**
 * Runs the storage conformance suite (conformance-cases.test-support.ts) as Vitest tests: one test per case,
 * named by the case, skipped when the adapter lacks the capability the case needs.
 */

import { describe, it } from 'vitest';
import { storageConformanceCases, type StorageConformanceFactory } from './conformance-cases.test-support';

/**
 * @example
 * describeStorageConformance('MemoryStorage', async () => {
 *   const storage = new MemoryStorage();
 *   return { storage, openPeer: async () => storage };
 * });
 */
export function describeStorageConformance(name: string, factory: StorageConformanceFactory): void {
  describe(`${name} conforms to the storage contract`, () => {
    for (const conformanceCase of storageConformanceCases(factory)) {
      it(conformanceCase.name, async (context) => {
        const outcome = await conformanceCase.run();
        if (outcome === 'skipped')
          context.skip(`${name} does not declare ${conformanceCase.requires ?? 'it'}`);
      });
    }
  });
}
