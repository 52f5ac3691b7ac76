/**
 * The compiler: a pipeline source in, every error at once and (without errors) an execution
 * plan out. Pure and deterministic: the same source gives the same errors, in the same order,
 * and the same plan.
 *
 * Scoping: node names are unique across the whole source. A node sees the nodes of its own
 * block and of every enclosing block; inside a flow node's sub-graph, `<flow node>.<inner>`
 * (`each.item`, `check.page`) are the sub-graph's own values. A reference into an enclosing
 * block makes the enclosing flow node depend on the referenced node, so the plan runs it first.
 */
import type { CompileError } from '../../db/entities/PipelineVersion.ts';
import { checkInputValue } from './engine/nodeInputs.ts';
import type { InputSpec, NodeTypeSpec } from './engine/nodes/spec.ts';
import { PLAN_FORMAT, type Plan, type PlanBlock, type PlanParameter, type PlanStep, type PlanValue } from './engine/plan.ts';
import { isAssignable, literalRefType, type RefType, valueFits } from './engine/refTypes.ts';
import { nodeRegistry } from './engine/registry.ts';

import {
  BLOCK_KEYS,
  inputValueSchema,
  MAX_DEPTH,
  MAX_NODES,
  NAME_PATTERN,
  nodeHeaderSchema,
  parameterSchema,
  REF_PATTERN,
  sourceSchema,
} from './language.ts';

export type { CompileError } from '../../db/entities/PipelineVersion.ts';

export const compileErrorCodes = [
  'invalid_source',
  'unknown_type',
  'missing_input',
  'unknown_input',
  'invalid_value',
  'unknown_reference',
  'unknown_output',
  'unknown_parameter',
  'type_mismatch',
  'cycle',
  'duplicate_name',
] as const;

type BlockKey = (typeof BLOCK_KEYS)[number] | 'root';

type Block = {
  key: BlockKey;
  owner: Decl | null;
  parent: Block | null;
  depth: number;
  members: Decl[];
  rawOutputs: Record<string, unknown>;
  /** dependency → dependents, among members */
  edges: Map<Decl, Set<Decl>>;
};

type Decl = {
  name: string;
  order: number;
  type: string;
  spec: NodeTypeSpec | undefined;
  block: Block;
  /** Inputs that passed the syntax check (others are reported by it and skipped). */
  inputs: Record<string, unknown>;
  /** Names of every input the node gives, well-formed or not. */
  given: Set<string>;
  timeoutMs?: number;
  retries?: number;
  blocks: Partial<Record<BlockKey, Block>>;
};

type Resolved = { value: PlanValue; refType: RefType };

/** Where a value is read: by a node's input, or by a block's (or the pipeline's) outputs. */
type Reader = { decl: Decl | null; block: Block; input?: string; outputOf?: string };

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const list = (names: Iterable<string>) => {
  const all = [...names].map((name) => `\`${name}\``);
  return all.length ? all.join(', ') : 'none';
};

/** How deep the JSON of a source may nest: sub-graphs 8 deep take about 40 levels, literals the rest. */
const MAX_JSON_DEPTH = 128;

function nestsDeeperThan(value: unknown, limit: number) {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

const TEMPLATE_PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)([^}]*)\}\}/g;

/** Compiles a source. Returns every error at once; `plan` is null when there is any. */
export function compilePipeline(source: unknown): { errors: CompileError[]; plan: Plan | null } {
  return new Compilation(source).run();
}

class Compilation {
  readonly source: unknown;
  readonly errors: CompileError[] = [];
  readonly decls = new Map<string, Decl>();
  /** Names that exist but could not be read (reported already): references to them stay quiet. */
  readonly broken = new Set<string>();
  readonly parameters = new Map<string, PlanParameter>();
  readonly brokenParameters = new Set<string>();
  readonly outputTypes = new Map<Decl, Map<string, RefType>>();
  readonly computing = new Set<Decl>();
  root: Block | null = null;
  count = 0;

  constructor(source: unknown) {
    this.source = source;
  }

  error(node: string | null, code: (typeof compileErrorCodes)[number], message: string, input?: string) {
    this.errors.push(input === undefined ? { node, code, message } : { node, input, code, message });
  }

