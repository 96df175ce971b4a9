/**
 * The definitions screen's two confirmations: renaming a saved version (saved under the new name, then the
 * old one deleted unless unfinished workflows still use it) and deleting one (refused while unfinished
 * workflows use it, with the worker's reason shown in the dialog).
 */
import { useState, type FormEvent } from 'react';
import type { DefinitionInfo } from '../../../public/browser';
import { withName } from './source-edits';
import { Button } from '../../components/Button';
import { Dialog } from '../../components/Dialog';
import { InlineError } from '../../components/ErrorNotice';
import { useDeleteDefinition, useSaveDefinition } from '../../data/definition-queries';
import { findDefinition } from '../../components/definition-catalog';
import styles from './DefinitionEditor.module.css';

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Why `name` cannot be the new name of `definition`, or null when it can. */
export function renameProblem(
  name: string,
  definition: DefinitionInfo,
  definitions: readonly DefinitionInfo[],
): string | null {
  if (name === definition.name) return 'That is its name already.';
  if (!namePattern.test(name))
    return 'Use 1–100 letters, digits, “.”, “_” or “-”, starting with a letter or digit.';
  const existing = findDefinition(definitions, name, definition.version);
  if (definitions.some((candidate) => candidate.builtIn && candidate.name === name))
    return `“${name}” is a built-in demo’s name.`;
  if (existing) return `“${name}” version ${definition.version} is saved already.`;
  return null;
}

export type RenameResult = { name: string; version: number; oldKept: string | null };

export function RenameDialog({
  definition,
  source,
  definitions,
  onClose,
  onRenamed,
}: {
  definition: DefinitionInfo | null;
  source: string;
  definitions: readonly DefinitionInfo[];
  onClose: () => void;
  onRenamed: (result: RenameResult) => void;
}) {
  return (
    <Dialog
      open={definition !== null}
      onClose={onClose}
      title="Rename definition"
      description="It is saved under the new name; the old name goes once no unfinished workflow uses it."
      width={480}
      testId="definitions.rename-dialog"
    >
      {definition ? (
        <RenameForm
          definition={definition}
          source={source}
          definitions={definitions}
          onClose={onClose}
          onRenamed={onRenamed}
        />
      ) : null}
    </Dialog>
  );
}

function RenameForm({
  definition,
  source,
  definitions,
  onClose,
  onRenamed,
}: {
  definition: DefinitionInfo;
  source: string;
  definitions: readonly DefinitionInfo[];
  onClose: () => void;
  onRenamed: (result: RenameResult) => void;
}) {
  const [name, setName] = useState(definition.name);
  const [failure, setFailure] = useState<string | null>(null);
  const save = useSaveDefinition();
  const remove = useDeleteDefinition();
  const trimmed = name.trim();
  const problem = trimmed === definition.name ? null : renameProblem(trimmed, definition, definitions);
  const busy = save.isPending || remove.isPending;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (problem || trimmed === definition.name || busy) return;
    const renamed = withName(source, trimmed);
    if (renamed === null) {
      setFailure('The source declares no name: “name: …” inside defineWorkflow({ … }). Edit it by hand.');
      return;
    }
    setFailure(null);
    try {
      const outcome = await save.mutateAsync({ source: renamed });
      if (!outcome.ok) {
        setFailure(
          outcome.reason === 'invalid'
            ? `It does not compile: ${outcome.diagnostics[0]?.message ?? 'see the problems'}`
            : outcome.message,
        );
        return;
      }
      const deleted = await remove.mutateAsync({ name: definition.name, version: definition.version });
      onRenamed({
        name: outcome.name,
        version: outcome.version,
        oldKept: deleted.ok ? null : deleted.message,
      });
    } catch (error) {
      setFailure(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
  };

  return (
    <form className={styles.dialogForm} onSubmit={(event) => void submit(event)} noValidate>
      <label htmlFor="definition-new-name" className={styles.dialogLabel}>
        New name
      </label>
      <input
        id="definition-new-name"
        className={`${styles.dialogInput} ${problem ? styles.dialogInputInvalid : ''}`}
        value={name}
        onChange={(event) => setName(event.target.value)}
        spellCheck={false}
        autoComplete="off"
        autoFocus
        aria-invalid={problem !== null}
        data-testid="definitions.rename-input"
      />
      {problem ? (
        <p className={styles.dialogProblem} role="alert">
          {problem}
        </p>
      ) : (
        <p className={styles.dialogHint}>
          Saved as <code>{trimmed || '…'}</code> version {definition.version}, with your unsaved edits.
        </p>
      )}
      {failure ? <InlineError error={new Error(failure)} testId="definitions.rename-error" /> : null}
      <div className={styles.dialogActions}>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
        <Button
          type="submit"
          variant="primary"
          icon="pencil"
          busy={busy}
          disabled={problem !== null || trimmed === definition.name}
          testId="definitions.rename-submit"
        >
          Rename
        </Button>
      </div>
    </form>
  );
}

export function DeleteDialog({
  definition,
  onClose,
  onDeleted,
}: {
  definition: DefinitionInfo | null;
  onClose: () => void;
  onDeleted: (definition: DefinitionInfo) => void;
}) {
  const remove = useDeleteDefinition();
  const [refusal, setRefusal] = useState<string | null>(null);
  const close = () => {
    setRefusal(null);
    remove.reset();
    onClose();
  };
  const confirm = () => {
    if (!definition) return;
    remove.mutate(
      { name: definition.name, version: definition.version },
      {
        onSuccess: (outcome) => {
          if (outcome.ok) {
            setRefusal(null);
            onDeleted(definition);
          } else setRefusal(outcome.message);
        },
      },
    );
  };
  return (
    <Dialog
      open={definition !== null}
      onClose={close}
      title={definition ? `Delete ${definition.name} version ${definition.version}?` : 'Delete'}
      description="Every tab forgets it. Workflows that finished on it keep their history."
      width={480}
      testId="definitions.delete-dialog"
      footer={
        <>
          <Button variant="secondary" onClick={close}>
            {refusal ? 'Close' : 'Cancel'}
          </Button>
          <Button
            variant="danger"
            icon="trash"
            onClick={confirm}
            busy={remove.isPending}
            disabled={refusal !== null}
            testId="definitions.delete-confirm"
          >
            Delete
          </Button>
        </>
      }
    >
      {refusal ? (
        <p className={styles.dialogProblem} role="alert" data-testid="definitions.delete-error">
          Not deleted: {refusal}
        </p>
      ) : remove.isError ? (
        <InlineError error={remove.error} testId="definitions.delete-error" />
      ) : (
        <p className={styles.dialogHint}>
          Its source is gone for good; copy it first if you may want it back. A version that unfinished
          workflows use is never deleted.
        </p>
      )}
    </Dialog>
  );
}
