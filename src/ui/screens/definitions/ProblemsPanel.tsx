/**
 * Under the editor: what the worker found when it last compiled the source — each problem with its kind,
 * message and position (a click puts the cursor there), or that it compiles, and under which name and
 * version. Says so while the latest text is still being checked.
 */
import type { DefinitionDiagnostic } from '../../../public/browser';
import { Icon } from '../../components/icons';
import styles from './DefinitionEditor.module.css';
import type { TypeProblem } from './type-checker';
import type { ApiProblem } from './workflow-api';

/**
 * A problem shown: the engine worker's (compiling and loading the module), TypeScript's (`type`, and `syntax`
 * as its parser words it), or the editor's quick check of `ctx` members while TypeScript is not there yet.
 */
export type ShownDiagnostic = DefinitionDiagnostic | ApiProblem | TypeProblem;

/** The worker's compile report, with the editor's own problems added. */
export type ShownReport =
  { ok: true; name: string; version: number } | { ok: false; diagnostics: ShownDiagnostic[] };

const kindLabels: Record<ShownDiagnostic['kind'], string> = {
  syntax: 'Syntax',
  evaluation: 'Loading',
  export: 'Export',
  determinism: 'Determinism',
  type: 'Type',
};

export function ProblemsPanel({
  report,
  checking,
  error,
  onReveal,
  typeCheckError = null,
}: {
  report: ShownReport | undefined;
  checking: boolean;
  error: Error | null;
  /** Why TypeScript could not check the source (its worker did not load); the quick check stands in. */
  typeCheckError?: Error | null;
  onReveal: (line: number, column: number) => void;
}) {
  const problems = report && !report.ok ? report.diagnostics : [];
  let status;
  if (error && !report)
    status = (
      <span className={styles.statusBad} data-testid="definitions.compile-status" data-state="error">
        Could not check it: {error.message}
      </span>
    );
  else if (!report)
    status = (
      <span className={styles.statusMuted} data-testid="definitions.compile-status" data-state="checking">
        Checking…
      </span>
    );
  else if (report.ok)
    status = (
      <span className={styles.statusGood} data-testid="definitions.compile-status" data-state="ok">
        <Icon name="check" size={14} /> Compiles as <code>{report.name}</code> version {report.version}
      </span>
    );
  else
    status = (
      <span className={styles.statusBad} data-testid="definitions.compile-status" data-state="problems">
        {problems.length === 1 ? '1 problem' : `${problems.length} problems`} — it cannot be saved until fixed
      </span>
    );
  return (
    <section className={styles.problems} aria-label="Problems" data-testid="definitions.problems">
      <header className={styles.problemsHeader}>
        <h3 className={styles.problemsTitle}>
          Problems
          <span className={problems.length > 0 ? styles.problemCountBad : styles.problemCount}>
            {problems.length}
          </span>
        </h3>
        {status}
        {checking && report ? <span className={styles.checking}>checking the latest edit…</span> : null}
        {typeCheckError ? (
          <span className={styles.checking} data-testid="definitions.type-check-error">
            Types not checked: {typeCheckError.message}
          </span>
        ) : null}
      </header>
      {problems.length > 0 ? (
        <ul className={styles.problemList}>
          {problems.map((problem, index) => (
            <li key={index}>
              <button
                type="button"
                className={styles.problem}
                onClick={() => onReveal(problem.line, problem.column)}
                data-testid="definitions.problem"
                data-line={problem.line}
                data-column={problem.column}
                data-kind={problem.kind}
                title="Show in the editor"
              >
                <Icon name="alert" size={14} className={styles.problemIcon} />
                <span className={styles.problemKind}>{kindLabels[problem.kind]}</span>
                <span className={styles.problemMessage}>{problem.message}</span>
                <span className={styles.problemPosition}>
                  line {problem.line}, column {problem.column}
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