  run(): { errors: CompileError[]; plan: Plan | null } {
    // Before anything recursive (zod included) walks it: a hostile source may nest very deep.
    if (nestsDeeperThan(this.source, MAX_JSON_DEPTH)) {
      this.error(null, 'invalid_source', `the source nests deeper than ${MAX_JSON_DEPTH} levels`);
      return { errors: this.errors, plan: null };
    }
    this.checkSyntax();
    const source = this.source;
    if (isPlainObject(source) && isPlainObject(source.nodes)) {
      this.collectParameters(source.parameters);
      this.root = this.newBlock('root', null, null, 0, isPlainObject(source.outputs) ? source.outputs : {});
      this.collect(source.nodes, this.root);
      if (this.count > MAX_NODES)
        this.error(null, 'invalid_source', `a pipeline has at most ${MAX_NODES} nodes; this one has ${this.count}`);
      this.checkBlock(this.root);
      this.checkCycles(this.root);
    }
    if (this.errors.length || !this.root) return { errors: this.errors, plan: null };
    const root = this.planBlock(this.root);
    const declared = isPlainObject(source) && isPlainObject(source.outputs);
    return {
      errors: [],
      plan: {
        format: PLAN_FORMAT,
        parameters: Object.fromEntries(this.parameters),
        steps: root.steps,
        result: declared ? { kind: 'declared', outputs: root.outputs } : { kind: 'sinks', nodes: this.sinks(this.root) },
        secrets: [...this.parameters].filter(([, parameter]) => parameter.secret).map(([name]) => name),
      },
    };
  }

  /** Every syntax error, located at its node and input where the path tells. */
  checkSyntax() {
    const parsed = sourceSchema.safeParse(this.source);
    if (parsed.success) return;
    for (const issue of parsed.error.issues) {
      let node: string | null = null;
      let input: string | undefined;
      const { path } = issue;
      for (let i = 0; i < path.length - 1; i++) {
        if (path[i] === 'nodes' && typeof path[i + 1] === 'string') {
          node = path[i + 1] as string;
          input = undefined;
        }
        if (path[i] === 'inputs' && node !== null && path[i - 1] === node) input = String(path[i + 1]);
      }
      const where = path.length ? `${path.join('.')}: ` : '';
      const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
      const message =
        issue.code === 'invalid_key'
          ? `\`${String(path.at(-1))}\` is not a valid name (letters, digits, _ and -, starting with a letter or _, at most 64)`
          : issue.message;
      this.error(node, 'invalid_source', `${where}${message}${keys}`, input);
    }
  }

  collectParameters(raw: unknown) {
    if (!isPlainObject(raw)) return;
    for (const [name, value] of Object.entries(raw)) {
      const parsed = parameterSchema.safeParse(value);
      if (!parsed.success || !NAME_PATTERN.test(name)) {
        this.brokenParameters.add(name);
        continue;
      }
      const { refType, secret, description, default: fallback } = parsed.data;
      if (fallback !== undefined && !valueFits(fallback, refType)) {
        this.error(null, 'type_mismatch', `parameter \`${name}\`: its default is not a ${refType}`);
      }
      // A source is shown to everyone who may read the pipeline (the public, for a public
      // project): a secret written into it would be no secret.
      if (secret && fallback !== undefined) {
        this.error(
          null,
          'invalid_value',
          `parameter \`${name}\`: a secret parameter cannot have a default (the source is readable by the pipeline's readers); pass its value with each run`,
        );
      }
      this.parameters.set(name, {
        refType,
        secret: secret ?? false,
        required: fallback === undefined,
        ...(fallback === undefined ? {} : { default: fallback }),
        ...(description === undefined ? {} : { description }),
      });
    }
  }

  newBlock(key: BlockKey, owner: Decl | null, parent: Block | null, depth: number, rawOutputs: Record<string, unknown>): Block {
    return { key, owner, parent, depth, members: [], rawOutputs, edges: new Map() };
  }

