/**
 * The node registry: the one description of every node type, assembled from one file per
 * category under ./nodes/. It feeds the compiler (inputs, outputs, refTypes), the JSON Schema of a
 * source, the catalog (`GET …/pipelines/nodes`, and the generation model's instructions, which
 * read `nodeCatalog()`), the interpreter (flow nodes) and the executors (data nodes here in the
 * engine, browser nodes on the host); scripts/render-node-docs.ts renders docs/pipeline-language.md's
 * node reference from it.
 *
 * Adding a node type: its entry in the file of its category. A data node is one `defineNode(spec,
 * implementation)` in nodes/data.ts; a browser or extract node's spec goes to nodes/browser.ts or
 * nodes/extract.ts and its implementation to the same category's file in server/browsers/host/nodes/
 * (browser.ts, extract.ts), whose table does not compile without it. A new category is one more file and one more line below.
 *
 * Pure data and pure functions: workflows import it, so no Node built-ins and no playwright.
 */
import { browserNodeSpecs } from './nodes/browser.ts';
import { dataNodes } from './nodes/data.ts';
import { extractNodeSpecs } from './nodes/extract.ts';
import { flowNodeSpecs } from './nodes/flow.ts';
import type { NodeTypeSpec } from './nodes/spec.ts';
import type { Plan, PlanStep } from './plan.ts';
import { refTypeDescriptions, refTypes } from './refTypes.ts';

const specs: NodeTypeSpec[] = [...browserNodeSpecs, ...extractNodeSpecs, ...flowNodeSpecs, ...dataNodes.map((node) => node.spec)];

type AnyNodeSpec =
  | (typeof browserNodeSpecs)[number]
  | (typeof extractNodeSpecs)[number]
  | (typeof flowNodeSpecs)[number]
  | (typeof dataNodes)[number]['spec'];

export type NodeType = AnyNodeSpec['type'];
/** The spec of one node type, with its literal types (for `InputsOf`). */
export type NodeSpecOf<T extends NodeType> = Extract<AnyNodeSpec, { type: T }>;
/** The nodes that run on the browser's host (browser and extract nodes). */
export type BrowserNodeType = Extract<AnyNodeSpec, { browser: true }>['type'];
/** The nodes the interpreter runs itself. */
export type FlowNodeType = Extract<AnyNodeSpec, { category: 'flow' }>['type'];
export type DataNodeType = Extract<AnyNodeSpec, { category: 'data' }>['type'];

export const nodeRegistry: ReadonlyMap<string, NodeTypeSpec> = new Map(specs.map((spec) => [spec.type, spec]));

/** Whether a plan (in any of its sub-graphs) has a node that reads the browser's cookies. */
export function planReadsCookies(plan: Plan | null): boolean {
  const readsCookies = (step: PlanStep): boolean =>
    nodeRegistry.get(step.type)?.readsCookies === true || Object.values(step.blocks ?? {}).some((block) => block.steps.some(readsCookies));
  return plan?.steps.some(readsCookies) ?? false;
}

/** Whether a plan (in any of its sub-graphs) has a node of one of `types`. */
export function planHasNodeOf(plan: Plan | null, types: readonly string[]): boolean {
  const has = (step: PlanStep): boolean =>
    types.includes(step.type) || Object.values(step.blocks ?? {}).some((block) => block.steps.some(has));
  return plan?.steps.some(has) ?? false;
}

/** The catalog, as `GET …/pipelines/nodes` answers it. JSON only. */
export function nodeCatalog() {
  return {
    refTypes: refTypes.map((name) => ({ name, description: refTypeDescriptions[name] })),
    nodes: specs.map((spec) => ({
      type: spec.type,
      title: spec.title,
      description: spec.description,
      category: spec.category,
      browser: spec.browser,
      inputs: Object.fromEntries(
        Object.entries(spec.inputs).map(([name, { check: _check, nonEmpty: _nonEmpty, ...input }]) => [name, input]),
      ),
      outputs: Object.fromEntries(Object.entries(spec.outputs).map(([name, output]) => [name, { ...output }])),
      ...(spec.oneOf ? { oneOf: [...spec.oneOf] } : {}),
      ...(spec.extraInputs ? { extraInputs: { ...spec.extraInputs } } : {}),
      ...(spec.blocks ? { blocks: spec.blocks, blockOutputs: spec.blockOutputs } : {}),
      ...(spec.defaultTimeoutMs ? { defaultTimeoutMs: spec.defaultTimeoutMs } : {}),
      example: spec.example,
    })),
  };
}
