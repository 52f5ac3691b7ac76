/**
 * The plan interpreter. It walks a compiled plan in order, resolves inputs (`ref` to outputs of
 * earlier nodes, `param` to the run's arguments, literals), runs flow.forEach and
 * flow.condition itself (`flowNodes` below) and hands every other node to `runNode`.
 *
 * It runs inside the `pipelineRun` workflow, so it is deterministic: no I/O, no Node built-ins,
 * no clock, no randomness, no timers. Everything with a side effect happens in `runNode`, which
 * the workflow implements with activities (browser nodes on the browser's host, data nodes on the
 * control queue, or data nodes inline through `runDataNode` of engine/dataNodes.ts).
 *
 * Stretches. Given `runStretch`, the interpreter hands over every run of consecutive nodes that
 * are not flow nodes as one call (a stretch), instead of one `runNode` call per node: the
 * workflow runs a stretch as one activity, paying for durability once per stretch. Inputs that
 * come from before the stretch are resolved here; those that read an earlier node of the same
 * stretch stay references, which whoever runs the stretch resolves. A stretch answers only the
 * outputs something reads later (`keep`), and may answer for a first part of its nodes only:
 * the rest is handed over again as a new stretch.
 *
 * Output keys: a node's outputs are recorded under its path, `name` at the top level,
 * `loop.<index>.name` inside an iteration of `loop`, `check.then.name` inside a branch; node names
 * contain no dots, so the keys are unambiguous.
 */
import { evaluateCondition } from './nodes/flow.ts';
import { PLAN_FORMAT, type Plan, type PlanBlock, type PlanStep, type PlanValue } from './plan.ts';
import { type RefType, valueFits } from './refTypes.ts';
import { type FlowNodeType, nodeRegistry } from './registry.ts';
import { holdsSealed } from './sealedValues.ts';

/** The outputs flow nodes fill themselves (a condition's, a loop's); a branch leaves them alone. */
const flowOutputNames = new Set(
  [...nodeRegistry.values()].filter((spec) => spec.category === 'flow').flatMap((spec) => Object.keys(spec.outputs)),
);

/**
 * The most steps one run executes (every node, flow nodes and each loop iteration's nodes
 * included). Each step is a few events of the run's workflow history, which Temporal caps at
 * 51,200 events: past this the run fails with `too_many_steps` instead of being cut off there.
 */
export const MAX_RUN_STEPS = 2_000;

/**
 * One node as the interpreter asks its executor (`RunNode`) to run it. The workflow turns it into
 * the activity's call (`NodeActivityCall`, `BrowserNodeCall` in workflows/contracts/pipelineRun.ts).
 */
export type NodeCall = {
  node: string;
  type: string;
  /** Resolved values; a page input is the page handle `{pageId}` a browser node returned. */
  inputs: Record<string, unknown>;
  /** Enclosing flow nodes and iterations/branches, e.g. `['visit', '2']`; [] at the top level. */
  path: string[];
  /** Runs against a page on the browser's host (its queue); otherwise a data node. */
  browser: boolean;
  timeoutMs?: number;
  retries?: number;
};

export type RunNode = (call: NodeCall) => Promise<Record<string, unknown>>;

/** An input of a node in a stretch: resolved before the stretch, or an output of an earlier node of it. */
export type StretchInput = { kind: 'value'; value: unknown } | { kind: 'ref'; node: string; output: string };

export type StretchNode = Omit<NodeCall, 'inputs' | 'path'> & {
  inputs: Record<string, StretchInput>;
  /** The outputs read after this node (by any node, a sub-graph's outputs or the result): all the stretch hands back of it. */
  keep: string[];
};

export type StretchCall = {
  /** As NodeCall's `path`, for every node of the stretch. */
  path: string[];
  /** Whether any node of it is a browser node (and so must run on the browser's host). */
  browser: boolean;
  /** In execution order. */
  nodes: StretchNode[];
};

