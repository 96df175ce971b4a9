/**
 * What the editor knows of the workflow API, read from the engine's own declaration of it: the source text
 * of `src/engine/workflow.ts` (imported as text, so nothing of the engine runs in the page), from which the
 * members of `WorkflowContext` are parsed — name, signature, documentation. Nothing here is a copy of the
 * API: a member added, renamed or documented in the engine is what the editor offers on the next build.
 *
 * From it, without a type checker — what the editor offers until TypeScript's worker (type-checker.ts) has
 * answered, or when it cannot load:
 * - completion of `ctx.` (the first parameter of `*run(…)`, whatever it is called): every member with its
 *   signature and its documentation;
 * - type problems: `ctx.sleeep(100)` — a member the context does not have — is reported at its line and
 *   column with the nearest member's name, before anything runs (sucrase strips types without checking
 *   them, so the worker cannot say so: the workflow would fail at run time, "yield* … is not iterable").
 */
import type { CompletionContext, CompletionResult } from '@codemirror/autocomplete';
// The engine's source is read as text (Vite `?raw`): no engine code is loaded into the page.
import workflowSource from '../../../engine/workflow.ts?raw';

export type ApiMember = {
  name: string;
  /** The member as declared, on one line: `sleep(ms: number): Operation<void>`. */
  signature: string;
  /** Its documentation comment, as text (null when it has none). */
  doc: string | null;
  kind: 'method' | 'property';
};

/** A problem the editor finds in a definition's use of the API. Lines and columns are 1-based. */
export type ApiProblem = { kind: 'type'; message: string; line: number; column: number };

/** The members of the interface `name` declared in `source`, in declaration order (empty when absent). */
export function interfaceMembers(source: string, name: string): ApiMember[] {
  const start = new RegExp(`export\\s+interface\\s+${name}\\b`).exec(source);
  if (!start) return [];
  // The body opens at the first brace outside the type parameters (`<S = {}>`).
  let open = start.index + start[0].length;
  for (let angles = 0; open < source.length; open++) {
    const char = source[open];
    if (char === '<') angles++;
    else if (char === '>') angles--;
    else if (char === '{' && angles === 0) break;
  }
  const members: ApiMember[] = [];
  let depth = 1;
  let parens = 0;
  let text = '';
  let doc: string | null = null;
  for (let index = open + 1; index < source.length && depth > 0; index++) {
    const char = source[index]!;
    if (char === '/' && source[index + 1] === '*') {
      const end = source.indexOf('*/', index + 2);
      const comment = source.slice(index, end < 0 ? source.length : end + 2);
      if (depth === 1 && text.trim() === '') doc = commentText(comment);
      index = end < 0 ? source.length : end + 1;
      continue;
    }
    if (char === '/' && source[index + 1] === '/') {
      index = source.indexOf('\n', index);
      if (index < 0) break;
      continue;
    }
    if (char === '{') depth++;
    if (char === '}') depth--;
    if (char === '(') parens++;
    if (char === ')') parens--;
    if (depth === 0 || (depth === 1 && parens === 0 && char === ';')) {
      const member = memberOf(text, doc);
      if (member) members.push(member);
      text = '';
      doc = null;
      continue;
    }
    text += char;
  }
  return members;
}

function commentText(comment: string): string {
  return comment
    .replace(/^\/\*\*?/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .filter((line) => line.length > 0)
    .join(' ');
}

function memberOf(text: string, doc: string | null): ApiMember | null {
  const signature = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^readonly /, '')
    .replace(/([(<[]) /g, '$1')
    .replace(/ ([)>\]])/g, '$1');
  const match = /^([A-Za-z_$][\w$]*)\s*(\??)\s*([<(:])/.exec(signature);
  if (!match) return null;
  return {
    name: match[1]!,
    signature: signature.replace(/,(\s*[)>])/g, '$1'),
    doc,
    kind: match[3] === ':' ? 'property' : 'method',
  };
}

/** The workflow context's members (`ctx.`), from the engine's declaration. */
export const contextMembers: readonly ApiMember[] = interfaceMembers(workflowSource, 'WorkflowContext');

/** The name the source gives the workflow context: the first parameter of `*run(…)`, else `ctx`. */
export function contextName(source: string): string {
  return /\*\s*run\s*\(\s*([A-Za-z_$][\w$]*)/.exec(source)?.[1] ?? 'ctx';
}

/**
 * CodeMirror completion of `ctx.` (the context's name as the source gives it): every member, its signature
 * as the detail and its documentation as the info. Answers while typing after the dot.
 */
export function contextCompletions(context: CompletionContext): CompletionResult | null {
  const ctx = contextName(context.state.doc.toString()).replace(/\$/g, '\\$');
  const before = context.matchBefore(new RegExp(`(?<![\\w$.])${ctx}\\s*\\??\\.\\s*[\\w$]*$`));
  if (!before) return null;
  const word = /[\w$]*$/.exec(before.text)?.[0] ?? '';
  return {
    from: before.to - word.length,
    options: contextMembers.map((member) => ({
      label: member.name,
      type: member.kind,
      detail: member.signature.slice(member.name.length).replace(/^\??:\s*/, ': '),
      ...(member.doc ? { info: member.doc } : {}),
    })),
    validFor: /^[\w$]*$/,
  };
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** Every `ctx.<member>` of `source` naming a member the context does not have. */
export function contextProblems(
  source: string,
  members: readonly ApiMember[] = contextMembers,
): ApiProblem[] {
  if (members.length === 0) return [];
  const ctx = contextName(source);
  const known = new Set(members.map((member) => member.name));
  const problems: ApiProblem[] = [];
  const lines = withoutBlockComments(source).split('\n');
  const use = new RegExp(`(?<![\\w$.])${ctx.replace(/\$/g, '\\$')}\\s*\\??\\.\\s*([A-Za-z_$][\\w$]*)`, 'g');
  lines.forEach((line, index) => {
    const code = withoutCommentsAndStrings(line);
    for (const match of code.matchAll(use)) {
      const name = match[1]!;
      if (known.has(name)) continue;
      const nearest = [...known].sort((a, b) => distance(name, a) - distance(name, b))[0]!;
      const close = distance(name, nearest) <= Math.max(2, Math.floor(nearest.length / 3));
      problems.push({
        kind: 'type',
        message: `Property '${name}' does not exist on the workflow context (${ctx}).${close ? ` Did you mean '${nearest}'?` : ` It has: ${[...known].join(', ')}.`}`,
        line: index + 1,
        column: match.index + match[0].length - name.length + 1,
      });
    }
  });
  return problems;
}

/** `source` with its block comments blanked out (line breaks kept, so lines and columns stay). */
function withoutBlockComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '));
}

/** The line with its comments and string contents blanked out (same length, so columns stay). */
function withoutCommentsAndStrings(line: string): string {
  return line
    .replace(
      /(["'`])(?:\\.|(?!\1).)*\1/g,
      (literal) => literal[0] + ' '.repeat(literal.length - 2) + literal[0],
    )
    .replace(/\/\/.*$/, (comment) => ' '.repeat(comment.length));
}
