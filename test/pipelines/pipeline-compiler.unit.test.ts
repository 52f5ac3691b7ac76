import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { renderNodeReference } from '../../scripts/render-node-docs.ts';
import { inferValue, toNumber, uniqueKeys } from '../../server/pipelines/cellValues.ts';
import { compileErrorCodes, compilePipeline } from '../../server/pipelines/compiler.ts';
import { runDataNode } from '../../server/pipelines/engine/dataNodes.ts';
import {
  keptOutputs,
  MAX_RUN_STEPS,
  type NodeCall,
  PipelineRunError,
  prepareArgs,
  resolveStretchInputs,
  runPlan,
  type StretchCall,
} from '../../server/pipelines/engine/interpreter.ts';
import { renderTemplate } from '../../server/pipelines/engine/nodes/data.ts';
import { evaluateCondition, MAX_MATCH_INPUT_LENGTH } from '../../server/pipelines/engine/nodes/flow.ts';
import type { InputSpec } from '../../server/pipelines/engine/nodes/spec.ts';
import type { Plan, PlanStep } from '../../server/pipelines/engine/plan.ts';
import type { RefType } from '../../server/pipelines/engine/refTypes.ts';
import { nodeCatalog, nodeRegistry } from '../../server/pipelines/engine/registry.ts';
import { pipelineJsonSchema } from '../../server/pipelines/language.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

function compiled(source: unknown): Plan {
  const { errors, plan } = compilePipeline(source);
  expect(errors).toEqual([]);
  expect(plan).not.toBeNull();
  return plan as Plan;
}

function errorsOf(source: unknown) {
  const { errors, plan } = compilePipeline(source);
  expect(plan).toBeNull();
  return errors;
}

const page = { type: 'browser.page' };
const goto = (from: string, url = 'https://shop.test/') => ({ type: 'page.goto', inputs: { page: { $ref: `${from}.page` }, url } });

/** A literal of the right type for an input (respecting its enum, bounds and shape). */
function sampleLiteral(type: string, name: string, input: InputSpec): unknown {
  if (type === 'extract.list' && name === 'fields') return { title: 'h2' };
  if (name === 'pages') return { links: '.pager a' };
  if ((type === 'page.goto' || type === 'page.download') && name === 'url') return 'https://shop.test/';
  if (type === 'page.select' && name === 'value') return 'a';
  if (input.enum) return input.enum[0];
  const samples: Record<Exclude<RefType, 'page'>, unknown> = {
    string: 'text',
    number: input.min ?? 1,
    boolean: true,
    json: { any: 'thing' },
    list: [],
    record: {},
    html: '<b>x</b>',
    image: 'iVBORw0KGgo=',
  };
  return samples[input.refType as Exclude<RefType, 'page'>];
}

/** A literal of the wrong type for an input of this refType. */
const wrongLiteral: Record<Exclude<RefType, 'json'>, unknown> = {
  string: 42,
  html: 42,
  image: false,
  number: 'forty-two',
  boolean: 'yes',
  list: 'a,b',
  record: ['a'],
  page: 'tab-1',
};

/** A source using `type` with every input given (all inputs, or only the required ones). */
function sourceFor(type: string, which: 'all' | 'required', overrides: Record<string, unknown> = {}) {
  const spec = nodeRegistry.get(type);
  if (!spec) throw new Error(type);
  const inputs: Record<string, unknown> = {};
  for (const [name, input] of Object.entries(spec.inputs)) {
    if (which === 'required' && !input.required) continue;
    inputs[name] = input.refType === 'page' ? { $ref: 'tab.page' } : sampleLiteral(type, name, input);
  }
  if (spec.oneOf && !spec.oneOf.some((name) => name in inputs))
    inputs[spec.oneOf[0] as string] = sampleLiteral(type, spec.oneOf[0] as string, spec.inputs[spec.oneOf[0] as string] as InputSpec);
  if (type === 'flow.condition' && which === 'all') inputs.operand = 'x';
  // Its `selector` and `url` are one or the other (its own test below).
  if (type === 'page.download' && which === 'all') delete inputs.url;
  const node: Record<string, unknown> = { type, inputs: { ...inputs, ...overrides } };
  for (const [key, block] of Object.entries(spec.blocks ?? {})) if (block.required || which === 'all') node[key] = { nodes: {} };
  return { nodes: { tab: page, subject: node } };
}