  /** Pass 1: declare every node, sub-graphs included, so references resolve in any order. */
  collect(rawNodes: Record<string, unknown>, block: Block) {
    for (const [name, raw] of Object.entries(rawNodes)) {
      this.count++;
      const header = nodeHeaderSchema.safeParse(raw);
      if (!NAME_PATTERN.test(name) || !header.success) {
        this.markBroken(name, raw);
        continue;
      }
      if (this.decls.has(name) || this.broken.has(name)) {
        this.error(
          name,
          'duplicate_name',
          `another node is already named \`${name}\` (names are unique across the pipeline, sub-graphs included)`,
        );
        for (const key of BLOCK_KEYS) this.markBrokenBlock(header.data[key]);
        continue;
      }
      const { type, inputs = {}, timeoutMs, retries } = header.data;
      const spec = nodeRegistry.get(type);
      const wellFormed = Object.fromEntries(
        Object.entries(inputs).filter(([input, value]) => NAME_PATTERN.test(input) && inputValueSchema.safeParse(value).success),
      );
      const decl: Decl = {
        name,
        order: this.count,
        type,
        spec,
        block,
        inputs: wellFormed,
        given: new Set(Object.keys(inputs)),
        timeoutMs,
        retries,
        blocks: {},
      };
      this.decls.set(name, decl);
      block.members.push(decl);
      if (!spec) {
        this.error(name, 'unknown_type', `unknown node type \`${type}\`; see GET …/pipelines/nodes for the catalog`);
        for (const key of BLOCK_KEYS) this.markBrokenBlock(header.data[key]);
        continue;
      }
      for (const key of BLOCK_KEYS) {
        const rawBlock = header.data[key];
        const blockSpec = spec.blocks?.[key];
        if (rawBlock === undefined) {
          if (blockSpec?.required) this.error(name, 'missing_input', `${type} needs a \`${key}\` sub-graph`, key);
          continue;
        }
        if (!blockSpec) {
          this.error(
            name,
            'invalid_source',
            `${type} takes no \`${key}\` sub-graph${spec.blocks ? ` (it takes ${list(Object.keys(spec.blocks))})` : ''}`,
          );
          this.markBrokenBlock(rawBlock);
          continue;
        }
        if (!isPlainObject(rawBlock) || !isPlainObject(rawBlock.nodes)) continue; // reported by the syntax check
        if (block.depth + 1 > MAX_DEPTH) {
          this.error(name, 'invalid_source', `sub-graphs nest at most ${MAX_DEPTH} deep`);
          this.markBrokenBlock(rawBlock);
          continue;
        }
        const inner = this.newBlock(key, decl, block, block.depth + 1, isPlainObject(rawBlock.outputs) ? rawBlock.outputs : {});
        decl.blocks[key] = inner;
        this.collect(rawBlock.nodes, inner);
      }
    }
  }

  markBroken(name: string, raw: unknown) {
    this.broken.add(name);
    if (isPlainObject(raw)) for (const key of BLOCK_KEYS) this.markBrokenBlock(raw[key]);
  }

  markBrokenBlock(rawBlock: unknown) {
    if (!isPlainObject(rawBlock) || !isPlainObject(rawBlock.nodes)) return;
    for (const [name, raw] of Object.entries(rawBlock.nodes)) {
      this.count++;
      this.markBroken(name, raw);
    }
  }

  /** Pass 2: inputs, references and types of every node, and the block's outputs. */
  checkBlock(block: Block) {
    for (const decl of block.members) {
      if (!decl.spec) continue;
      this.checkInputs(decl, decl.spec);
      for (const inner of Object.values(decl.blocks)) this.checkBlock(inner);
      if (decl.spec.blocks) this.checkBlockOutputs(decl, decl.spec);
    }
    if (block.key === 'root') {
      for (const [name, value] of Object.entries(block.rawOutputs)) {
        this.resolve(value, { decl: null, block, outputOf: name }, 'json', true);
      }
    }
  }

  checkInputs(decl: Decl, spec: NodeTypeSpec) {
    for (const name of decl.given) {
      const known = spec.inputs[name];
      if (!known && !spec.extraInputs) {
        this.error(
          decl.name,
          'unknown_input',
          `${spec.type} has no input \`${name}\`; its inputs are ${list(Object.keys(spec.inputs))}`,
          name,
        );
        continue;
      }
      if (!(name in decl.inputs)) continue; // malformed, reported by the syntax check
      const inputSpec: InputSpec = known ?? { refType: spec.extraInputs?.refType ?? 'json', required: false, description: '' };
      const resolved = this.resolve(decl.inputs[name], { decl, block: decl.block, input: name }, inputSpec.refType, true);
      if (resolved?.value.kind === 'literal') this.checkLiteral(decl, spec, name, inputSpec, resolved.value.value);
    }
    for (const [name, input] of Object.entries(spec.inputs)) {
      if (input.required && !decl.given.has(name)) {
        this.error(decl.name, 'missing_input', `${spec.type} needs the input \`${name}\` (${input.refType}): ${input.description}`, name);
      }
    }
    if (spec.oneOf && !spec.oneOf.some((name) => decl.given.has(name))) {
      this.error(decl.name, 'missing_input', `${spec.type} needs at least one of ${list(spec.oneOf)}`);
    }
    const template = spec.placeholdersIn === undefined ? undefined : decl.inputs[spec.placeholdersIn];
    if (typeof template === 'string') {
      const missing = new Set<string>();
      for (const match of template.matchAll(TEMPLATE_PLACEHOLDER)) {
        const variable = match[1] as string;
        if (variable !== spec.placeholdersIn && !decl.given.has(variable)) missing.add(variable);
      }
      for (const variable of missing) {
        this.error(decl.name, 'missing_input', `the template uses {{${variable}}}; give the node an input \`${variable}\``, variable);
      }
    }
  }

