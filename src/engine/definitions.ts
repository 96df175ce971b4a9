/**
 * The workflow definitions one engine has registered, by type (the definition's name) and version.
 * Registering a definition of the same name and version replaces it; nothing is ever unregistered. A
 * workflow keeps the version it started on (the run looks that version up, run/workflow-run.ts); starts,
 * schedules and queries of a workflow whose version is missing take the latest one.
 */
import type { AttributeType } from './attributes';
import { assertDefinition, type AnyWorkflowDefinition } from './workflow';

export class WorkflowDefinitions {
  readonly #byType = new Map<string, Map<number, AnyWorkflowDefinition>>();

  /** Adds or replaces `definition`, after checking its shape (`assertDefinition`). */
  register(definition: AnyWorkflowDefinition): void {
    assertDefinition(definition);
    // One search attribute name, one type: its index keys, lists and filters read it as that type.
    for (const [name, type] of Object.entries(definition.attributes ?? {})) {
      const other = this.all().find(
        (d) =>
          !(d.name === definition.name && d.version === definition.version) &&
          d.attributes?.[name] !== undefined &&
          d.attributes[name] !== type,
      );
      if (other)
        throw new TypeError(
          `Workflow '${definition.name}' version ${definition.version} declares attribute '${name}' as '${type}', but '${other.name}' version ${other.version} declares it as '${other.attributes![name]}': one attribute name has one type (rename one of them).`,
        );
    }
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

  /** The type a registered definition declares for search attribute `name`. */
  attributeType(name: string): AttributeType | undefined {
    for (const definition of this.all()) {
      const type = definition.attributes?.[name];
      if (type) return type;
    }
    return undefined;
  }

  /** Whether some registered definition sets its own `retentionMs`. */
  anyRetention(): boolean {
    return [...this.#byType.values()].some((versions) =>
      [...versions.values()].some((definition) => definition.retentionMs !== undefined),
    );
  }
}