/**
 * Runs a stretch's nodes in order and answers the kept outputs of each node that ran: every node,
 * or a first part of them (at least one), after which the interpreter hands over the rest.
 */
export type RunStretch = (call: StretchCall) => Promise<Record<string, unknown>[]>;

/** The inputs of `node`, its references resolved from the outputs of the stretch's earlier nodes (by node name). */
export function resolveStretchInputs(node: StretchNode, earlier: ReadonlyMap<string, Record<string, unknown>>) {
  return Object.fromEntries(
    Object.entries(node.inputs).map(([name, input]) => {
      if (input.kind === 'value') return [name, input.value];
      const source = earlier.get(input.node);
      if (!source) throw new PipelineRunError(node.node, 'invalid_plan', `\`${node.node}\` reads \`${input.node}\`, which has not run`);
      return [name, Object.hasOwn(source, input.output) ? source[input.output] : null];
    }),
  );
}

/** The kept part of a node's outputs (see StretchNode.keep). */
export function keptOutputs(node: StretchNode, outputs: Record<string, unknown>) {
  return Object.fromEntries(node.keep.filter((name) => Object.hasOwn(outputs, name)).map((name) => [name, outputs[name]]));
}

/** Called after each node (flow nodes included) with its outputs; e.g. to store them as the run goes. */
export type OnNodeDone = (event: {
  key: string;
  node: string;
  type: string;
  path: string[];
  outputs: Record<string, unknown>;
}) => void | Promise<void>;

export type RunResult = {
  /** Every executed node's outputs, by output key (see the top of this file). */
  outputs: Record<string, Record<string, unknown>>;
  /** The pipeline's declared outputs, or the sinks' outputs (see Plan.result). */
  result: Record<string, unknown>;
};

/** An error the interpreter itself raises (bad arguments, a loop over a non-list, a bad plan). */
/** The codes of a run's failures the interpreter finds itself: in the plan, a flow node's inputs, or what a stretch answered. */
export const planErrorCodes = [
  'invalid_plan',
  'invalid_args',
  'invalid_input',
  'invalid_outputs',
  'secret_in_condition',
  'too_many_steps',
] as const;

export class PipelineRunError extends Error {
  override name = 'PipelineRunError';
  readonly node: string | null;
  readonly code: (typeof planErrorCodes)[number];
  constructor(node: string | null, code: (typeof planErrorCodes)[number], message: string) {
    super(message);
    this.node = node;
    this.code = code;
  }
}

export type ArgumentProblem = { parameter: string; message: string };

/**
 * The arguments a run uses: given values checked against the parameters' types, defaults
 * filled in. Messages never contain the values (they may be secret). Start a run only when
 * `problems` is empty (answer 400 otherwise). `trustSecrets` skips the type check of secret
 * parameters, whose values may be stand-ins by then.
 */
export function prepareArgs(
  plan: Plan,
  args: Record<string, unknown>,
  options: { trustSecrets?: boolean } = {},
): { values: Record<string, unknown>; problems: ArgumentProblem[] } {
  const values: Record<string, unknown> = {};
  const problems: ArgumentProblem[] = [];
  for (const [name, parameter] of Object.entries(plan.parameters)) {
    const given = Object.hasOwn(args, name) ? args[name] : undefined;
    if (given !== undefined) {
      if (valueFits(given, parameter.refType) || (options.trustSecrets && parameter.secret)) values[name] = given;
      else problems.push({ parameter: name, message: `\`${name}\` must be a ${parameter.refType}` });
    } else if (parameter.default !== undefined) {
      values[name] = parameter.default;
    } else {
      problems.push({ parameter: name, message: `\`${name}\` (${parameter.refType}) is required` });
    }
  }
  for (const name of Object.keys(args)) {
    if (!Object.hasOwn(plan.parameters, name)) problems.push({ parameter: name, message: `the pipeline has no parameter \`${name}\`` });
  }
  return { values, problems };
}

