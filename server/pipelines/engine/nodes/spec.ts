/**
 * What a node type is: its spec (ports, input checks, docs, and the few facts the compiler, the
 * interpreter and the executors read from it), and the types that bind an implementation to its
 * spec. `nodeSpec` and `defineNode` keep a spec's literal types, so `InputsOf<spec>` names every
 * input with its TypeScript type: an implementation that reads an input its spec does not have,
 * or reads it as the wrong type, does not compile.
 *
 * Pure: workflows import the engine, so no Node built-ins and no playwright.
 */
import type { RefType } from '../refTypes.ts';

export type NodeCategory = 'browser' | 'extract' | 'flow' | 'data';

export type InputSpec = {
  refType: RefType;
  required: boolean;
  /** Put into the plan when the input is not given. */
  default?: unknown;
  /** For string inputs: the only literals accepted. */
  enum?: readonly string[];
  /** For number inputs: bounds of a literal (and of the value at run time). */
  min?: number;
  max?: number;
  /**
   * When the node runs, an empty string counts as not given (a required selector, URL, key or
   * script cannot be ""). Not checked on literals: the compiler accepts "" as it always has.
   */
  nonEmpty?: boolean;
  /**
   * A rule beyond the refType, enum and bounds: the problem with a value, or null. Checked on
   * literals and at run time. A rule that guarantees a shape is written with `shapedCheck`.
   */
  check?: (value: unknown) => string | null;
  description: string;
};

export type OutputSpec = { refType: RefType; description: string };

export type BlockSpec = {
  description: string;
  required: boolean;
  /** What nodes inside the block may reference as `<flow node>.<name>`. */
  inner: Record<string, OutputSpec & { onlyWithInput?: string }>;
};

export type NodeTypeSpec = {
  type: string;
  title: string;
  description: string;
  category: NodeCategory;
  /** Runs against a browser page (on the browser's host); otherwise a data node (or a flow node, which the interpreter runs). */
  browser: boolean;
  inputs: Record<string, InputSpec>;
  outputs: Record<string, OutputSpec & { onlyWithInput?: string }>;
  /** At least one of these inputs must be given. */
  oneOf?: readonly string[];
  /** Inputs with free names are allowed, of this type (e.g. the variables of `text.template`). */
  extraInputs?: { refType: RefType; description: string };
  /** Sub-graphs the node takes, by the key that holds them on the node. */
  blocks?: Record<string, BlockSpec>;
  /**
   * How a block's declared outputs appear among the node's outputs: `list` collects one value
   * per iteration (flow.forEach); `value` passes the taken branch's value, null if it has none.
   */
  blockOutputs?: 'list' | 'value';
  /** The per-attempt time limit put into the plan when the node sets no `timeoutMs`. */
  defaultTimeoutMs?: number;
  /**
   * Its outputs hold the browser's cookie values: a run of a plan with such a node needs, and
   * shows its outputs only to, callers who may read the session's cookies.
   */
  readsCookies?: boolean;
  /**
   * It obtains a tab instead of acting on one: it takes no `page`, the host hands it a tab of the
   * run's browser and its `page` output is a new handle. Its `newTab` input asks for a fresh tab
   * (a generation's dry run sets it, so the candidate never acts on the tab the user watches).
   */
  opensPage?: boolean;
  /** What to change when its outputs are too large for workflow history (the `output_too_large` message ends with it). */
  outputTooLargeHint?: string;
  /** The input whose `{{name}}` placeholders name the node's other inputs: the compiler reports a placeholder no input fills. */
  placeholdersIn?: string;
  /**
   * A rule on a literal input that depends on the node's other inputs as written (the compiler
   * runs it; at run time the node refuses the value itself): the problem, or null.
   */
  checkLiteral?: (name: string, value: unknown, inputs: Record<string, unknown>) => string | null;
  /** A small, complete source that uses the node. */
  example: Record<string, unknown>;
};

declare const checkedShape: unique symbol;

/** An input's `check` that guarantees the value is a `T` (`shapedCheck`); `InputsOf` reads `T` off it. */
export type ShapedCheck<T> = ((value: unknown) => string | null) & { readonly [checkedShape]?: T };

/**
 * The `check` of an input whose rule guarantees a shape its refType does not say (a list of
 * strings, a record of field specs): `InputsOf` types the input as `T`, so its implementation
 * reads it without a cast. The rule and the type sit side by side in the spec.
 */
export const shapedCheck = <T>(check: (value: unknown) => string | null): ShapedCheck<T> => check;

/** The opaque JSON handle of a browser tab that travels through the plan (see server/browsers/host/nodes/executeNode.ts). */
export type PageHandle = { pageId: string };

/** The TypeScript type of a checked value of each refType. */
type RefTypeValues = {
  string: string;
  number: number;
  boolean: boolean;
  json: unknown;
  list: unknown[];
  record: Record<string, unknown>;
  html: string;
  image: string;
  page: PageHandle;
};

type InputValue<I extends InputSpec> = I extends { enum: readonly (infer E extends string)[] }
  ? E
  : I extends { check: ShapedCheck<infer V> }
    ? unknown extends V
      ? RefTypeValues[I['refType']]
      : V
    : RefTypeValues[I['refType']];

/** Required inputs and inputs with a default are always there once checkNodeInputs has run. */
type AlwaysGiven<I extends InputSpec> = I extends { required: true }
  ? true
  : I extends { default: infer D }
    ? undefined extends D
      ? false
      : true
    : false;

/**
 * A node's inputs as its implementation receives them from `checkNodeInputs` (nodeInputs.ts):
 * types, enums and bounds checked, defaults filled in, an optional input not given absent, and,
 * when the spec allows inputs with free names, those too.
 */
export type InputsOf<S extends NodeTypeSpec> = {
  -readonly [K in keyof S['inputs']]: AlwaysGiven<S['inputs'][K]> extends true
    ? InputValue<S['inputs'][K]>
    : InputValue<S['inputs'][K]> | undefined;
} & (S extends { extraInputs: object } ? Record<string, unknown> : unknown);

/** What an implementation answers: every output of its spec, but the `page` a browser node's executor adds. */
export type OutputsOf<S extends NodeTypeSpec> = { [K in Exclude<keyof S['outputs'], 'page'>]: unknown };

/**
 * A spec of a browser, extract or flow node, with its literal types kept (for `InputsOf` and the
 * registry's type unions). Their implementations live where they can run: browser and extract
 * nodes on the host (server/browsers/host/nodes/, a file per category), flow nodes in the interpreter;
 * each of those tables is typed to have one entry per type of its kind.
 */
export function nodeSpec<const S extends NodeTypeSpec & { category: Exclude<NodeCategory, 'data'> }>(spec: S): S {
  return spec;
}

/** A data node's implementation as the engine calls it, on inputs `checkNodeInputs` answered. */
export type DataNodeRun = (inputs: Record<string, unknown>) => Record<string, unknown>;

export type DataNode<S extends NodeTypeSpec = NodeTypeSpec> = { spec: S; run: DataNodeRun };

/**
 * A data node: its spec and its implementation in one unit, the implementation's inputs typed
 * from the spec. Data nodes are deterministic and workflow-safe, so both live in the engine.
 */
export function defineNode<const S extends NodeTypeSpec & { category: 'data'; browser: false }>(
  spec: S,
  run: (inputs: InputsOf<S>) => OutputsOf<S>,
): DataNode<S> {
  // The one widening: whatever calls `run` has passed the inputs through checkNodeInputs(spec).
  return { spec, run: run as unknown as DataNodeRun };
}
