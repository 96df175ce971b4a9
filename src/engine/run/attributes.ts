/**
 * `ctx.setAttributes`: the workflow's search attributes change on its record, and their index keys with it,
 * in this turn's commit — the same atomic batch that records the operation (commit.ts). A replay reads the
 * recorded entry and writes nothing; a crash before the commit leaves record, index and history as they
 * were, so the index never names a value the record does not hold.
 *
 * The entry's value is the changes applied (name → attribute, or null for a removal): what `fork` folds to
 * give a forked run the attributes of the history it copies (lifecycle.ts). A change the workflow may not
 * make (past the count limit, an index key past the storage key limit) is the operation's recorded failure, thrown into the workflow.
 */
import { storageLimits } from '../../storage/types';
import { utf8Bytes } from '../../storage/utf8';
import { applyAttributeChanges, attributeIndexPrefix, attributeIndexWrites } from '../attributes';
import type { Json } from '../codec';
import { InvalidSearchAttributeError, serializeError } from '../errors';
import { escapeId } from '../keys';
import type { HistoryEntry } from '../records';
import type { Command } from '../workflow';
import type { RunState } from './run-state';
import { entryOutcome, stripStack, type Outcome, type Turn } from './turn';

type SetAttributes = Extract<Command, { kind: 'set-attributes' }>;

export function setAttributes(
  run: Pick<RunState, 'id' | 'record'>,
  turn: Turn,
  command: SetAttributes,
  pos: number,
): Outcome {
  let entry: Extract<HistoryEntry, { t: 'op' }>;
  try {
    const before = run.record.attributes;
    const after = applyAttributeChanges(run.id, before, command.changes);
    const writes = attributeIndexWrites(escapeId(run.id), run.record.type, before, after);
    // The index key holds the id and the value: a long id with a long string could pass the key limit.
    for (const write of writes)
      if (write.type === 'put' && utf8Bytes(write.key) > storageLimits.maxKeyBytes)
        throw new InvalidSearchAttributeError(
          write.key.slice(attributeIndexPrefix.length).split(':')[0]!,
          `Workflow '${run.id}': an index key of this attribute would be ${utf8Bytes(write.key)} bytes, over the storage limit of ${storageLimits.maxKeyBytes} (the workflow id and the value share it); use a shorter value.`,
        );
    for (const write of writes)
      if (write.type === 'put') turn.put(write.key, write.value);
      else turn.delete(write.key);
    const record = { ...run.record };
    if (after) record.attributes = after;
    else delete record.attributes;
    run.record = record;
    turn.recordChanged = true;
    entry = {
      t: 'op',
      pos,
      kind: command.kind,
      name: command.name,
      ok: true,
      value: command.changes as Json,
    };
  } catch (error) {
    entry = {
      t: 'op',
      pos,
      kind: command.kind,
      name: command.name,
      ok: false,
      error: stripStack(serializeError(error)),
    };
  }
  turn.history.push(entry);
  turn.kinds.push(command.kind);
  // What the generator gets is built from the entry, exactly as a replay of it will build it.
  return entryOutcome(entry);
}