describe('the registry', () => {
  it('has the catalog the architecture asks for, each node documented with an example', () => {
    const types = [...nodeRegistry.keys()];
    for (const type of [
      'browser.page',
      'page.goto',
      'page.click',
      'page.fill',
      'page.press',
      'page.select',
      'page.wait',
      'page.scroll',
      'extract.text',
      'extract.attribute',
      'extract.html',
      'extract.list',
      'extract.table',
      'page.screenshot',
      'page.cookies',
      'page.evaluate',
      'flow.condition',
      'flow.forEach',
      'text.template',
      'json.pick',
    ]) {
      expect(types).toContain(type);
    }
    for (const spec of nodeRegistry.values()) {
      expect(spec.title.length, spec.type).toBeGreaterThan(0);
      expect(spec.description.length, spec.type).toBeGreaterThan(20);
      expect(Object.keys(spec.outputs).length, spec.type).toBeGreaterThan(0);
      for (const input of Object.values(spec.inputs)) expect(input.description.length, spec.type).toBeGreaterThan(0);
      for (const output of Object.values(spec.outputs)) expect(output.description.length, spec.type).toBeGreaterThan(0);
      // Browser nodes take and return the page, so data dependencies order their side effects.
      if (spec.browser && spec.type !== 'browser.page') {
        expect(spec.inputs.page, spec.type).toMatchObject({ refType: 'page', required: true });
        expect(spec.outputs.page?.refType, spec.type).toBe('page');
      }
    }
  });

  it('every example compiles, uses its node and matches the JSON Schema', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(pipelineJsonSchema());
    for (const spec of nodeRegistry.values()) {
      const plan = compiled(spec.example);
      const types = JSON.stringify(plan);
      expect(types, spec.type).toContain(`"type":"${spec.type}"`);
      expect(validate(spec.example), `${spec.type}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
    }
  });

  it('the JSON Schema refuses what the grammar refuses', () => {
    const validate = new Ajv2020({ strict: false }).compile(pipelineJsonSchema());
    expect(validate({ nodes: { a: { type: 'no.such.type' } } })).toBe(false);
    expect(validate({ nodes: { a: { type: 'page.goto', inputs: { page: 'tab', url: 'https://x.test/' } } } })).toBe(false);
    expect(validate({ nodes: { a: { type: 'page.goto', inputs: { page: { $ref: 'p.page' }, url: 'https://x.test/', colour: 1 } } } })).toBe(
      false,
    );
    expect(validate({ nodes: { 'a.b': page } })).toBe(false);
    expect(validate({ nodes: {}, extra: true })).toBe(false);
    expect(validate({ nodes: { p: page, w: { type: 'page.wait', inputs: { page: { $ref: 'p.page' }, state: 'sideways' } } } })).toBe(false);
  });

  it('the catalog is JSON and docs/pipeline-language.md carries the current node reference', () => {
    const catalog = nodeCatalog();
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
    expect(catalog.nodes.map((node) => node.type)).toEqual([...nodeRegistry.keys()]);
    expect(catalog.refTypes.map((refType) => refType.name)).toEqual(
      expect.arrayContaining(['string', 'number', 'boolean', 'json', 'list', 'page', 'image']),
    );
    const docs = readFileSync(path.join(root, 'docs/pipeline-language.md'), 'utf8');
    const generated = /<!-- node reference: start -->\n([\s\S]*)\n<!-- node reference: end -->/.exec(docs)?.[1] ?? '';
    // The formatter aligns tables and reflows JSON in the Markdown: compare without layout.
    const content = (markdown: string) => markdown.replace(/-{3,}/g, '---').replace(/\s+/g, '');
    expect(content(generated), 'docs/pipeline-language.md is stale: regenerate its node reference (see the command there)').toBe(
      content(renderNodeReference()),
    );
  });

  it('registry, plan and interpreter stay workflow-safe: no Node built-ins, playwright, clock or randomness', () => {
    const engine = path.join(root, 'server/pipelines/engine');
    const files = readdirSync(engine, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    expect(files).toContain('interpreter.ts');
    for (const file of files) {
      const text = readFileSync(path.join(engine, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      const imports = [...text.matchAll(/^import .* from '([^']+)';$/gm)].map((match) => match[1]);
      // re2js: RE2 in plain JavaScript (no built-ins, clock or randomness), for `matches`.
      for (const specifier of imports) expect(specifier, file).toMatch(/^(\.\.?\/|re2js$)/);
      expect(text, file).not.toMatch(/playwright|['"]node:|\bprocess\.|Date\.now|new Date|Math\.random|setTimeout|setInterval/);
    }
  });
});

describe('each node type’s contract', () => {
  for (const spec of nodeRegistry.values()) {
    describe(spec.type, () => {
      it('compiles with its required inputs, and with all of them, answering its outputs with their refTypes', () => {
        for (const which of ['required', 'all'] as const) {
          const plan = compiled(sourceFor(spec.type, which));
          const step = plan.steps.find((candidate) => candidate.name === 'subject') as PlanStep;
          const expected = Object.fromEntries(
            Object.entries(spec.outputs)
              .filter(([, output]) => !output.onlyWithInput || which === 'all')
              .map(([name, output]) => [name, output.refType]),
          );
          expect(step.outputs).toEqual(expected);
          expect(step.browser).toBe(spec.browser);
          // Defaults become literals in the plan, so the executor sees every input.
          for (const [name, input] of Object.entries(spec.inputs)) {
            if (input.default !== undefined && which === 'required')
              expect(step.inputs[name]).toEqual({ kind: 'literal', value: input.default });
          }
        }
      });

      for (const [name, input] of Object.entries(spec.inputs)) {
        if (input.required) {
          it(`refuses to compile without \`${name}\``, () => {
            const source = sourceFor(spec.type, 'required');
            delete (source.nodes.subject.inputs as Record<string, unknown>)[name];
            expect(errorsOf(source)).toContainEqual(expect.objectContaining({ node: 'subject', input: name, code: 'missing_input' }));
          });
        }
        const refType = input.refType;
        if (refType !== 'json') {
          it(`refuses a ${typeof wrongLiteral[refType]} for \`${name}\` (${refType})`, () => {
            const source = sourceFor(spec.type, 'required', { [name]: wrongLiteral[refType] });
            expect(errorsOf(source)).toContainEqual(expect.objectContaining({ node: 'subject', input: name, code: 'type_mismatch' }));
          });
        }
      }

      it('refuses an input it does not have', () => {
        const source = sourceFor(spec.type, 'required', { nonsense: 1 });
        if (spec.extraInputs) {
          compiled(source);
        } else {
          expect(errorsOf(source)).toContainEqual(expect.objectContaining({ node: 'subject', input: 'nonsense', code: 'unknown_input' }));
        }
      });
    });
  }
});

