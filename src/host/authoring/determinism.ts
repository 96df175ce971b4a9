/**
 * The determinism check of authored definitions: which code may not run in a workflow body, and a static
 * check that finds it in a module's syntax tree.
 *
 * A workflow body is re-run from the start after every reload and handoff, so it must take time,
 * randomness, ids and waiting only from `ctx`, and leave I/O to activities (README "Determinism rules").
 * What counts as the body, here and in the lint of src/workflows (eslint.config.js, the same table):
 *
 * - the body is a generator function that is the value of a property named `run` in an object literal
 *   (`*run(ctx, input) { … }` in `defineWorkflow({ … })`), including everything lexically nested in it —
 *   arrow functions, callbacks, `ctx.waitUntil` predicates;
 * - except a function written as the second argument of a `….activity(name, fn, …)` call: that is activity
 *   code, which may do anything;
 * - code outside the body (module-level helpers, even when the body calls them; query and update handlers)
 *   is not checked here. The runtime trap (determinism-trap.ts) catches the calls the body makes through
 *   helpers, as it runs.
 *
 * Unlike the lint, this check is scope-aware: a name is flagged only when it refers to the global (a local
 * variable or parameter named `fetch` is not). Reaching a global through another object (`globalThis.Date`)
 * is not detected.
 */

/** One kind of non-deterministic code: what it is called, and what to use instead (or why it is barred). */
export type NonDeterministicApi = {
  /** How the code is named in messages, e.g. `Date.now()`. */
  label: string;
  /** The `ctx` operation to use instead, when there is one. */
  instead?: string;
  /** Why it cannot run in the body, when no `ctx` operation replaces it. */
  reason?: string;
};

/** Every API the body may not use, by the name the check reports it under. */
export const nonDeterministicApis = {
  'Date.now()': { label: 'Date.now()', instead: 'yield* ctx.now()' },
  'new Date()': { label: 'new Date()', instead: 'yield* ctx.now()' },
  'Date()': { label: 'Date()', instead: 'yield* ctx.now()' },
  performance: { label: 'performance', instead: 'yield* ctx.now()' },
  'Math.random()': { label: 'Math.random()', instead: 'yield* ctx.random()' },
  crypto: { label: 'crypto', instead: 'yield* ctx.uuid() or yield* ctx.random()' },
  setTimeout: { label: 'setTimeout', instead: 'yield* ctx.sleep(ms)' },
  setInterval: { label: 'setInterval', instead: 'yield* ctx.sleep(ms) in a loop' },
  setImmediate: { label: 'setImmediate', instead: 'yield* ctx.sleep(ms)' },
  queueMicrotask: { label: 'queueMicrotask', reason: "runs code outside the workflow's steps" },
  fetch: { label: 'fetch', reason: 'does I/O' },
  XMLHttpRequest: { label: 'XMLHttpRequest', reason: 'does I/O' },
  WebSocket: { label: 'WebSocket', reason: 'does I/O' },
  indexedDB: { label: 'indexedDB', reason: 'does I/O' },
  localStorage: { label: 'localStorage', reason: 'does I/O' },
  process: { label: 'process', reason: 'reads the environment' },
  require: { label: 'require', reason: 'loads code at run time' },
  'import()': { label: 'import()', reason: 'loads code at run time' },
} as const satisfies Record<string, NonDeterministicApi>;

export type NonDeterministicApiName = keyof typeof nonDeterministicApis;

/** Globals barred by any use as a value in the body (the others are barred only in the forms above). */
const barredGlobals: ReadonlySet<string> = new Set([
  'performance',
  'crypto',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'queueMicrotask',
  'fetch',
  'XMLHttpRequest',
  'WebSocket',
  'indexedDB',
  'localStorage',
  'process',
  'require',
] satisfies NonDeterministicApiName[]);

/** The message for code found in a body, as the lint words it. */
export function determinismMessage(name: NonDeterministicApiName): string {
  const api: NonDeterministicApi = nonDeterministicApis[name];
  return api.instead
    ? `Workflow code must be deterministic: use ${api.instead} instead of ${api.label} — or move this into an activity.`
    : `Workflow code must be deterministic: ${api.label} ${api.reason} — move this into an activity.`;
}