  checkLiteral(decl: Decl, spec: NodeTypeSpec, name: string, input: InputSpec, value: unknown) {
    const invalid = (message: string) => this.error(decl.name, 'invalid_value', message, name);
    const problem = checkInputValue(name, input, value);
    // A literal is in the source for every reader to see: unlike a run's value, it may be quoted.
    if (problem) return invalid(problem.rule === 'enum' ? `${problem.message}, not "${value}"` : problem.message);
    const rule = spec.checkLiteral?.(name, value, decl.inputs);
    if (rule) invalid(rule);
  }

  checkBlockOutputs(decl: Decl, spec: NodeTypeSpec) {
    const seen = new Map<string, { refType: RefType; branch: string }>();
    for (const [key, block] of Object.entries(decl.blocks) as [BlockKey, Block][]) {
      for (const [name, value] of Object.entries(block.rawOutputs)) {
        if (name in spec.outputs) {
          this.error(decl.name, 'duplicate_name', `the \`${key}\` output \`${name}\` clashes with ${spec.type}’s own output \`${name}\``);
          continue;
        }
        const resolved = this.resolve(value, { decl: null, block, outputOf: name }, 'json', true);
        if (!resolved) continue;
        const before = seen.get(name);
        if (before && !isAssignable(resolved.refType, before.refType) && !isAssignable(before.refType, resolved.refType)) {
          this.error(
            decl.name,
            'type_mismatch',
            `the output \`${name}\` is a ${before.refType} in \`${before.branch}\` but a ${resolved.refType} in \`${key}\``,
          );
        }
        if (!before) seen.set(name, { refType: resolved.refType, branch: key });
      }
    }
  }

