/**
 * The flow nodes: a condition and a loop over sub-graphs. The interpreter runs them itself
 * (engine/interpreter.ts, its `flowNodes` table), inside the workflow; the condition's test is
 * here, with the spec that documents it.
 */
import { RE2JS } from 're2js';
import { isPlainObject, open, withPage } from './parts.ts';
import { nodeSpec } from './spec.ts';

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

/** The `matches` operand as the compiler checks it when it is a literal. */
function checkPattern(name: string, value: unknown, inputs: Record<string, unknown>) {
  if (name !== 'operand' || inputs.operator !== 'matches') return null;
  if (typeof value !== 'string') return 'with `matches`, the operand is a regular expression (a string)';
  try {
    compilePattern(value);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

export const flowNodeSpecs = [
  nodeSpec({
    type: 'flow.condition',
    title: 'Condition',
    description:
      'Tests `value` with `operator` (and `operand`) and runs the `then` or the `else` sub-graph. Each sub-graph is `{nodes, outputs}`; its declared outputs become outputs of this node (null when the branch taken does not declare it; both branches must agree on types). Nodes inside may reference outer nodes and `<this node>.page`.',
    category: 'flow',
    browser: false,
    inputs: {
      value: { refType: 'json', required: true, description: 'The value to test.' },
      operator: {
        refType: 'string',
        required: false,
        default: 'truthy',
        enum: ['truthy', 'falsy', 'equals', 'notEquals', 'contains', 'matches', 'greaterThan', 'lessThan', 'empty', 'notEmpty'],
        description:
          '`truthy`/`falsy` (false, null, 0, "", [] and {} are falsy), `equals`/`notEquals` (deep), `contains` (substring, list element or record key), `matches` (`operand` is an RE2 regular expression, matched in linear time: no backreferences or lookaround; at most 1000 characters, tested against at most 100000), `greaterThan`/`lessThan` (numbers), `empty`/`notEmpty`.',
      },
      operand: { refType: 'json', required: false, description: 'What `value` is compared with.' },
      page: { refType: 'page', required: false, description: 'A page the branches act on; they reference it as `<this node>.page`.' },
    },
    outputs: {
      matched: { refType: 'boolean', description: 'Whether the test held.' },
      branch: { refType: 'string', description: '`then` or `else`.' },
      page: { refType: 'page', description: 'The page, after the branch (only when `page` is given).', onlyWithInput: 'page' },
    },
    blocks: {
      // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
      then: {
        description: 'Runs when the test holds.',
        required: false,
        inner: { page: { refType: 'page', description: 'The page given to the condition.', onlyWithInput: 'page' } },
      },
      else: {
        description: 'Runs when it does not.',
        required: false,
        inner: { page: { refType: 'page', description: 'The page given to the condition.', onlyWithInput: 'page' } },
      },
    },
    blockOutputs: 'value',
    checkLiteral: checkPattern,
    example: withPage({
      open: open('https://example.com/'),
      banner: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: '#cookie-banner', optional: true } },
      consent: {
        type: 'flow.condition',
        inputs: { value: { $ref: 'banner.count' }, operator: 'greaterThan', operand: 0, page: { $ref: 'banner.page' } },
        // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
        then: {
          nodes: { accept: { type: 'page.click', inputs: { page: { $ref: 'consent.page' }, selector: '#cookie-banner button' } } },
        },
      },
    }),
  }),
  nodeSpec({
    type: 'flow.forEach',
    title: 'For each',
    description:
      'Runs the `body` sub-graph once per element of `items`, in order. Inside, `<this node>.item`, `.index` and `.page` are the current element, its index and the page. Each output the body declares becomes a list (one value per element) among this node’s outputs; `results` has one record of them per element.',
    category: 'flow',
    browser: false,
    inputs: {
      items: { refType: 'list', required: true, description: 'The elements to loop over.' },
      page: { refType: 'page', required: false, description: 'A page the body acts on, as `<this node>.page`.' },
      maxItems: { refType: 'number', required: false, min: 0, description: 'Loop over at most this many elements.' },
    },
    outputs: {
      results: { refType: 'list', description: 'One record per element with the body’s declared outputs.' },
      count: { refType: 'number', description: 'How many times the body ran.' },
      page: { refType: 'page', description: 'The page after the loop (only when `page` is given).', onlyWithInput: 'page' },
    },
    blocks: {
      body: {
        description: 'The nodes run per element, and `outputs` collected from each run.',
        required: true,
        inner: {
          item: { refType: 'json', description: 'The current element.' },
          index: { refType: 'number', description: 'Its position, from 0.' },
          page: { refType: 'page', description: 'The page given to the loop.', onlyWithInput: 'page' },
        },
      },
    },
    blockOutputs: 'list',
    example: withPage(
      {
        open: open('https://example.com/'),
        links: {
          type: 'extract.attribute',
          inputs: { page: { $ref: 'open.page' }, selector: 'nav a', attribute: 'href', resolveUrl: true },
        },
        visit: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'links.values' }, page: { $ref: 'links.page' }, maxItems: 5 },
          body: {
            nodes: {
              go: { type: 'page.goto', inputs: { page: { $ref: 'visit.page' }, url: { $ref: 'visit.item' } } },
              title: { type: 'extract.text', inputs: { page: { $ref: 'go.page' }, selector: 'h1' } },
            },
            outputs: { title: { $ref: 'title.text' } },
          },
        },
      },
      { outputs: { titles: { $ref: 'visit.title' } } },
    ),
  }),
];
