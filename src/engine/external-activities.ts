/**
 * External completion: an activity declared `completion: 'external'` is finished by `completeActivity` or
 * `failActivity`, called with its completion token on any engine sharing the store.
 *
 * The token names the activity's place — workflow id, run, position and member (`act1:<run>:<pos>:<member>:
 * <id>`) — not its attempt, so an attempt run again (a retry, or a takeover) hands out the same token.
 *
 * Exactly once: a completion is a record `act-done:<id>:<run>:<pos>:<member>` written under two conditions —
 * no completion is stored there, and the workflow's checkpoint is exactly the one just read, in which the
 * activity still waits. The owner's commit that takes the completion into the run (its turn is fenced like
 * every write of the run) marks the activity done and deletes the record together; so once one completion
 * was accepted, every later one finds either the record or the activity done, and is refused with
 * `ActivityCompletionRefusedError`. A checkpoint that moved for another reason (another branch of
 * `ctx.all`) only makes the completion look again.
 */
import type { Storage } from '../storage/types';
import { normalizePayload, type Json } from './codec';
import {
  ActivityCompletionRefusedError,
  CorruptRecordError,
  EngineLeaseNotHeldError,
  InvalidArgumentError,
  WorkflowNotFoundError,
  type SerializedError,
} from './errors';
import { keys } from './keys';
import type { FencedWriter } from './ownership/fenced-write';
import { currentCheckpoint, lastLogRecord } from './checkpoint';
import { decodeRecord, isTerminal } from './records';
import { commitRecordKey } from './workflow-writes';

const tokenPattern = /^act1:(\d{1,9}):(\d{1,10}):(\d{1,4}):(.+)$/s;

export type CompletionToken = { workflowId: string; run: number; pos: number; member: number };

export function completionToken(workflowId: string, run: number, pos: number, member: number): string {
  return `act1:${run}:${pos}:${member}:${workflowId}`;
}

export function parseCompletionToken(token: unknown): CompletionToken {
  const match = typeof token === 'string' ? tokenPattern.exec(token) : null;
  if (!match)
    throw new InvalidArgumentError(
      `${JSON.stringify(String(token).slice(0, 80))} is not an activity completion token (it looks like "act1:1:3:0:order-7"; an external activity's function receives it as context.completionToken).`,
    );
  return { run: Number(match[1]), pos: Number(match[2]), member: Number(match[3]), workflowId: match[4]! };
}

/** A stored completion. */
export type ActivityCompletion =
  | { ok: true; value?: Json; at: number; by: string }
  | { ok: false; error: { name: string; message: string }; at: number; by: string };

export function decodeActivityCompletion(key: string, raw: string): ActivityCompletion {
  try {
    const value = JSON.parse(raw) as ActivityCompletion;
    if (value && typeof value === 'object' && typeof value.at === 'number' && typeof value.ok === 'boolean')
      if (value.ok || (typeof value.error?.message === 'string' && typeof value.error.name === 'string'))
        return value;
  } catch {
    // fall through
  }
  throw new CorruptRecordError(key, 'an activity completion must be { ok, value | error, at, by }');
}

export type ExternalActivitiesDeps = {
  storage: Storage;
  writer: FencedWriter;
  engineId: string;
  now(): number;
  maxPayloadBytes: number;
  /** The completion was stored: wake the run if this engine drives it. */
  stored(workflowId: string): void;
};

/** Where the token's activity stands, as read now. */
type Standing = { checkpointRaw: string; anchor: string; name: string } | { refused: string };

export class ExternalActivities {
  readonly #deps: ExternalActivitiesDeps;

  constructor(deps: ExternalActivitiesDeps) {
    this.#deps = deps;
  }