describe('compile errors', () => {
  it('page.download: a selector or an http(s) URL, one of the two', () => {
    const download = (inputs: Record<string, unknown>) => ({
      nodes: { page, open: goto('page'), file: { type: 'page.download', inputs: { page: { $ref: 'open.page' }, ...inputs } } },
      outputs: { file: { $ref: 'file.file' } },
    });
    compiled(download({ selector: 'a#csv' }));
    compiled(download({ url: 'https://shop.test/export.csv' }));
    expect(errorsOf(download({}))).toEqual([expect.objectContaining({ node: 'file', code: 'missing_input' })]);
    expect(errorsOf(download({ selector: 'a', url: 'https://shop.test/x.csv' }))).toEqual([
      expect.objectContaining({ node: 'file', input: 'url', message: expect.stringContaining('not both') }),
    ]);
    expect(errorsOf(download({ url: 'file:///etc/passwd' }))).toEqual([
      expect.objectContaining({ node: 'file', input: 'url', message: expect.stringContaining('http(s)') }),
    ]);
  });

  it('invalid_source: not a source at all', () => {
    for (const source of [null, 'nodes', [], {}, { nodes: [] }]) {
      const errors = errorsOf(source);
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((error) => error.code === 'invalid_source')).toBe(true);
    }
  });

  it('invalid_source: bad names, unknown keys, malformed references, references hidden in literals', () => {
    const errors = errorsOf({
      nodes: {
        'bad.name': page,
        tab: { ...page, colour: 'red' },
        go: { type: 'page.goto', inputs: { page: { $ref: 'tab' }, url: 'https://x.test/' } },
        fill: { type: 'page.fill', inputs: { page: { $ref: 'go.page' }, selector: '#q', value: { nested: { $param: 'q' } } } },
      },
      extra: 1,
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ node: 'bad.name', code: 'invalid_source' }),
        expect.objectContaining({ node: 'tab', code: 'invalid_source', message: expect.stringContaining('colour') }),
        expect.objectContaining({ node: 'go', input: 'page', code: 'invalid_source', message: expect.stringContaining('node.output') }),
        expect.objectContaining({
          node: 'fill',
          input: 'value',
          code: 'invalid_source',
          message: expect.stringContaining('whole input value'),
        }),
        expect.objectContaining({ node: null, code: 'invalid_source', message: expect.stringContaining('extra') }),
      ]),
    );
    // A malformed node is reported once; references to it do not cascade.
    expect(errors.filter((error) => error.code !== 'invalid_source')).toEqual([]);
  });

  it('$literal passes data with $-keys through', () => {
    const plan = compiled({
      nodes: {
        tab: page,
        run: {
          type: 'page.evaluate',
          inputs: { page: { $ref: 'tab.page' }, script: 'return arg', arg: { $literal: { $ref: 'not.a.ref' } } },
        },
      },
    });
    expect(plan.steps[1]?.inputs.arg).toEqual({ kind: 'literal', value: { $ref: 'not.a.ref' } });
  });

  it('unknown_type', () => {
    expect(errorsOf({ nodes: { x: { type: 'page.teleport' } } })).toEqual([
      { node: 'x', code: 'unknown_type', message: expect.stringContaining('page.teleport') },
    ]);
  });

  it('missing_input: a required input, one of a set, a template variable, a required sub-graph', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        go: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' } } },
        wait: { type: 'page.wait', inputs: { page: { $ref: 'go.page' } } },
        text: { type: 'text.template', inputs: { template: 'Hi {{name}}, order {{order.id}}', name: 'Ada' } },
        loop: { type: 'flow.forEach', inputs: { items: [] } },
      },
    });
    expect(errors).toEqual([
      expect.objectContaining({ node: 'loop', input: 'body', code: 'missing_input' }),
      expect.objectContaining({ node: 'go', input: 'url', code: 'missing_input' }),
      expect.objectContaining({ node: 'wait', code: 'missing_input', message: expect.stringContaining('at least one of') }),
      expect.objectContaining({ node: 'text', input: 'order', code: 'missing_input' }),
    ]);
  });

  it('unknown_input', () => {
    expect(errorsOf({ nodes: { tab: page, go: { ...goto('tab'), inputs: { ...goto('tab').inputs, timeout: 5 } } } })).toEqual([
      { node: 'go', input: 'timeout', code: 'unknown_input', message: expect.stringContaining('`page`, `url`, `waitUntil`') },
    ]);
  });

  it('invalid_value: enums, bounds and shaped literals', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        click: { type: 'page.click', inputs: { page: { $ref: 'tab.page' }, selector: 'a', waitFor: 'forever' } },
        scroll: { type: 'page.scroll', inputs: { page: { $ref: 'click.page' }, times: 1000 } },
        list: {
          type: 'extract.list',
          inputs: { page: { $ref: 'scroll.page' }, selector: 'li', fields: { price: { selector: '.p', type: 'money' } } },
        },
        go: { type: 'page.goto', inputs: { page: { $ref: 'list.page' }, url: 'file:///etc/passwd' } },
        check: { type: 'flow.condition', inputs: { value: 'x', operator: 'matches', operand: '(' } },
      },
    });
    expect(errors.map((error) => [error.node, error.input, error.code])).toEqual([
      ['click', 'waitFor', 'invalid_value'],
      ['scroll', 'times', 'invalid_value'],
      ['list', 'fields', 'invalid_value'],
      ['go', 'url', 'invalid_value'],
      ['check', 'operand', 'invalid_value'],
    ]);
  });

  it('invalid_value: a secret parameter with a default (every reader of the source would see it)', () => {
    const errors = errorsOf({
      parameters: { password: { refType: 'string', secret: true, default: 'hunter22' }, user: { refType: 'string', default: 'ada' } },
      nodes: { t: { type: 'text.template', inputs: { template: '{{u}} {{p}}', u: { $param: 'user' }, p: { $param: 'password' } } } },
    });
    expect(errors).toEqual([{ node: null, code: 'invalid_value', message: expect.stringContaining('`password`') }]);
    expect(errors[0]?.message).not.toContain('hunter22');
  });

  it('unknown_reference: no such node, or one hidden inside another node’s sub-graph', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        go: goto('gone'),
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1, 2] },
          body: {
            nodes: { inner: { type: 'json.object', inputs: { n: { $ref: 'loop.item' } } } },
            outputs: { n: { $ref: 'inner.record' } },
          },
        },
        peek: { type: 'json.pick', inputs: { value: { $ref: 'inner.record' }, path: 'n' } },
      },
      outputs: { x: { $ref: 'nowhere.value' } },
    });
    expect(errors).toEqual([
      { node: 'go', input: 'page', code: 'unknown_reference', message: 'no node is named `gone`' },
      { node: 'peek', input: 'value', code: 'unknown_reference', message: expect.stringContaining('inside the `body` of `loop`') },
      { node: null, code: 'unknown_reference', message: 'outputs.x: no node is named `nowhere`' },
    ]);
  });

  it('unknown_output: no such output; outputs that exist only with an input, only inside or only outside a loop', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        go: goto('tab'),
        title: { type: 'extract.text', inputs: { page: { $ref: 'go.page' }, selector: { $ref: 'go.title' } } },
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1] },
          body: {
            nodes: {
              a: { type: 'json.object', inputs: { all: { $ref: 'loop.results' } } },
              b: { type: 'json.object', inputs: { p: { $ref: 'loop.page' } } },
            },
          },
        },
        after: { type: 'json.object', inputs: { item: { $ref: 'loop.item' }, p: { $ref: 'loop.page' } } },
      },
    });
    expect(errors.map((error) => [error.node, error.input, error.code])).toEqual([
      ['title', 'selector', 'unknown_output'],
      ['a', 'all', 'unknown_output'],
      ['b', 'p', 'unknown_output'],
      ['after', 'item', 'unknown_output'],
      ['after', 'p', 'unknown_output'],
    ]);
    expect(errors[1]?.message).toContain('exists after loop, outside its `body`');
    expect(errors[4]?.message).toContain('only when its input `page` is given');
  });

  it('unknown_parameter', () => {
    expect(
      errorsOf({
        parameters: { user: { refType: 'string' } },
        nodes: { t: { type: 'text.template', inputs: { template: '{{u}} {{p}}', u: { $param: 'user' }, p: { $param: 'password' } } } },
      }),
    ).toEqual([{ node: 't', input: 'p', code: 'unknown_parameter', message: expect.stringContaining('`password`') }]);
  });

  it('type_mismatch: references, parameters, pages, defaults, outputs and disagreeing branches', () => {
    const errors = errorsOf({
      parameters: { count: { refType: 'number', default: 'three' }, user: { refType: 'string' } },
      nodes: {
        tab: page,
        go: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: { $ref: 'tab.page' } } },
        fill: { type: 'page.fill', inputs: { page: { $ref: 'go.page' }, selector: '#n', value: { $param: 'count' } } },
        list: { type: 'extract.text', inputs: { page: { $ref: 'fill.page' }, selector: { $ref: 'fill.page' } } },
        loop: { type: 'flow.forEach', inputs: { items: { $ref: 'go.status' } }, body: { nodes: {} } },
        check: {
          type: 'flow.condition',
          inputs: { value: { $param: 'user' } },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: {}, outputs: { v: { $ref: 'go.status' } } },
          else: { nodes: {}, outputs: { v: { $ref: 'go.url' } } },
        },
      },
      outputs: { tab: { $ref: 'tab.page' } },
    });
    expect(errors.map((error) => [error.node, error.input, error.code])).toEqual([
      [null, undefined, 'type_mismatch'],
      ['go', 'url', 'type_mismatch'],
      ['fill', 'value', 'type_mismatch'],
      ['list', 'selector', 'type_mismatch'],
      ['loop', 'items', 'type_mismatch'],
      ['check', undefined, 'type_mismatch'],
      [null, undefined, 'type_mismatch'],
    ]);
    expect(errors[4]?.message).toBe('`go.status` is a number, but `items` expects a list');
    expect(errors[5]?.message).toContain('a number in `then` but a string in `else`');
    expect(errors[6]?.message).toContain('pages are passed from node to node');
  });

  it('json is the dynamic type; html and image are strings', () => {
    compiled({
      nodes: {
        tab: page,
        state: { type: 'page.evaluate', inputs: { page: { $ref: 'tab.page' }, script: 'return [1]' } },
        loop: { type: 'flow.forEach', inputs: { items: { $ref: 'state.result' } }, body: { nodes: {} } },
        html: { type: 'extract.html', inputs: { page: { $ref: 'state.page' } } },
        text: { type: 'text.template', inputs: { template: '{{h}}', h: { $ref: 'html.html' } } },
        fill: { type: 'page.fill', inputs: { page: { $ref: 'html.page' }, selector: '#x', value: { $ref: 'html.html' } } },
      },
    });
  });

  it('cycle: between nodes, on itself, and through a sub-graph', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        a: { type: 'page.click', inputs: { page: { $ref: 'b.page' }, selector: 'a' } },
        b: { type: 'page.click', inputs: { page: { $ref: 'a.page' }, selector: 'b' } },
        self: { type: 'json.object', inputs: { me: { $ref: 'self.record' } } },
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1] },
          body: {
            nodes: { inner: { type: 'json.object', inputs: { later: { $ref: 'later.record' } } } },
            outputs: { r: { $ref: 'inner.record' } },
          },
        },
        later: { type: 'json.object', inputs: { results: { $ref: 'loop.r' } } },
      },
    });
    expect(errors).toEqual([
      { node: 'a', code: 'cycle', message: expect.stringContaining('`a`, `b`') },
      { node: 'self', code: 'cycle', message: '`self` depends on its own output' },
      { node: 'loop', code: 'cycle', message: expect.stringContaining('`loop`, `later`') },
    ]);
  });

  it('duplicate_name: a sub-graph node named like an outer node; a block output named like the flow node’s own output', () => {
    const errors = errorsOf({
      nodes: {
        tab: page,
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1], page: { $ref: 'tab.page' } },
          body: { nodes: { tab: page }, outputs: { count: { $ref: 'loop.index' } } },
        },
      },
    });
    expect(errors).toEqual([
      expect.objectContaining({ node: 'tab', code: 'duplicate_name' }),
      expect.objectContaining({ node: 'loop', code: 'duplicate_name', message: expect.stringContaining('`count`') }),
    ]);
  });

  it('a sub-graph a node type does not take', () => {
    expect(errorsOf({ nodes: { tab: page, go: { ...goto('tab'), body: { nodes: {} } } } })).toEqual([
      { node: 'go', code: 'invalid_source', message: 'page.goto takes no `body` sub-graph' },
    ]);
  });

  it('limits: nesting of the JSON, of sub-graphs, and the number of nodes', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(errorsOf({ nodes: { t: { type: 'json.object', inputs: { x: deep } } } })).toEqual([
      { node: null, code: 'invalid_source', message: 'the source nests deeper than 128 levels' },
    ]);
    const top: { nodes: Record<string, unknown> } = { nodes: {} };
    let level = top;
    for (let i = 0; i < 9; i++) {
      const body = { nodes: {} };
      level.nodes[`loop${i}`] = { type: 'flow.forEach', inputs: { items: [] }, body };
      level = body;
    }
    expect(errorsOf(top)).toEqual([{ node: 'loop8', code: 'invalid_source', message: 'sub-graphs nest at most 8 deep' }]);
    const many = { nodes: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [`n${i}`, { type: 'json.object' }])) };
    expect(errorsOf(many)).toEqual([
      expect.objectContaining({ node: null, code: 'invalid_source', message: expect.stringContaining('at most 500 nodes') }),
    ]);
  });

  it('never throws, whatever it is given', () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const junk = [
      null,
      0,
      -1,
      'x',
      '',
      true,
      [],
      {},
      { $ref: 'a.b' },
      { $ref: 'page.page' },
      { $param: 'p' },
      { $literal: 1 },
      { nodes: {} },
      { type: 'page.goto' },
    ];
    const mutate = (value: unknown, depth: number): unknown => {
      if (random() < 0.08) return junk[Math.floor(random() * junk.length)];
      if (Array.isArray(value)) return value.map((item) => mutate(item, depth + 1));
      if (value !== null && typeof value === 'object') {
        const entries = Object.entries(value).filter(() => random() > 0.05);
        if (random() < 0.05) entries.push([random() < 0.5 ? 'then' : 'extra', junk[Math.floor(random() * junk.length)]]);
        return Object.fromEntries(entries.map(([key, item]) => [key, mutate(item, depth + 1)]));
      }
      return value;
    };
    const examples = [...nodeRegistry.values()].map((spec) => spec.example);
    for (let i = 0; i < 600; i++) {
      const source = mutate(examples[i % examples.length], 0);
      const { errors, plan } = compilePipeline(source);
      expect(errors.length === 0).toBe(plan !== null);
      for (const error of errors) expect(compileErrorCodes).toContain(error.code);
    }
  });

  it('reports every error at once, in a stable order, and is deterministic', () => {
    const source = {
      parameters: { q: { refType: 'string' } },
      nodes: {
        tab: page,
        go: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: 1 } },
        x: { type: 'nope' },
        fill: { type: 'page.fill', inputs: { page: { $ref: 'go.pag' }, value: { $param: 'w' } } },
        t: { type: 'text.template', inputs: { template: '{{a}}', extra: { $ref: 'ghost.x' } } },
      },
    };
    const first = compilePipeline(source);
    expect(first.errors.map((error) => error.code)).toEqual([
      'unknown_type',
      'type_mismatch',
      'unknown_output',
      'unknown_parameter',
      'missing_input',
      'unknown_reference',
      'missing_input',
    ]);
    expect(compilePipeline(structuredClone(source))).toEqual(first);
    for (const error of first.errors) expect(compileErrorCodes).toContain(error.code);
  });
});