/** Values visible at one place: a block's outputs so far, over those of the enclosing blocks. */
class Scope {
  readonly #values = new Map<string, Record<string, unknown>>();
  readonly #parent: Scope | undefined;

  constructor(parent?: Scope) {
    this.#parent = parent;
  }

  set(node: string, outputs: Record<string, unknown>) {
    this.#values.set(node, outputs);
  }

  get(node: string): Record<string, unknown> | undefined {
    return this.#values.get(node) ?? this.#parent?.get(node);
  }
}

/**
 * The interpreter decides a condition and a loop's limit itself, but a value that holds a secret
 * reaches it only as a placeholder or ciphertext (server/pipelines/engine/sealedValues.ts): any answer
 * would be wrong, so the run fails instead.
 */
function refuseSecrets(step: PlanStep, what: string, values: unknown[]) {
  if (values.some(holdsSealed)) {
    throw new PipelineRunError(
      step.name,
      'secret_in_condition',
      `\`${step.name}\`: ${what} holds a secret, which the workflow cannot read; compare secrets inside a node instead`,
    );
  }
}

/** The nodes the interpreter runs itself (`flowNodes`); every other node is handed over. */
export const isFlowStep = (step: PlanStep) => nodeRegistry.get(step.type)?.category === 'flow';

/**
 * Every output something reads, by node: references in inputs and in sub-graph and pipeline
 * outputs, and, when the result is the sinks', every output of those nodes but their pages.
 */
function readOutputs(plan: Plan) {
  const read = new Map<string, Set<string>>();
  const note = (node: string, output: string) => {
    const outputs = read.get(node) ?? new Set<string>();
    read.set(node, outputs);
    outputs.add(output);
  };
  const noteValues = (values: Record<string, PlanValue>) => {
    for (const value of Object.values(values)) if (value.kind === 'ref') note(value.node, value.output);
  };
  const walk = (steps: PlanStep[]) => {
    for (const step of steps) {
      noteValues(step.inputs);
      for (const block of Object.values(step.blocks ?? {})) {
        walk(block.steps);
        noteValues(block.outputs);
      }
    }
  };
  walk(plan.steps);
  if (plan.result.kind === 'declared') noteValues(plan.result.outputs);
  else {
    const sinks = new Set(plan.result.nodes);
    for (const step of plan.steps) {
      if (!sinks.has(step.name)) continue;
      for (const [output, refType] of Object.entries(step.outputs)) if (refType !== 'page') note(step.name, output);
    }
  }
  return read;
}

/** How the nodes that are not flow nodes run: one call per node, or one per stretch. */
export type RunPlanOptions = { args: Record<string, unknown>; onNodeDone?: OnNodeDone } & (
  | { runNode: RunNode }
  | { runStretch: RunStretch }
);

