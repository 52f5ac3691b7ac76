/**
 * The execution plan: what the compiler makes of a source without errors, what
 * `pipeline_versions.plan` stores, and what the `pipelineRun` workflow hands to `runPlan`.
 * Plain JSON, so it survives the database and Temporal's payload converter unchanged.
 *
 * Pure types: workflows import them.
 */
import type { RefType } from './refTypes.ts';

export const PLAN_FORMAT = 'browserflow.plan/1';

/** An input value, resolved: a literal (defaults included), another node's output, or a parameter. */
export type PlanValue =
  | { kind: 'literal'; value: unknown }
  | { kind: 'ref'; node: string; output: string }
  | { kind: 'param'; name: string };

export type PlanBlock = {
  /** In execution order. */
  steps: PlanStep[];
  /** What the block hands to its flow node (the pipeline's outputs, for the top block). */
  outputs: Record<string, PlanValue>;
};

export type PlanStep = {
  name: string;
  type: string;
  /** Runs against a page on the browser's host; otherwise a data node. Flow nodes are false. */
  browser: boolean;
  inputs: Record<string, PlanValue>;
  /** The node's outputs (for flow nodes, with those of its sub-graphs) and their types. */
  outputs: Record<string, RefType>;
  /** Per attempt; absent on flow nodes, which the interpreter runs itself. */
  timeoutMs?: number;
  /** Extra attempts after a failure. */
  retries: number;
  /** flow.forEach: `body`; flow.condition: `then` and/or `else`. */
  blocks?: Record<string, PlanBlock>;
};

export type PlanParameter = { refType: RefType; secret: boolean; required: boolean; default?: unknown; description?: string };

export type Plan = {
  format: typeof PLAN_FORMAT;
  parameters: Record<string, PlanParameter>;
  steps: PlanStep[];
  /**
   * How the run's `result` is made: the declared `outputs` of the source, or, when it declares
   * none, every output that is not a page of the top-level nodes nothing else consumes
   * (`result[node][output]`).
   */
  result: { kind: 'declared'; outputs: Record<string, PlanValue> } | { kind: 'sinks'; nodes: string[] };
  /** Parameter names whose values are secret (for redaction of logs, errors and stored args). */
  secrets: string[];
};
