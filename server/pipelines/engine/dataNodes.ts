/**
 * The pure nodes (text.template, json.pick, json.object, list.flatten) and the condition test of
 * flow.condition. Deterministic and free of Node built-ins: the interpreter uses
 * `evaluateCondition` inside the workflow, and a workflow may run the pure nodes inline through
 * `runPureNode` instead of scheduling an activity for them.
 */
import { RE2JS } from 're2js';
import { NodeError, NodeInputError } from './nodeErrors.ts';
import { checkNodeInputs } from './nodeInputs.ts';
import { nodeRegistry } from './registry.ts';

/** The longest `matches` pattern, and the longest text it tests (a condition runs inside the workflow). */
export const MAX_PATTERN_LENGTH = 1_000;
export const MAX_MATCH_INPUT_LENGTH = 100_000;

/**
 * A `matches` pattern compiled by RE2 (re2js, pure JavaScript): matching takes time linear in the
 * text whatever the pattern, so a pattern like `(a+)+$` cannot hang the workflow that evaluates
 * it, as JavaScript's backtracking RegExp would. RE2 has no backreferences or lookaround; such a
 * pattern is refused here, and by the compiler when it is a literal.
 */
export function compilePattern(pattern: string) {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new Error(`a \`matches\` pattern may have at most ${MAX_PATTERN_LENGTH} characters`);
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp:\s*/, '') : String(error);
    throw new Error(`\`${pattern}\` is not a regular expression RE2 accepts (${reason}); backreferences and lookaround are not supported`);
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => deepEqual(item, b[index]));
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
}

/** false, null, 0, NaN, "", [] and {} are falsy; everything else is truthy. */
export function isTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return Boolean(value);
}

const isEmpty = (value: unknown) =>
  value === null ||
  value === undefined ||
  value === '' ||
  (Array.isArray(value) && value.length === 0) ||
  (isPlainObject(value) && Object.keys(value).length === 0);

const asNumber = (value: unknown) =>
  typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;

/** The test of flow.condition; throws on an unknown operator or a bad regular expression. */
export function evaluateCondition(value: unknown, operator: string, operand: unknown): boolean {
  switch (operator) {
    case 'truthy':
      return isTruthy(value);
    case 'falsy':
      return !isTruthy(value);
    case 'equals':
      return deepEqual(value, operand);
    case 'notEquals':
      return !deepEqual(value, operand);
    case 'contains':
      if (typeof value === 'string') return (typeof operand === 'string' || typeof operand === 'number') && value.includes(String(operand));
      if (Array.isArray(value)) return value.some((item) => deepEqual(item, operand));
      if (isPlainObject(value)) return typeof operand === 'string' && Object.hasOwn(value, operand);
      return false;
    case 'matches': {
      if (typeof operand !== 'string') throw new Error('`matches` needs a regular expression (a string) as operand');
      const pattern = compilePattern(operand);
      const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
      if (text.length > MAX_MATCH_INPUT_LENGTH) {
        throw new Error(`\`matches\` tests at most ${MAX_MATCH_INPUT_LENGTH} characters; this value has ${text.length}`);
      }
      return pattern.matcher(text).find();
    }
    case 'greaterThan':
    case 'lessThan': {
      const left = asNumber(value);
      const right = asNumber(operand);
      if (Number.isNaN(left) || Number.isNaN(right)) return false;
      return operator === 'greaterThan' ? left > right : left < right;
    }
    case 'empty':
      return isEmpty(value);
    case 'notEmpty':
      return !isEmpty(value);
    default:
      throw new Error(`unknown operator \`${operator}\``);
  }
}

/** `a.b.0.c`, `a.b[0].c`, `["a"]` → keys; "" is the value itself. */
export function parsePath(path: string): string[] {
  return path
    .replace(/\[(\d+)\]/g, '.$1')
    .replace(/\["([^"]*)"\]/g, '.$1')
    .split('.')
    .filter((part) => part !== '');
}

export function pick(value: unknown, path: string): { found: boolean; value: unknown } {
  let current = value;
  for (const key of parsePath(path)) {
    if (Array.isArray(current) && /^\d+$/.test(key) && Number(key) < current.length) current = current[Number(key)];
    else if (isPlainObject(current) && Object.hasOwn(current, key)) current = current[key];
    else return { found: false, value: undefined };
  }
  return { found: current !== undefined, value: current };
}

function renderValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)([^}]*)\}\}/g, (_match, name: string, rest: string) => {
    const base = Object.hasOwn(variables, name) ? variables[name] : undefined;
    const path = rest.trim();
    return renderValue(path ? pick(base, path).value : base);
  });
}

export const pureNodes: Record<string, (inputs: Record<string, unknown>) => Record<string, unknown>> = {
  'text.template': (inputs) => {
    const { template, ...variables } = inputs;
    return { text: renderTemplate(template as string, variables) };
  },
  'json.pick': (inputs) => {
    const found = pick(inputs.value, inputs.path as string);
    return found.found ? { value: found.value, found: true } : { value: inputs.default ?? null, found: false };
  },
  'json.object': (inputs) => ({ record: { ...inputs } }),
  'list.flatten': (inputs) => {
    const list = (inputs.list as unknown[]).flatMap((item: unknown) => (Array.isArray(item) ? item : [item]));
    return { list, count: list.length };
  },
};

export function isPureNodeType(type: string) {
  return Object.hasOwn(pureNodes, type);
}

/** Runs a pure node on inputs `checkNodeInputs` answered; deterministic, so a workflow may call it directly. */
export function runPureNode(type: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const run = pureNodes[type];
  if (!run) throw new Error(`\`${type}\` is not a pure node`);
  return run(inputs);
}

/**
 * A pure node as the control queue's activity runs it: an unknown type, or a flow node (the
 * interpreter runs those), is refused; its inputs are checked against its spec; a failure is the
 * node's input error, never worth a retry.
 */
export function executeDataNode(type: string, rawInputs: Record<string, unknown>): Record<string, unknown> {
  const spec = nodeRegistry.get(type);
  if (!spec) throw new NodeError('unknown_type', `unknown node type \`${type}\``, { retryable: false });
  if (!isPureNodeType(type)) throw new NodeError('unknown_type', `${type} is run by the interpreter, not as a node`, { retryable: false });
  const { values, problem } = checkNodeInputs(spec, rawInputs);
  if (problem) throw new NodeInputError(`${type}: ${problem.message}`);
  return runPureNode(type, values);
}