describe('plans', () => {
  it('order nodes by their dependencies, else by source order; defaults, timeouts and retries filled in', () => {
    const plan = compiled({
      nodes: {
        read: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' }, retries: 2 },
        note: { type: 'text.template', inputs: { template: 'static' } },
        open: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: 'https://shop.test/' }, timeoutMs: 5000 },
        tab: page,
      },
    });
    expect(plan.steps.map((step) => step.name)).toEqual(['note', 'tab', 'open', 'read']);
    const open = plan.steps[2] as PlanStep;
    expect(open).toMatchObject({ timeoutMs: 5000, retries: 0, browser: true });
    expect(open.inputs.waitUntil).toEqual({ kind: 'literal', value: 'load' });
    expect(plan.steps[3]).toMatchObject({ retries: 2, timeoutMs: 30_000 });
    expect(plan.result).toEqual({ kind: 'sinks', nodes: ['note', 'read'] });
  });

  it('an outer node read inside a loop runs before the loop; loops and branches carry their sub-graphs', () => {
    const plan = compiled({
      parameters: { user: { refType: 'string' }, password: { refType: 'string', secret: true }, max: { refType: 'number', default: 2 } },
      nodes: {
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1, 2, 3], maxItems: { $param: 'max' } },
          body: {
            nodes: {
              check: {
                type: 'flow.condition',
                inputs: { value: { $ref: 'loop.index' }, operator: 'equals', operand: 0 },
                // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
                then: {
                  nodes: { first: { type: 'text.template', inputs: { template: '{{p}}', p: { $ref: 'prefix.text' } } } },
                  outputs: { label: { $ref: 'first.text' } },
                },
                else: { nodes: {}, outputs: { label: { $param: 'user' } } },
              },
            },
            outputs: { label: { $ref: 'check.label' } },
          },
        },
        prefix: { type: 'text.template', inputs: { template: 'first' } },
      },
      outputs: { labels: { $ref: 'loop.label' }, who: { $param: 'user' } },
    });
    expect(plan.steps.map((step) => step.name)).toEqual(['prefix', 'loop']);
    const loop = plan.steps[1] as PlanStep;
    expect(loop.outputs).toEqual({ results: 'list', count: 'number', label: 'list' });
    expect(loop.timeoutMs).toBeUndefined();
    const check = loop.blocks?.body?.steps[0] as PlanStep;
    expect(check.outputs).toEqual({ matched: 'boolean', branch: 'string', label: 'string' });
    expect(Object.keys(check.blocks ?? {})).toEqual(['then', 'else']);
    expect(plan.parameters).toEqual({
      user: { refType: 'string', secret: false, required: true },
      password: { refType: 'string', secret: true, required: true },
      max: { refType: 'number', secret: false, required: false, default: 2 },
    });
    expect(plan.secrets).toEqual(['password']);
    expect(plan.result).toEqual({
      kind: 'declared',
      outputs: { labels: { kind: 'ref', node: 'loop', output: 'label' }, who: { kind: 'param', name: 'user' } },
    });
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });

  it('the empty graph compiles to an empty plan', () => {
    expect(compiled({ nodes: {} })).toMatchObject({ steps: [], result: { kind: 'sinks', nodes: [] } });
  });
});