export async function runPlan(plan: Plan, options: RunPlanOptions): Promise<RunResult> {
  if (plan?.format !== PLAN_FORMAT)
    throw new PipelineRunError(null, 'invalid_plan', `not a plan of format ${PLAN_FORMAT}; recompile the version`);
  // Inside the workflow a secret argument may be a stand-in the activity swaps back
  // (server/pipelines/runSecrets.ts); its type was checked where the run started.
  const { values: args, problems } = prepareArgs(plan, options.args, { trustSecrets: true });
  if (problems.length) throw new PipelineRunError(null, 'invalid_args', problems.map((problem) => problem.message).join('; '));

  const outputs: Record<string, Record<string, unknown>> = {};
  let steps = 0;
  const stretches = 'runStretch' in options ? options.runStretch : undefined;
  const readLater = stretches ? readOutputs(plan) : new Map<string, Set<string>>();

  const read = (value: PlanValue, scope: Scope, node: string): unknown => {
    switch (value.kind) {
      case 'literal':
        return value.value;
      case 'param':
        return args[value.name];
      case 'ref': {
        const source = scope.get(value.node);
        if (!source) throw new PipelineRunError(node, 'invalid_plan', `\`${node}\` reads \`${value.node}\`, which has not run`);
        // A branch output the taken branch does not declare, or a missing output, reads as null.
        return Object.hasOwn(source, value.output) ? source[value.output] : null;
      }
    }
  };

  const readAll = (values: Record<string, PlanValue>, scope: Scope, node: string) =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, read(value, scope, node)]));

  const done = async (step: PlanStep, result: Record<string, unknown>, scope: Scope, path: string[]) => {
    scope.set(step.name, result);
    const key = [...path, step.name].join('.');
    outputs[key] = result;
    await options.onNodeDone?.({ key, node: step.name, type: step.type, path, outputs: result });
  };

  const runBlock = async (block: PlanBlock, scope: Scope, path: string[]) => {
    for (let i = 0; i < block.steps.length; ) {
      const step = block.steps[i] as PlanStep;
      // The next stretch: this step and the steps after it up to a flow node, within the step limit.
      let end = i;
      while (stretches && end < block.steps.length && end - i < MAX_RUN_STEPS - steps && !isFlowStep(block.steps[end] as PlanStep)) end++;
      if (end === i) {
        await done(step, await runStep(step, scope, path), scope, path);
        i++;
        continue;
      }
      const stretch = block.steps.slice(i, end);
      const results = await handOver(stretch, scope, path);
      for (const [index, result] of results.entries()) {
        steps++;
        await done(stretch[index] as PlanStep, result, scope, path);
      }
      i += results.length;
    }
  };

  const handOver = async (stretch: PlanStep[], scope: Scope, path: string[]) => {
    if (!stretches) throw new Error('a stretch without runStretch');
    const inside = new Set(stretch.map((step) => step.name));
    const nodes = stretch.map(
      (step): StretchNode => ({
        node: step.name,
        type: step.type,
        browser: step.browser,
        inputs: Object.fromEntries(
          Object.entries(step.inputs).map(([name, value]) => [
            name,
            value.kind === 'ref' && inside.has(value.node)
              ? { kind: 'ref', node: value.node, output: value.output }
              : { kind: 'value', value: read(value, scope, step.name) },
          ]),
        ),
        keep: [...(readLater.get(step.name) ?? [])],
        ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
        ...(step.retries ? { retries: step.retries } : {}),
      }),
    );
    const results = await stretches({ path, browser: nodes.some((node) => node.browser), nodes });
    if (!Array.isArray(results) || results.length === 0 || results.length > nodes.length) {
      throw new PipelineRunError(
        stretch[0]?.name ?? null,
        'invalid_outputs',
        `the stretch from \`${stretch[0]?.name}\` answered no outputs`,
      );
    }
    for (const [index, result] of results.entries()) {
      if (result === null || typeof result !== 'object' || Array.isArray(result)) {
        const step = stretch[index] as PlanStep;
        throw new PipelineRunError(step.name, 'invalid_outputs', `\`${step.name}\` (${step.type}) returned no outputs record`);
      }
    }
    return results;
  };

  const runStep = async (step: PlanStep, scope: Scope, path: string[]): Promise<Record<string, unknown>> => {
    steps++;
    if (steps > MAX_RUN_STEPS) {
      throw new PipelineRunError(
        step.name,
        'too_many_steps',
        `the run would execute more than ${MAX_RUN_STEPS} steps (at \`${[...path, step.name].join('.')}\`); loop over fewer items (\`maxItems\`) or split the work into several runs`,
      );
    }
    const inputs = readAll(step.inputs, scope, step.name);
    if (isFlowStep(step)) return flowNodes[step.type as FlowNodeType](step, inputs, scope, path);
    // With stretches, a node that is not a flow node reaches here only past the step limit (thrown above).
    if (!('runNode' in options)) throw new PipelineRunError(step.name, 'invalid_plan', `\`${step.name}\` was not part of a stretch`);
    const result = await options.runNode({
      node: step.name,
      type: step.type,
      inputs,
      path,
      browser: step.browser,
      ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
      ...(step.retries ? { retries: step.retries } : {}),
    });
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      throw new PipelineRunError(step.name, 'invalid_outputs', `\`${step.name}\` (${step.type}) returned no outputs record`);
    }
    return result;
  };

  const innerValues = (step: PlanStep, inputs: Record<string, unknown>) => ('page' in step.inputs ? { page: inputs.page } : {});

  const runForEach = async (step: PlanStep, inputs: Record<string, unknown>, scope: Scope, path: string[]) => {
    const { items, maxItems } = inputs;
    refuseSecrets(step, 'maxItems', [maxItems]);
    if (!Array.isArray(items)) throw new PipelineRunError(step.name, 'invalid_input', `\`${step.name}\`: items is not a list`);
    const limit = typeof maxItems === 'number' && maxItems >= 0 ? Math.floor(maxItems) : items.length;
    const body = step.blocks?.body;
    if (!body) throw new PipelineRunError(step.name, 'invalid_plan', `\`${step.name}\` has no body`);
    const results: Record<string, unknown>[] = [];
    const collected: Record<string, unknown[]> = Object.fromEntries(Object.keys(body.outputs).map((name) => [name, []]));
    for (const [index, item] of items.slice(0, limit).entries()) {
      const inner = new Scope(scope);
      inner.set(step.name, { item, index, ...innerValues(step, inputs) });
      await runBlock(body, inner, [...path, step.name, String(index)]);
      const record = readAll(body.outputs, inner, step.name);
      results.push(record);
      for (const [name, value] of Object.entries(record)) collected[name]?.push(value);
    }
    return { ...collected, results, count: results.length, ...innerValues(step, inputs) };
  };

  const runCondition = async (step: PlanStep, inputs: Record<string, unknown>, scope: Scope, path: string[]) => {
    refuseSecrets(step, 'the value or operand', [inputs.value, inputs.operand]);
    let matched: boolean;
    try {
      matched = evaluateCondition(inputs.value, typeof inputs.operator === 'string' ? inputs.operator : 'truthy', inputs.operand);
    } catch (error) {
      throw new PipelineRunError(step.name, 'invalid_input', `\`${step.name}\`: ${(error as Error).message}`);
    }
    const branch = matched ? 'then' : 'else';
    const branchOutputs: Record<string, unknown> = {};
    // A branch's outputs are the plan's outputs of the node but the names flow nodes fill themselves.
    for (const name of Object.keys(step.outputs)) if (!flowOutputNames.has(name)) branchOutputs[name] = null;
    const block = step.blocks?.[branch];
    if (block) {
      const inner = new Scope(scope);
      inner.set(step.name, innerValues(step, inputs));
      await runBlock(block, inner, [...path, step.name, branch]);
      Object.assign(branchOutputs, readAll(block.outputs, inner, step.name));
    }
    return { ...branchOutputs, matched, branch, ...innerValues(step, inputs) };
  };

  /** The flow nodes' implementations: the interpreter runs them, as they run sub-graphs. */
  const flowNodes = {
    'flow.forEach': runForEach,
    'flow.condition': runCondition,
  } satisfies Record<
    FlowNodeType,
    (step: PlanStep, inputs: Record<string, unknown>, scope: Scope, path: string[]) => Promise<Record<string, unknown>>
  >;

  const root = new Scope();
  await runBlock({ steps: plan.steps, outputs: {} }, root, []);

  let result: Record<string, unknown>;
  if (plan.result.kind === 'declared') {
    result = readAll(plan.result.outputs, root, 'outputs');
  } else {
    result = {};
    const types = new Map(plan.steps.map((step) => [step.name, step.outputs]));
    for (const node of plan.result.nodes) {
      const values = root.get(node) ?? {};
      const declared: Record<string, RefType> = types.get(node) ?? {};
      result[node] = Object.fromEntries(Object.entries(values).filter(([name]) => declared[name] !== 'page'));
    }
  }
  return { outputs, result };
}
