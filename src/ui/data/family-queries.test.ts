import { describe, expect, it } from 'vitest';
import type { WorkflowDescription } from '../../public';
import { maxAncestors, readAncestors, workflowAncestorsQuery } from './family-queries';
import { queryKeys } from '../../public/react';

function notFound(): Error {
  return Object.assign(new Error('not found'), { name: 'WorkflowNotFoundError' });
}

/** A client whose workflows are `parents` (id → parent id; a missing id is not found). */
function familyClient(parents: Record<string, string | undefined>) {
  const asked: string[] = [];
  return {
    asked,
    describe: async (workflowId: string) => {
      asked.push(workflowId);
      if (!(workflowId in parents)) throw notFound();
      const parentId = parents[workflowId];
      return {
        workflowId,
        workflowType: 'order',
        version: 1,
        status: 'running',
        ...(parentId === undefined ? {} : { parentId }),
      } as WorkflowDescription;
    },
  };
}

describe('family queries', () => {
  it('reads the ancestors up the parent links, root first', async () => {
    const client = familyClient({ root: undefined, mid: 'root', parent: 'mid' });
    const ancestry = await readAncestors(client, 'parent');
    expect(ancestry.chain.map((ancestor) => ancestor.workflowId)).toEqual(['root', 'mid', 'parent']);
    expect(ancestry).toMatchObject({ missing: null, cut: false });
    expect(await readAncestors(client, undefined)).toEqual({ chain: [], missing: null, cut: false });
  });

  it('ends the walk at a purged ancestor and names it; other failures are errors', async () => {
    const ancestry = await readAncestors(familyClient({ parent: 'gone' }), 'parent');
    expect(ancestry).toMatchObject({ missing: 'gone', cut: false });
    expect(ancestry.chain.map((ancestor) => ancestor.workflowId)).toEqual(['parent']);
    const failing = { describe: () => Promise.reject(new Error('worker timed out')) };
    await expect(readAncestors(failing, 'parent')).rejects.toThrow('worker timed out');
  });

  it(`stops after ${maxAncestors} generations and says the ancestry was cut`, async () => {
    const parents: Record<string, string | undefined> = {};
    for (let generation = 0; generation < maxAncestors + 5; generation++)
      parents[`g${generation}`] = `g${generation + 1}`;
    const client = familyClient(parents);
    const ancestry = await readAncestors(client, 'g0');
    expect(ancestry.chain).toHaveLength(maxAncestors);
    expect(ancestry).toMatchObject({ missing: null, cut: true });
    expect(client.asked).toHaveLength(maxAncestors);
  });

  it('keys the ancestry under its workflow, so a change of the workflow reads it again', () => {
    const query = workflowAncestorsQuery(familyClient({}), 'w1', 'p1');
    expect(query.queryKey.slice(0, 3)).toEqual(queryKeys.workflow('w1'));
    expect(query.queryKey).toEqual(queryKeys.workflowAncestors('w1', 'p1'));
  });
});