  /** Completes the external activity `token` names with `result` (plain JSON). */
  complete(token: string, result: unknown): Promise<void> {
    const parsed = parseCompletionToken(token);
    const value = normalizePayload(
      result,
      `Result of the external activity of workflow '${parsed.workflowId}'`,
      this.#deps.maxPayloadBytes,
    ) as Json | undefined;
    return this.#store(token, parsed, {
      ok: true,
      ...(value === undefined ? {} : { value }),
      at: this.#deps.now(),
      by: this.#deps.engineId,
    });
  }

  /** Fails the external activity `token` names; its retry policy applies as to any failed attempt. */
  fail(token: string, error: unknown): Promise<void> {
    const parsed = parseCompletionToken(token);
    const serialized = asError(error);
    return this.#store(token, parsed, {
      ok: false,
      error: serialized,
      at: this.#deps.now(),
      by: this.#deps.engineId,
    });
  }

  async #store(token: string, parsed: CompletionToken, completion: ActivityCompletion): Promise<void> {
    const { writer } = this.#deps;
    const { workflowId, run, pos, member } = parsed;
    const key = keys.activityCompletion(workflowId, run, pos, member);
    for (let attempt = 0; attempt < 50; attempt++) {
      const standing = await this.#standing(parsed, key);
      if ('refused' in standing) throw new ActivityCompletionRefusedError(token, standing.refused);
      const outcome = await writer.write(
        null,
        [
          { key, expected: null },
          // The checkpoint read is still current (checkpoint.ts): not rewritten, nothing appended after it.
          { key: keys.checkpoint(workflowId), expected: standing.checkpointRaw },
          { key: standing.anchor, expected: null },
        ],
        [{ type: 'put', key, value: JSON.stringify(completion) }],
        `complete activity '${standing.name}' of '${workflowId}'`,
      );
      if (outcome.ok) {
        this.#deps.stored(workflowId);
        return;
      }
      if (outcome.reason === 'deposed') throw new EngineLeaseNotHeldError(this.#deps.engineId);
    }
    throw new ActivityCompletionRefusedError(token, 'its workflow is changing too fast; try again');
  }

  async #standing(token: CompletionToken, key: string): Promise<Standing> {
    const { workflowId, run, pos, member } = token;
    const [[recordRaw, checkpointRaw, stored], last] = await Promise.all([
      this.#deps.storage.getMany([keys.record(workflowId), keys.checkpoint(workflowId), key]),
      lastLogRecord(this.#deps.storage, workflowId),
    ]);
    if (!recordRaw || !checkpointRaw) throw new WorkflowNotFoundError(workflowId);
    if (stored) return { refused: 'it was already completed or failed (the completion is being applied)' };
    const record = decodeRecord(keys.record(workflowId), recordRaw);
    if (record.run !== run) return { refused: `run ${run} of workflow '${workflowId}' has ended` };
    if (isTerminal(record.status)) return { refused: `workflow '${workflowId}' is ${record.status}` };
    const current = await currentCheckpoint(this.#deps.storage, workflowId, checkpointRaw, last);
    if (!current) throw new WorkflowNotFoundError(workflowId);
    const { checkpoint } = current;
    const frontier = checkpoint.frontier;
    const leaf =
      frontier?.pos === pos ? frontier.leaves.find((candidate) => candidate.member === member) : undefined;
    if (!frontier || frontier.pos < pos || (frontier.pos === pos && !leaf))
      return { refused: 'the workflow has not reached that activity' };
    if (frontier.pos > pos || leaf!.done) return { refused: 'it was already completed or failed' };
    if (leaf!.kind !== 'activity' || leaf!.external !== true)
      return { refused: `'${leaf!.name}' is not an external activity` };
    return {
      checkpointRaw: current.storedRaw,
      anchor: commitRecordKey(workflowId, run, checkpoint),
      name: leaf!.name,
    };
  }
}

function asError(error: unknown): { name: string; message: string } {
  if (typeof error === 'string') return { name: 'Error', message: error };
  if (error && typeof error === 'object' && typeof (error as SerializedError).message === 'string') {
    const { name, message } = error as { name?: unknown; message: string };
    return { name: typeof name === 'string' && name.length > 0 ? name : 'Error', message };
  }
  throw new InvalidArgumentError(
    'failActivity needs an error: an Error, { name?, message } or a message string.',
  );
}
