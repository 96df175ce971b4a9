/**
 * The workflow definitions one engine has registered, by type (the definition's name) and version.
 * Registering a definition of the same name and version replaces it; nothing is ever unregistered. A
 * workflow keeps the version it started on (the run looks that version up, run/workflow-run.ts); starts,
 * schedules and queries of a workflow whose version is missing take the latest one.
 */
import { assertDefinition, type AnyWorkflowDefinition } from './workflow';

export class WorkflowDefinitions {
  readonly #byType = new Map<string, Map<number, AnyWorkflowDefinition>>();

  /** Adds or replaces `definition`, after checking its shape (`assertDefinition`). */
  register(definition: AnyWorkflowDefinition): void {
    assertDefinition(definition);
    const versions = this.#byType.get(definition.name) ?? new Map<number, AnyWorkflowDefinition>();
    versions.set(definition.version, definition);
    this.#byType.set(definition.name, versions);
  }

  /** Every registered definition. */
  all(): AnyWorkflowDefinition[] {
    return [...this.#byType.values()].flatMap((versions) => [...versions.values()]);
  }

  /** Whether some version of `type` is registered. */
  has(type: string): boolean {
    return this.#byType.has(type);
  }

  /** The definition of `type` at `version`, or its latest version when `version` is absent. */
  get(type: string, version?: number): AnyWorkflowDefinition | undefined {
    const versions = this.#byType.get(type);
    if (!versions) return undefined;
    if (version !== undefined) return versions.get(version);
    return versions.get(Math.max(...versions.keys()));
  }

  /** Every registered version of `type`. */
  versionsOf(type: string): AnyWorkflowDefinition[] {
    return [...(this.#byType.get(type)?.values() ?? [])];
  }

  /** Whether some registered definition sets its own `retentionMs`. */
  anyRetention(): boolean {
    return [...this.#byType.values()].some((versions) =>
      [...versions.values()].some((definition) => definition.retentionMs !== undefined),
    );
  }
}
