/**
 * The data nodes: computations on JSON values, without a browser. Each is one `defineNode(spec,
 * implementation)`, its implementation typed from its spec. Deterministic and free of Node
 * built-ins: a workflow may run them inline (engine/dataNodes.ts runs them, on checked inputs).
 */
import { DATA_TIMEOUT_MS, isPlainObject, open, withPage } from './parts.ts';
import { defineNode } from './spec.ts';

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

export const dataNodes = [
  defineNode(
    {
      type: 'text.template',
      title: 'Template',
      description:
        'Fills `{{name}}` placeholders in `template` from the node’s other inputs (any names you choose); `{{name.path.0}}` reaches into JSON. Objects and lists are written as JSON, null as "".',
      category: 'data',
      browser: false,
      inputs: { template: { refType: 'string', required: true, description: 'Text with `{{placeholders}}`.' } },
      extraInputs: { refType: 'json', description: 'Each other input is a variable of the template.' },
      placeholdersIn: 'template',
      outputs: { text: { refType: 'string', description: 'The filled-in text.' } },
      defaultTimeoutMs: DATA_TIMEOUT_MS,
      example: {
        parameters: { query: { refType: 'string' } },
        nodes: {
          url: { type: 'text.template', inputs: { template: 'https://example.com/search?q={{q}}', q: { $param: 'query' } } },
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $ref: 'url.text' } } },
        },
      },
    },
    (inputs) => {
      const { template, ...variables } = inputs;
      return { text: renderTemplate(template, variables) };
    },
  ),
  defineNode(
    {
      type: 'json.pick',
      title: 'Pick from JSON',
      description:
        'The value at `path` in a JSON value: dot-separated keys and list indexes (`data.items.0.name`, or `data.items[0].name`). Missing → `default`.',
      category: 'data',
      browser: false,
      inputs: {
        value: { refType: 'json', required: true, description: 'The JSON to pick from.' },
        path: { refType: 'string', required: true, description: 'Keys and indexes; "" is the value itself.' },
        default: { refType: 'json', required: false, default: null, description: 'What a missing path gives.' },
      },
      outputs: {
        value: { refType: 'json', description: 'The value found (or `default`).' },
        found: { refType: 'boolean', description: 'Whether the path existed.' },
      },
      defaultTimeoutMs: DATA_TIMEOUT_MS,
      example: withPage({
        open: open('https://example.com/'),
        state: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: 'return window.__STATE__' } },
        user: { type: 'json.pick', inputs: { value: { $ref: 'state.result' }, path: 'user.name' } },
      }),
    },
    (inputs) => {
      const found = pick(inputs.value, inputs.path);
      return found.found ? { value: found.value, found: true } : { value: inputs.default ?? null, found: false };
    },
  ),
  defineNode(
    {
      type: 'list.flatten',
      title: 'Flatten a list',
      description:
        'Joins a list of lists into one list, one level deep (other elements are kept as they are): e.g. the records a `flow.forEach` collected from every page of a paged table.',
      category: 'data',
      browser: false,
      inputs: { list: { refType: 'list', required: true, description: 'A list whose elements are lists.' } },
      outputs: {
        list: { refType: 'list', description: 'The elements of the inner lists, in order.' },
        count: { refType: 'number', description: 'How many elements.' },
      },
      defaultTimeoutMs: DATA_TIMEOUT_MS,
      example: withPage(
        {
          open: open('https://example.com/orders'),
          pages: {
            type: 'extract.attribute',
            inputs: { page: { $ref: 'open.page' }, selector: '.pagination a', attribute: 'href', resolveUrl: true },
          },
          each: {
            type: 'flow.forEach',
            inputs: { items: { $ref: 'pages.values' }, page: { $ref: 'pages.page' } },
            body: {
              nodes: {
                go: { type: 'page.goto', inputs: { page: { $ref: 'each.page' }, url: { $ref: 'each.item' } } },
                rows: { type: 'extract.table', inputs: { page: { $ref: 'go.page' }, selector: 'table' } },
              },
              outputs: { records: { $ref: 'rows.records' } },
            },
          },
          all: { type: 'list.flatten', inputs: { list: { $ref: 'each.records' } } },
        },
        { outputs: { orders: { $ref: 'all.list' } } },
      ),
    },
    (inputs) => {
      const list = inputs.list.flatMap((item: unknown) => (Array.isArray(item) ? item : [item]));
      return { list, count: list.length };
    },
  ),
  defineNode(
    {
      type: 'json.object',
      title: 'Build a record',
      description:
        'A record whose fields are the node’s inputs (any names you choose); for shaping outputs or building a value for a script or template.',
      category: 'data',
      browser: false,
      inputs: {},
      extraInputs: { refType: 'json', description: 'Each input becomes a field of the record.' },
      outputs: { record: { refType: 'record', description: 'The record.' } },
      defaultTimeoutMs: DATA_TIMEOUT_MS,
      example: withPage(
        {
          open: open('https://example.com/'),
          title: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
          summary: { type: 'json.object', inputs: { title: { $ref: 'title.text' }, url: { $ref: 'open.url' } } },
        },
        { outputs: { summary: { $ref: 'summary.record' } } },
      ),
    },
    (inputs) => ({ record: { ...inputs } }),
  ),
];
