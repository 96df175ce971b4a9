/**
 * The demos' replay corpus (fixtures/histories, recorded by scripts/record-demo-histories.ts): histories of
 * every demo on its sample input, finished and in flight. Each replays clean against the demos' code as it
 * is — a change to a demo that would break its running workflows fails here — and a demo changed at one
 * operation is caught at exactly that position.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  defineWorkflow,
  historiesIn,
  replay,
  type AnyWorkflowDefinition,
  type RecordedHistory,
  type WorkflowContext,
} from '../engine';
import { builtInWorkflows } from './index';

const folder = new URL('./fixtures/histories/', import.meta.url);
const histories: RecordedHistory[] = readdirSync(folder)
  .filter((name) => name.endsWith('.json'))
  .flatMap((name) => historiesIn(JSON.parse(readFileSync(new URL(name, folder), 'utf8')), name));

/** `definition`, changed to run one more activity before its operation #`at`. */
function changedAt(definition: AnyWorkflowDefinition, at: number): AnyWorkflowDefinition {
  return defineWorkflow({
    ...definition,
    *run(ctx: WorkflowContext, input: unknown) {
      const inner = definition.run(ctx as never, input as never);
      let step = inner.next();
      for (let pos = 0; !step.done; pos++) {
        if (pos === at) yield* ctx.activity('injected', () => null);
        let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
        try {
          outcome = { ok: true, value: yield step.value };
        } catch (error) {
          outcome = { ok: false, error };
        }
        step = outcome.ok ? inner.next(outcome.value) : inner.throw(outcome.error);
      }
      return step.value;
    },
  } as AnyWorkflowDefinition);
}

describe('the demos’ replay corpus', () => {
  it('holds every demo type, finished and in flight', () => {
    const types = new Set(histories.map((history) => history.workflowType));
    for (const definition of builtInWorkflows) expect(types, definition.name).toContain(definition.name);
    expect(histories.some((history) => history.status === 'running')).toBe(true);
    expect(histories.some((history) => history.status === 'completed')).toBe(true);
  });

  it.each(histories.map((history) => [history.workflowId, history] as const))(
    '%s replays clean against the demos as they are',
    (_id, history) => {
      expect(replay(builtInWorkflows, history)).toMatchObject({ ok: true, operations: history.position });
    },
  );

  it('a demo changed at one operation diverges at exactly that position', () => {
    const countdown = histories.find((history) => history.workflowType === 'countdown')!;
    expect(countdown.position).toBeGreaterThan(8);
    const changed = changedAt(
      builtInWorkflows.find((definition) => definition.name === 'countdown')!,
      7,
    );
    expect(replay([changed], countdown)).toMatchObject({
      ok: false,
      problem: 'diverged',
      position: 7,
      replayed: "activity 'injected'",
    });
    // Changed after the last recorded operation of a run in flight: it still replays.
    const order = histories.find((history) => history.workflowId === 'demo-order')!;
    expect(order).toMatchObject({ status: 'running', position: 2 });
    // (`changedAt` counts yields: the order's ctx.patched('search-attributes'), false on these histories, is
    // one more yield before its first operation, so operation #3 is yield #4.)
    const laterChange = changedAt(
      builtInWorkflows.find((definition) => definition.name === 'order')!,
      4,
    );
    expect(replay([laterChange], order)).toMatchObject({ ok: true });
  });
});