  /**
   * Resolves one value for `reader`, expecting `expected`. With `report`, errors are recorded
   * and dependency edges added; without, it only computes types (for outputs of flow nodes).
   */
  resolve(value: unknown, reader: Reader, expected: RefType, report: boolean): Resolved | null {
    const where = reader.input ?? (reader.outputOf !== undefined ? `outputs.${reader.outputOf}` : undefined);
    const node = reader.decl?.name ?? reader.block.owner?.name ?? null;
    const fail = (code: (typeof compileErrorCodes)[number], message: string) => {
      if (!report) return null;
      this.error(node, code, where && !reader.input ? `${where}: ${message}` : message, reader.input);
      return null;
    };
    const mismatch = (what: string, actual: RefType) =>
      fail(
        'type_mismatch',
        expected === 'json' && actual === 'page'
          ? `${what} is a page; pages are passed from node to node, they cannot be an output`
          : `${what} is a ${actual}, but ${reader.input ? `\`${reader.input}\`` : 'this'} expects a ${expected}`,
      );

    if (isPlainObject(value) && typeof value.$ref === 'string') {
      const match = REF_PATTERN.exec(value.$ref);
      if (!match) return null; // reported by the syntax check
      const [, target, output] = match as unknown as [string, string, string];
      const found = this.resolveRef(target, output, reader, report, fail);
      if (!found) return null;
      if (!isAssignable(found, expected)) return mismatch(`\`${target}.${output}\``, found);
      return { value: { kind: 'ref', node: target, output }, refType: found };
    }
    if (isPlainObject(value) && typeof value.$param === 'string') {
      const name = value.$param;
      const parameter = this.parameters.get(name);
      if (!parameter) {
        if (this.brokenParameters.has(name)) return null;
        return fail('unknown_parameter', `no parameter \`${name}\` is declared; declared: ${list(this.parameters.keys())}`);
      }
      if (!isAssignable(parameter.refType, expected)) return mismatch(`the parameter \`${name}\``, parameter.refType);
      return { value: { kind: 'param', name }, refType: parameter.refType };
    }
    const literal = isPlainObject(value) && '$literal' in value ? value.$literal : value;
    if (reader.outputOf !== undefined) return null; // not a reference: reported by the syntax check
    if (expected === 'page') return fail('type_mismatch', `\`${reader.input}\` is a page: reference a browser node’s \`page\` output`);
    const actual = literalRefType(literal);
    const fits =
      expected === 'json' ||
      (literal !== null && (isAssignable(actual, expected) || (actual === 'string' && (expected === 'image' || expected === 'html'))));
    if (!fits) return mismatch(literal === null ? 'null' : `the literal ${JSON.stringify(literal).slice(0, 60)}`, actual);
    return { value: { kind: 'literal', value: literal }, refType: expected === 'json' ? actual : expected };
  }

  resolveRef(
    target: string,
    output: string,
    reader: Reader,
    report: boolean,
    fail: (code: (typeof compileErrorCodes)[number], message: string) => null,
  ): RefType | null {
    const decl = this.decls.get(target);
    if (!decl) {
      if (this.broken.has(target)) return null;
      return fail('unknown_reference', `no node is named \`${target}\``);
    }
    // A flow node seen from inside one of its own sub-graphs offers that sub-graph's values.
    for (let block: Block | null = reader.block; block?.owner; block = block.parent) {
      if (block.owner !== decl) continue;
      const inner = this.innerOutputs(decl, block.key);
      const type = inner.get(output);
      if (type) return type;
      const outside = this.outputsOf(decl).has(output)
        ? ` (\`${target}.${output}\` exists after ${target}, outside its \`${block.key}\`)`
        : '';
      return fail('unknown_output', `inside its \`${block.key}\`, \`${target}\` offers ${list(inner.keys())}${outside}`);
    }
    const chain: Block[] = [];
    for (let block: Block | null = reader.block; block; block = block.parent) chain.push(block);
    if (!chain.includes(decl.block)) {
      const owner = decl.block.owner;
      return fail(
        'unknown_reference',
        `\`${target}\` is inside the \`${decl.block.key}\` of \`${owner?.name}\` and not visible here; use an output of \`${owner?.name}\``,
      );
    }
    if (report) {
      // Who must wait for the target, at the target's level: the reader itself, or the flow
      // node (at that level) whose sub-graph holds the reader. Block outputs read after the
      // block's steps, so a reference from them to their own block needs no edge.
      let dependent: Decl | null = null;
      if (reader.decl && reader.decl.block === decl.block) dependent = reader.decl;
      else if (reader.block !== decl.block) dependent = chain.find((block) => block.parent === decl.block)?.owner ?? null;
      if (dependent) {
        const dependents = decl.block.edges.get(decl) ?? new Set<Decl>();
        dependents.add(dependent);
        decl.block.edges.set(decl, dependents);
      }
    }
    const outputs = this.outputsOf(decl);
    const type = outputs.get(output);
    if (type) return type;
    if (!decl.spec) return null; // unknown type, reported
    const inputHint = Object.entries(decl.spec.outputs).find(([name, spec]) => name === output && spec.onlyWithInput);
    return fail(
      'unknown_output',
      inputHint
        ? `\`${target}\` has an output \`${output}\` only when its input \`${inputHint[1].onlyWithInput}\` is given`
        : `${decl.type} \`${target}\` has no output \`${output}\`; its outputs are ${list(outputs.keys())}`,
    );
  }

  innerOutputs(decl: Decl, key: BlockKey) {
    const inner = new Map<string, RefType>();
    for (const [name, output] of Object.entries(decl.spec?.blocks?.[key]?.inner ?? {})) {
      if (!output.onlyWithInput || decl.given.has(output.onlyWithInput)) inner.set(name, output.refType);
    }
    return inner;
  }

  /** A node's outputs and their types; a flow node's include those its sub-graphs declare. */
  outputsOf(decl: Decl): Map<string, RefType> {
    const known = this.outputTypes.get(decl);
    if (known) return known;
    const outputs = new Map<string, RefType>();
    for (const [name, output] of Object.entries(decl.spec?.outputs ?? {})) {
      if (!output.onlyWithInput || decl.given.has(output.onlyWithInput)) outputs.set(name, output.refType);
    }
    if (!decl.spec?.blocks || this.computing.has(decl)) return outputs; // a cycle: reported by checkCycles
    this.computing.add(decl);
    for (const block of Object.values(decl.blocks)) {
      for (const [name, value] of Object.entries(block.rawOutputs)) {
        if (outputs.has(name) && (name in decl.spec.outputs || decl.spec.blockOutputs === 'list')) continue;
        const resolved = this.resolve(value, { decl: null, block, outputOf: name }, 'json', false);
        const type: RefType = decl.spec.blockOutputs === 'list' ? 'list' : (resolved?.refType ?? 'json');
        const before = outputs.get(name);
        outputs.set(name, before && before !== type ? 'json' : type);
      }
    }
    this.computing.delete(decl);
    this.outputTypes.set(decl, outputs);
    return outputs;
  }

  /** Pass 3: every cycle, once, in every block. */
  checkCycles(block: Block) {
    for (const component of stronglyConnected(block.members, block.edges)) {
      const [first] = component;
      if (!first) continue;
      const selfLoop = component.length === 1 && block.edges.get(first)?.has(first);
      if (component.length === 1 && !selfLoop) continue;
      this.error(
        first.name,
        'cycle',
        selfLoop
          ? `\`${first.name}\` depends on its own output`
          : `these nodes depend on each other in a cycle: ${list(component.map((d) => d.name))}`,
      );
    }
    for (const decl of block.members) for (const inner of Object.values(decl.blocks)) this.checkCycles(inner);
  }

  /** Dependency order; among nodes ready together, source order. */
  order(block: Block): Decl[] {
    const waitingFor = new Map<Decl, number>(block.members.map((decl) => [decl, 0]));
    for (const dependents of block.edges.values())
      for (const dependent of dependents) waitingFor.set(dependent, (waitingFor.get(dependent) ?? 0) + 1);
    const ordered: Decl[] = [];
    const ready = block.members.filter((decl) => waitingFor.get(decl) === 0);
    while (ready.length) {
      ready.sort((a, b) => a.order - b.order);
      const next = ready.shift() as Decl;
      ordered.push(next);
      for (const dependent of block.edges.get(next) ?? []) {
        const left = (waitingFor.get(dependent) ?? 0) - 1;
        waitingFor.set(dependent, left);
        if (left === 0) ready.push(dependent);
      }
    }
    return ordered;
  }

  planBlock(block: Block): PlanBlock {
    return {
      steps: this.order(block).map((decl) => this.planStep(decl)),
      outputs: Object.fromEntries(
        Object.entries(block.rawOutputs).map(([name, value]) => [
          name,
          (this.resolve(value, { decl: null, block, outputOf: name }, 'json', false) as Resolved).value,
        ]),
      ),
    };
  }

  planStep(decl: Decl): PlanStep {
    const spec = decl.spec as NodeTypeSpec;
    const inputs: Record<string, PlanValue> = {};
    for (const [name, value] of Object.entries(decl.inputs)) {
      const expected = spec.inputs[name]?.refType ?? spec.extraInputs?.refType ?? 'json';
      inputs[name] = (this.resolve(value, { decl, block: decl.block, input: name }, expected, false) as Resolved).value;
    }
    for (const [name, input] of Object.entries(spec.inputs)) {
      if (!(name in inputs) && input.default !== undefined) inputs[name] = { kind: 'literal', value: input.default };
    }
    const step: PlanStep = {
      name: decl.name,
      type: decl.type,
      browser: spec.browser,
      inputs,
      outputs: Object.fromEntries(this.outputsOf(decl)),
      retries: decl.retries ?? 0,
    };
    const timeoutMs = decl.timeoutMs ?? spec.defaultTimeoutMs;
    if (!spec.blocks && timeoutMs !== undefined) step.timeoutMs = timeoutMs;
    if (spec.blocks) {
      step.blocks = Object.fromEntries(Object.entries(decl.blocks).map(([key, block]) => [key, this.planBlock(block)]));
    }
    return step;
  }

  /** Top-level nodes whose outputs nothing reads: the default result. */
  sinks(root: Block): string[] {
    const read = new Set<Decl>();
    for (const [dependency, dependents] of root.edges) if (dependents.size) read.add(dependency);
    return this.order(root)
      .filter((decl) => !read.has(decl) && [...this.outputsOf(decl).values()].some((type) => type !== 'page'))
      .map((decl) => decl.name);
  }
}

/** Tarjan's algorithm; components come out with members in source order, components in discovery order. */
function stronglyConnected(nodes: Decl[], edges: Map<Decl, Set<Decl>>): Decl[][] {
  let counter = 0;
  const index = new Map<Decl, number>();
  const low = new Map<Decl, number>();
  const onStack = new Set<Decl>();
  const stack: Decl[] = [];
  const components: Decl[][] = [];
  const visit = (node: Decl) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: Decl[] = [];
      let member: Decl;
      do {
        member = stack.pop() as Decl;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort((a, b) => a.order - b.order));
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return components;
}