/** A runNode that records calls and answers from `answers` (or echoes its inputs). */
function recorder(answers: Record<string, (call: NodeCall) => Record<string, unknown>> = {}) {
  const calls: NodeCall[] = [];
  const runNode = async (call: NodeCall) => {
    calls.push(call);
    const answer = answers[call.type];
    if (answer) return answer(call);
    if (call.type === 'browser.page') return { page: { pageId: 'p1' } };
    if (!call.browser) return runDataNode(call.type, call.inputs);
    return { page: call.inputs.page };
  };
  return { calls, runNode };
}

describe('runPlan', () => {
  it('runs nodes in plan order, passing pages, parameters and outputs along', async () => {
    const plan = compiled({
      parameters: { base: { refType: 'string', default: 'https://shop.test' }, user: { refType: 'string' } },
      nodes: {
        tab: page,
        url: { type: 'text.template', inputs: { template: '{{base}}/users/{{user}}', base: { $param: 'base' }, user: { $param: 'user' } } },
        open: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: { $ref: 'url.text' } }, timeoutMs: 1234, retries: 1 },
        title: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { title: { $ref: 'title.text' }, url: { $ref: 'open.url' } },
    });
    const { calls, runNode } = recorder({
      'page.goto': (call) => ({ page: call.inputs.page, url: call.inputs.url, status: 200 }),
      'extract.text': (call) => ({ page: call.inputs.page, text: 'Ada', texts: ['Ada'], count: 1 }),
    });
    const run = await runPlan(plan, { args: { user: 'ada' }, runNode });
    expect(calls.map((call) => call.node)).toEqual(['tab', 'url', 'open', 'title']);
    expect(calls[2]).toEqual({
      node: 'open',
      type: 'page.goto',
      inputs: { page: { pageId: 'p1' }, url: 'https://shop.test/users/ada', waitUntil: 'load' },
      path: [],
      browser: true,
      timeoutMs: 1234,
      retries: 1,
    });
    expect(run.result).toEqual({ title: 'Ada', url: 'https://shop.test/users/ada' });
    expect(Object.keys(run.outputs)).toEqual(['tab', 'url', 'open', 'title']);
  });

  it('loops with a sub-graph, collecting outputs per element, and names nested nodes by path', async () => {
    const plan = compiled({
      nodes: {
        tab: page,
        loop: {
          type: 'flow.forEach',
          inputs: { items: ['a', 'b', 'c'], page: { $ref: 'tab.page' }, maxItems: 2 },
          body: {
            nodes: {
              open: { type: 'page.goto', inputs: { page: { $ref: 'loop.page' }, url: 'https://shop.test/' } },
              label: {
                type: 'text.template',
                inputs: { template: '{{i}}:{{item}}', i: { $ref: 'loop.index' }, item: { $ref: 'loop.item' } },
              },
            },
            outputs: { label: { $ref: 'label.text' }, status: { $ref: 'open.status' } },
          },
        },
        after: { type: 'extract.text', inputs: { page: { $ref: 'loop.page' }, selector: 'h1' } },
      },
      outputs: { labels: { $ref: 'loop.label' }, results: { $ref: 'loop.results' }, count: { $ref: 'loop.count' } },
    });
    const { calls, runNode } = recorder({ 'page.goto': (call) => ({ page: call.inputs.page, url: 'x', status: 200 }) });
    const run = await runPlan(plan, { args: {}, runNode });
    expect(calls.map((call) => [...call.path, call.node].join('.'))).toEqual([
      'tab',
      'loop.0.open',
      'loop.0.label',
      'loop.1.open',
      'loop.1.label',
      'after',
    ]);
    expect(run.result).toEqual({
      labels: ['0:a', '1:b'],
      results: [
        { label: '0:a', status: 200 },
        { label: '1:b', status: 200 },
      ],
      count: 2,
    });
    expect(run.outputs['loop.1.label']).toEqual({ text: '1:b' });
    expect(run.outputs.loop).toMatchObject({ count: 2, page: { pageId: 'p1' } });
  });

  it('takes one branch of a condition; outputs of the other read as null', async () => {
    const source = (value: unknown) => ({
      nodes: {
        tab: page,
        check: {
          type: 'flow.condition',
          inputs: { value, operator: 'greaterThan', operand: 10, page: { $ref: 'tab.page' } },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: {
            nodes: { big: { type: 'page.click', inputs: { page: { $ref: 'check.page' }, selector: '#big' } } },
            outputs: { what: { $ref: 'big.page' } },
          },
          else: { nodes: { small: { type: 'text.template', inputs: { template: 'small' } } }, outputs: { note: { $ref: 'small.text' } } },
        },
      },
      outputs: { branch: { $ref: 'check.branch' }, note: { $ref: 'check.note' } },
    });
    // A page cannot leave a branch as an output: that is the condition's own `page`.
    expect(errorsOf(source(5))).toEqual([expect.objectContaining({ node: 'check', code: 'type_mismatch' })]);
    const fixed = (value: unknown) => {
      const s = source(value);
      s.nodes.check.then.outputs = {} as never;
      return s;
    };
    const small = recorder();
    expect((await runPlan(compiled(fixed(5)), { args: {}, runNode: small.runNode })).result).toEqual({ branch: 'else', note: 'small' });
    expect(small.calls.map((call) => [...call.path, call.node].join('.'))).toEqual(['tab', 'check.else.small']);
    const big = recorder();
    expect((await runPlan(compiled(fixed(50)), { args: {}, runNode: big.runNode })).result).toEqual({ branch: 'then', note: null });
    expect(big.calls.map((call) => [...call.path, call.node].join('.'))).toEqual(['tab', 'check.then.big']);
  });

  it('without declared outputs, the result is what the sink nodes answer, pages left out', async () => {
    const plan = compiled({ nodes: { tab: page, open: goto('tab'), note: { type: 'text.template', inputs: { template: 'n' } } } });
    const { runNode } = recorder({ 'page.goto': (call) => ({ page: call.inputs.page, url: 'https://shop.test/', status: 200 }) });
    expect((await runPlan(plan, { args: {}, runNode })).result).toEqual({
      open: { url: 'https://shop.test/', status: 200 },
      note: { text: 'n' },
    });
  });

  it('checks arguments without repeating them, and propagates node errors', async () => {
    const plan = compiled({
      parameters: { user: { refType: 'string' }, password: { refType: 'string', secret: true }, n: { refType: 'number', default: 1 } },
      nodes: { t: { type: 'text.template', inputs: { template: '{{u}}', u: { $param: 'user' } } } },
    });
    expect(prepareArgs(plan, { user: 'ada', password: 'hunter22' })).toEqual({
      values: { user: 'ada', password: 'hunter22', n: 1 },
      problems: [],
    });
    const bad = prepareArgs(plan, { user: 5, password: 123456789, extra: true });
    expect(bad.problems.map((problem) => problem.parameter)).toEqual(['user', 'password', 'extra']);
    expect(JSON.stringify(bad.problems)).not.toContain('123456789');
    await expect(runPlan(plan, { args: {}, runNode: recorder().runNode })).rejects.toMatchObject({
      name: 'PipelineRunError',
      code: 'invalid_args',
    });
    // Inside the workflow a secret may be a stand-in of another type.
    const { runNode } = recorder();
    await expect(runPlan(plan, { args: { user: 'ada', password: '\u0000secret:password' }, runNode })).resolves.toBeTruthy();
    const failing = async () => {
      throw new Error('boom');
    };
    await expect(runPlan(plan, { args: { user: 'ada', password: 'x' }, runNode: failing })).rejects.toThrow('boom');
  });

  it('refuses to loop over what is not a list at run time', async () => {
    const plan = compiled({
      nodes: {
        tab: page,
        state: { type: 'page.evaluate', inputs: { page: { $ref: 'tab.page' }, script: 'return 1' } },
        loop: { type: 'flow.forEach', inputs: { items: { $ref: 'state.result' } }, body: { nodes: {} } },
      },
    });
    const { runNode } = recorder({ 'page.evaluate': (call) => ({ page: call.inputs.page, result: 'not a list' }) });
    const error = await runPlan(plan, { args: {}, runNode }).catch((caught) => caught);
    expect(error).toBeInstanceOf(PipelineRunError);
    expect(error).toMatchObject({ node: 'loop', code: 'invalid_input' });
  });
});