/** Non-deterministic code found in a body, at the start of the offending expression (as parsed). */
export type Finding = {
  api: NonDeterministicApiName;
  message: string;
  /** 1-based, in the parsed code. */
  line: number;
  /** 0-based, in the parsed code. */
  column: number;
};

/** An ESTree node as acorn produces it with `locations: true`. */
export type EstreeNode = {
  type: string;
  start: number;
  loc?: { start: { line: number; column: number } } | null;
  [field: string]: unknown;
};

const notChildren = new Set(['type', 'start', 'end', 'loc', 'range']);

function isNode(value: unknown): value is EstreeNode {
  return typeof value === 'object' && value !== null && typeof (value as EstreeNode).type === 'string';
}

function child(node: EstreeNode, field: string): EstreeNode | null {
  const value = node[field];
  return isNode(value) ? value : null;
}

function children(node: EstreeNode, field: string): EstreeNode[] {
  const value = node[field];
  return Array.isArray(value) ? value.filter(isNode) : [];
}

function isIdentifier(node: EstreeNode | null, name?: string): boolean {
  return node?.type === 'Identifier' && (name === undefined || node.name === name);
}

function isFunction(node: EstreeNode | null): boolean {
  return node?.type === 'FunctionExpression' || node?.type === 'ArrowFunctionExpression';
}

/** Where declarations are recorded. */
type Declarations = { declare(name: string): void };

class Scope implements Declarations {
  readonly #names = new Set<string>();
  constructor(readonly parent: Scope | null) {}

  declare(name: string): void {
    this.#names.add(name);
  }

  /** Whether `name` refers to a declaration of the module rather than to a global. */
  declares(name: string): boolean {
    return this.#names.has(name) || (this.parent?.declares(name) ?? false);
  }
}

/** The names a binding pattern declares. */
function patternNames(pattern: EstreeNode | null, names: string[] = []): string[] {
  if (!pattern) return names;
  switch (pattern.type) {
    case 'Identifier':
      names.push(pattern.name as string);
      break;
    case 'ObjectPattern':
      for (const property of children(pattern, 'properties'))
        patternNames(
          property.type === 'RestElement' ? child(property, 'argument') : child(property, 'value'),
          names,
        );
      break;
    case 'ArrayPattern':
      for (const element of children(pattern, 'elements')) patternNames(element, names);
      break;
    case 'AssignmentPattern':
      patternNames(child(pattern, 'left'), names);
      break;
    case 'RestElement':
      patternNames(child(pattern, 'argument'), names);
      break;
  }
  return names;
}

/** Declares the let/const/class/function/import bindings made directly by `statements`. */
function declareLexical(statements: readonly EstreeNode[], scope: Declarations): void {
  for (let statement of statements) {
    if (
      (statement.type === 'ExportNamedDeclaration' || statement.type === 'ExportDefaultDeclaration') &&
      child(statement, 'declaration')
    )
      statement = child(statement, 'declaration')!;
    if (statement.type === 'VariableDeclaration' && statement.kind !== 'var')
      for (const declarator of children(statement, 'declarations'))
        for (const name of patternNames(child(declarator, 'id'))) scope.declare(name);
    else if (
      (statement.type === 'FunctionDeclaration' || statement.type === 'ClassDeclaration') &&
      isIdentifier(child(statement, 'id'))
    )
      scope.declare(child(statement, 'id')!.name as string);
    else if (statement.type === 'ImportDeclaration')
      for (const specifier of children(statement, 'specifiers'))
        scope.declare(child(specifier, 'local')!.name as string);
  }
}

/** Declares the `var` bindings made anywhere in `node`, without entering nested functions. */
function declareVars(node: EstreeNode, scope: Declarations): void {
  if (node.type === 'VariableDeclaration' && node.kind === 'var')
    for (const declarator of children(node, 'declarations'))
      for (const name of patternNames(child(declarator, 'id'))) scope.declare(name);
  for (const [field, value] of Object.entries(node)) {
    if (notChildren.has(field)) continue;
    for (const item of Array.isArray(value) ? value : [value])
      if (isNode(item) && !isFunction(item) && item.type !== 'FunctionDeclaration') declareVars(item, scope);
  }
}

