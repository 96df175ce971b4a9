/**
 * The built-in demo definitions, registered by every studio engine and shown (as source) in the editor.
 */
import type { AnyWorkflowDefinition } from '../engine';
import { countdown } from './countdown';

export { countdown };

export const builtInWorkflows: readonly AnyWorkflowDefinition[] = [countdown];