/**
 * A runStretch that runs each node with `recorder`'s answers, resolving the stretch's own
 * references, and answers the kept outputs; `answerFirst` makes it answer for only that many nodes.
 */
function stretchRecorder(answers: Parameters<typeof recorder>[0] = {}, answerFirst?: (call: StretchCall) => number) {
  const stretches: StretchCall[] = [];
  const { runNode } = recorder(answers);
  const runStretch = async (call: StretchCall) => {
    stretches.push(call);
    const outputs = new Map<string, Record<string, unknown>>();
    const kept: Record<string, unknown>[] = [];
    for (const node of call.nodes.slice(0, answerFirst?.(call) ?? call.nodes.length)) {
      const { keep: _keep, inputs: _inputs, ...rest } = node;
      const result = await runNode({ ...rest, path: call.path, inputs: resolveStretchInputs(node, outputs) });
      outputs.set(node.node, result);
      kept.push(keptOutputs(node, result));
    }
    return kept;
  };
  return { stretches, runStretch };
}

describe('runPlan in stretches', () => {
  it('hands a straight line of nodes over as one stretch: its own references stay, the rest is resolved, read outputs come back', async () => {
    const plan = compiled({
      parameters: { user: { refType: 'string' } },
      nodes: {
        tab: page,
        url: { type: 'text.template', inputs: { template: 'https://shop.test/{{user}}', user: { $param: 'user' } } },
        open: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: { $ref: 'url.text' } }, retries: 2 },
        title: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { title: { $ref: 'title.text' }, url: { $ref: 'open.url' } },
    });
    const { stretches, runStretch } = stretchRecorder({
      'page.goto': (call) => ({ page: call.inputs.page, url: call.inputs.url, status: 200 }),
      'extract.text': (call) => ({ page: call.inputs.page, text: 'Ada', texts: ['Ada'], count: 1 }),
    });
    const run = await runPlan(plan, { args: { user: 'ada' }, runStretch });
    expect(stretches).toHaveLength(1);
    const [stretch] = stretches as [StretchCall];
    expect(stretch.browser).toBe(true);
    expect(stretch.path).toEqual([]);
    expect(stretch.nodes.map((node) => node.node)).toEqual(['tab', 'url', 'open', 'title']);
    expect(stretch.nodes[1]?.inputs).toEqual({
      template: { kind: 'value', value: 'https://shop.test/{{user}}' },
      user: { kind: 'value', value: 'ada' },
    });
    expect(stretch.nodes[2]).toMatchObject({
      type: 'page.goto',
      browser: true,
      retries: 2,
      timeoutMs: 30_000,
      inputs: { page: { kind: 'ref', node: 'tab', output: 'page' }, url: { kind: 'ref', node: 'url', output: 'text' } },
    });
    expect(stretch.nodes.map((node) => [...node.keep].sort())).toEqual([['page'], ['text'], ['page', 'url'], ['text']]);
    expect(run.result).toEqual({ title: 'Ada', url: 'https://shop.test/ada' });
    // Only what is read later comes back: the title's other outputs stay in the activity.
    expect(run.outputs.title).toEqual({ text: 'Ada' });
  });

  it('a flow node ends a stretch; a loop’s body is a stretch per iteration, under its path', async () => {
    const plan = compiled({
      nodes: {
        tab: page,
        items: { type: 'extract.text', inputs: { page: { $ref: 'tab.page' }, selector: 'li' } },
        each: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'items.texts' } },
          body: {
            nodes: {
              line: { type: 'text.template', inputs: { template: '{{n}}: {{x}}', n: { $ref: 'each.index' }, x: { $ref: 'each.item' } } },
            },
            outputs: { line: { $ref: 'line.text' } },
          },
        },
        joined: { type: 'json.object', inputs: { lines: { $ref: 'each.line' } } },
      },
    });
    const { stretches, runStretch } = stretchRecorder({
      'extract.text': (call) => ({ page: call.inputs.page, text: 'a', texts: ['a', 'b'], count: 2 }),
    });
    const run = await runPlan(plan, { args: {}, runStretch });
    expect(stretches.map((stretch) => [stretch.path.join('.'), stretch.browser, stretch.nodes.map((node) => node.node)])).toEqual([
      ['', true, ['tab', 'items']],
      ['each.0', false, ['line']],
      ['each.1', false, ['line']],
      ['', false, ['joined']],
    ]);
    expect(stretches[2]?.nodes[0]?.inputs).toMatchObject({ n: { kind: 'value', value: 1 }, x: { kind: 'value', value: 'b' } });
    // What a later node reads comes back, and all a sink answers (it is the result).
    expect(stretches[0]?.nodes[1]?.keep).toEqual(['texts']);
    expect(stretches[3]?.nodes[0]?.keep).toEqual(['record']);
    expect(run.result).toEqual({ joined: { record: { lines: ['0: a', '1: b'] } } });
  });

  it('a stretch that answers for its first nodes only gets the rest handed over again, their inputs resolved', async () => {
    const plan = compiled({
      nodes: {
        tab: page,
        open: goto('tab'),
        title: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { title: { $ref: 'title.text' } },
    });
    const { stretches, runStretch } = stretchRecorder(
      {
        'page.goto': (call) => ({ page: call.inputs.page, url: call.inputs.url, status: 200 }),
        'extract.text': (call) => ({ page: call.inputs.page, text: 'Hi', texts: ['Hi'], count: 1 }),
      },
      (call) => (call.nodes.length === 3 ? 2 : call.nodes.length),
    );
    const run = await runPlan(plan, { args: {}, runStretch });
    expect(stretches.map((stretch) => stretch.nodes.map((node) => node.node))).toEqual([['tab', 'open', 'title'], ['title']]);
    expect(stretches[1]?.nodes[0]?.inputs.page).toEqual({ kind: 'value', value: { pageId: 'p1' } });
    expect(run.result).toEqual({ title: 'Hi' });
    // An answer for no node at all is a broken runner, not a loop for ever.
    await expect(runPlan(plan, { args: {}, runStretch: async () => [] })).rejects.toMatchObject({ code: 'invalid_outputs' });
  });
});