/** The names `program` declares at its top level (its imports included). */
export function topLevelNames(program: EstreeNode): Set<string> {
  const names = new Set<string>();
  const collect: Declarations = { declare: (name) => names.add(name) };
  declareVars(program, collect);
  declareLexical(children(program, 'body'), collect);
  return names;
}

/**
 * Finds the non-deterministic code of the workflow bodies in `program` (an ESTree `Program`, as acorn parses
 * it with `locations: true`), in source order. See the module header for what counts as the body.
 */
export function findNonDeterministicCode(program: EstreeNode): Finding[] {
  const findings: Finding[] = [];
  let bodyDepth = 0;
  let activityDepth = 0;

  const report = (node: EstreeNode, api: NonDeterministicApiName) => {
    if (bodyDepth === 0 || activityDepth > 0) return;
    const start = node.loc?.start ?? { line: 1, column: 0 };
    findings.push({ api, message: determinismMessage(api), line: start.line, column: start.column });
  };
  const isGlobal = (node: EstreeNode | null, name: string, scope: Scope) =>
    isIdentifier(node, name) && !scope.declares(name);

  const visitAll = (nodes: readonly EstreeNode[], scope: Scope) => {
    for (const node of nodes) visit(node, scope);
  };

  /** Visits what a binding pattern evaluates (defaults, computed keys), not the names it binds. */
  const visitPattern = (pattern: EstreeNode | null, scope: Scope): void => {
    if (!pattern) return;
    switch (pattern.type) {
      case 'ObjectPattern':
        for (const property of children(pattern, 'properties')) {
          if (property.type === 'RestElement') visitPattern(child(property, 'argument'), scope);
          else {
            if (property.computed) visit(child(property, 'key')!, scope);
            visitPattern(child(property, 'value'), scope);
          }
        }
        break;
      case 'ArrayPattern':
        for (const element of children(pattern, 'elements')) visitPattern(element, scope);
        break;
      case 'AssignmentPattern':
        visitPattern(child(pattern, 'left'), scope);
        visit(child(pattern, 'right')!, scope);
        break;
      case 'RestElement':
        visitPattern(child(pattern, 'argument'), scope);
        break;
      case 'Identifier':
        break;
      default: // a member expression as an assignment target
        visit(pattern, scope);
    }
  };

  const visitFunction = (fn: EstreeNode, outer: Scope, role: 'body' | 'activity' | null) => {
    const scope = new Scope(outer);
    if (fn.type === 'FunctionExpression' && isIdentifier(child(fn, 'id')))
      scope.declare(child(fn, 'id')!.name as string);
    for (const param of children(fn, 'params')) for (const name of patternNames(param)) scope.declare(name);
    const body = child(fn, 'body')!;
    declareVars(body, scope);
    if (body.type === 'BlockStatement') declareLexical(children(body, 'body'), scope);
    if (role === 'body') bodyDepth++;
    if (role === 'activity') activityDepth++;
    try {
      for (const param of children(fn, 'params')) visitPattern(param, scope);
      if (body.type === 'BlockStatement') visitAll(children(body, 'body'), scope);
      else visit(body, scope);
    } finally {
      if (role === 'body') bodyDepth--;
      if (role === 'activity') activityDepth--;
    }
  };

  const visitChildren = (node: EstreeNode, scope: Scope) => {
    for (const [field, value] of Object.entries(node)) {
      if (notChildren.has(field)) continue;
      if (Array.isArray(value)) visitAll(value.filter(isNode), scope);
      else if (isNode(value)) visit(value, scope);
    }
  };

  const visit = (node: EstreeNode, scope: Scope): void => {
    switch (node.type) {
      case 'Identifier':
        if (barredGlobals.has(node.name as string) && !scope.declares(node.name as string))
          report(node, node.name as NonDeterministicApiName);
        return;
      case 'MemberExpression': {
        const object = child(node, 'object');
        const property = child(node, 'property');
        if (isGlobal(object, 'Date', scope) && isIdentifier(property, 'now')) report(node, 'Date.now()');
        if (isGlobal(object, 'Math', scope) && isIdentifier(property, 'random'))
          report(node, 'Math.random()');
        visit(object!, scope);
        if (node.computed) visit(property!, scope);
        return;
      }
      case 'CallExpression': {
        const callee = child(node, 'callee')!;
        if (isGlobal(callee, 'Date', scope)) report(node, 'Date()');
        visit(callee, scope);
        const isActivity =
          callee.type === 'MemberExpression' && isIdentifier(child(callee, 'property'), 'activity');
        children(node, 'arguments').forEach((argument, index) => {
          if (isActivity && index === 1 && isFunction(argument)) visitFunction(argument, scope, 'activity');
          else visit(argument, scope);
        });
        return;
      }
      case 'NewExpression':
        if (isGlobal(child(node, 'callee'), 'Date', scope) && children(node, 'arguments').length === 0)
          report(node, 'new Date()');
        visitChildren(node, scope);
        return;
      case 'ImportExpression':
        report(node, 'import()');
        visitChildren(node, scope);
        return;
      case 'Property': {
        // Object literal properties; those of patterns are visited by visitPattern.
        const key = child(node, 'key')!;
        const value = child(node, 'value')!;
        if (node.computed) visit(key, scope);
        const isBody = isIdentifier(key, 'run') && value.type === 'FunctionExpression' && value.generator;
        if (isBody) visitFunction(value, scope, 'body');
        else visit(value, scope);
        return;
      }
      case 'MethodDefinition':
      case 'PropertyDefinition':
        if (node.computed) visit(child(node, 'key')!, scope);
        if (child(node, 'value')) visit(child(node, 'value')!, scope);
        return;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        visitFunction(node, scope, null);
        return;
      case 'ClassDeclaration':
      case 'ClassExpression': {
        const inner = new Scope(scope);
        if (isIdentifier(child(node, 'id'))) inner.declare(child(node, 'id')!.name as string);
        if (child(node, 'superClass')) visit(child(node, 'superClass')!, inner);
        visit(child(node, 'body')!, inner);
        return;
      }
      case 'VariableDeclaration':
        for (const declarator of children(node, 'declarations')) {
          visitPattern(child(declarator, 'id'), scope);
          if (child(declarator, 'init')) visit(child(declarator, 'init')!, scope);
        }
        return;
      case 'AssignmentExpression': {
        const left = child(node, 'left')!;
        if (left.type === 'ObjectPattern' || left.type === 'ArrayPattern') visitPattern(left, scope);
        else visit(left, scope);
        visit(child(node, 'right')!, scope);
        return;
      }
      case 'BlockStatement':
      case 'StaticBlock': {
        const inner = new Scope(scope);
        declareLexical(children(node, 'body'), inner);
        visitAll(children(node, 'body'), inner);
        return;
      }
      case 'SwitchStatement': {
        visit(child(node, 'discriminant')!, scope);
        const inner = new Scope(scope);
        const cases = children(node, 'cases');
        declareLexical(
          cases.flatMap((switchCase) => children(switchCase, 'consequent')),
          inner,
        );
        visitAll(cases, inner);
        return;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const inner = new Scope(scope);
        const head = child(node, node.type === 'ForStatement' ? 'init' : 'left');
        if (head) declareLexical([head], inner);
        if (head && head.type !== 'VariableDeclaration' && node.type !== 'ForStatement')
          visitPattern(head, inner);
        else if (head) visit(head, inner);
        for (const field of ['test', 'update', 'right', 'body'])
          if (child(node, field)) visit(child(node, field)!, inner);
        return;
      }
      case 'CatchClause': {
        const inner = new Scope(scope);
        for (const name of patternNames(child(node, 'param'))) inner.declare(name);
        visitPattern(child(node, 'param'), inner);
        visit(child(node, 'body')!, inner);
        return;
      }
      case 'LabeledStatement':
        visit(child(node, 'body')!, scope);
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
      case 'MetaProperty':
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
        return;
      case 'ExportNamedDeclaration':
        if (child(node, 'declaration')) visit(child(node, 'declaration')!, scope);
        return;
      default:
        visitChildren(node, scope);
    }
  };

  const top = new Scope(null);
  declareVars(program, top);
  declareLexical(children(program, 'body'), top);
  visitAll(children(program, 'body'), top);
  return findings.sort((a, b) => a.line - b.line || a.column - b.column);
}