describe('limits of a run', () => {
  it.each(['node by node', 'in stretches'])(
    'fails a run past the step cap with too_many_steps, naming the node, before it runs it (%s)',
    async (mode) => {
      const plan = compiled({
        parameters: { items: { refType: 'list' } },
        nodes: {
          loop: {
            type: 'flow.forEach',
            inputs: { items: { $param: 'items' } },
            body: { nodes: { line: { type: 'text.template', inputs: { template: 'x' } } } },
          },
        },
      });
      const answers = { 'text.template': () => ({ text: 'x' }) };
      const { calls, runNode } = recorder(answers);
      const { stretches, runStretch } = stretchRecorder(answers);
      const run = (items: number) =>
        runPlan(plan, { args: { items: Array(items).fill(0) }, ...(mode === 'in stretches' ? { runStretch } : { runNode }) });
      const handedOver = () => (mode === 'in stretches' ? stretches : calls);
      // The loop itself is a step, each iteration's node another (in stretches too).
      await expect(run(MAX_RUN_STEPS - 1)).resolves.toBeTruthy();
      handedOver().length = 0;
      const error = await run(MAX_RUN_STEPS).catch((caught) => caught);
      expect(error).toBeInstanceOf(PipelineRunError);
      expect(error).toMatchObject({ node: 'line', code: 'too_many_steps' });
      expect(error.message).toContain(`loop.${MAX_RUN_STEPS - 1}.line`);
      expect(handedOver()).toHaveLength(MAX_RUN_STEPS - 1);
    },
  );

  it('matches in linear time: a catastrophic pattern answers at once', () => {
    const started = performance.now();
    expect(evaluateCondition('aaaaaaaaaaaaaaaaaaaaaaaaaaaa!', 'matches', '(a+)+$')).toBe(false);
    expect(evaluateCondition(`${'a'.repeat(50_000)}!`, 'matches', '(a|aa)+$')).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(evaluateCondition('Order #123', 'matches', '^Order #\\d{3}$')).toBe(true);
    expect(() => evaluateCondition('x'.repeat(MAX_MATCH_INPUT_LENGTH + 1), 'matches', 'x')).toThrow(/at most 100000 characters/);
    expect(() => evaluateCondition('x', 'matches', 'x'.repeat(1001))).toThrow(/at most 1000 characters/);
  });

  it('refuses patterns RE2 cannot run, backreferences and lookaround, with a clear error', () => {
    for (const operand of ['(a)\\1', '(?=a)a', 'a{2,5000}', '']) {
      const source = { nodes: { check: { type: 'flow.condition', inputs: { value: 'x', operator: 'matches', operand } } } };
      if (operand === '') {
        expect(compilePipeline(source).errors).toEqual([]);
        continue;
      }
      const errors = errorsOf(source);
      expect(errors, operand).toEqual([expect.objectContaining({ node: 'check', input: 'operand', code: 'invalid_value' })]);
      expect(errors[0]?.message).toMatch(/RE2/);
    }
  });
});

describe('pure nodes and values', () => {
  it('templates, picks, records and flattening', () => {
    expect(renderTemplate('{{ a }}-{{b.c.0}}-{{n}}-{{o}}-{{missing}}', { a: 'x', b: { c: [7] }, n: null, o: { k: 1 } })).toBe(
      'x-7--{"k":1}-',
    );
    expect(runDataNode('json.pick', { value: { items: [{ name: 'a' }] }, path: 'items[0].name' })).toEqual({ value: 'a', found: true });
    expect(runDataNode('json.pick', { value: {}, path: 'a.b', default: 3 })).toEqual({ value: 3, found: false });
    expect(runDataNode('json.object', { a: 1, b: [2] })).toEqual({ record: { a: 1, b: [2] } });
    expect(runDataNode('list.flatten', { list: [[1, 2], [3], 4] })).toEqual({ list: [1, 2, 3, 4], count: 4 });
  });

  it('condition operators', () => {
    const cases: [unknown, string, unknown, boolean][] = [
      [[], 'truthy', undefined, false],
      [{}, 'falsy', undefined, true],
      ['0', 'truthy', undefined, true],
      [{ a: [1] }, 'equals', { a: [1] }, true],
      [1, 'notEquals', '1', true],
      ['hello', 'contains', 'ell', true],
      [[{ id: 1 }], 'contains', { id: 1 }, true],
      [{ key: 1 }, 'contains', 'key', true],
      ['Order #123', 'matches', '#\\d+', true],
      ['12', 'greaterThan', 10, true],
      ['abc', 'lessThan', 10, false],
      [null, 'empty', undefined, true],
      [[0], 'notEmpty', undefined, true],
    ];
    for (const [value, operator, operand, expected] of cases)
      expect(evaluateCondition(value, operator, operand), `${operator} ${JSON.stringify(value)}`).toBe(expected);
    expect(() => evaluateCondition(1, 'between', 2)).toThrow('unknown operator');
  });

  it('infers cell types conservatively', () => {
    expect(['12', '-3.5', '1,234.50', '007', '$5', 'true', '', 'N/A', '0', '.5'].map(inferValue)).toEqual([
      12,
      -3.5,
      1234.5,
      '007',
      '$5',
      true,
      null,
      'N/A',
      0,
      0.5,
    ]);
    expect(['$1,234.50', '-12 %', 'none'].map(toNumber)).toEqual([1234.5, -12, null]);
    expect(uniqueKeys(['Name', '', 'Name'], 4)).toEqual(['Name', 'column2', 'Name_2', 'column4']);
  });
});
