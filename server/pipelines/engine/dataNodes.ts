/**
 * Runs the data nodes (engine/nodes/data.ts). Deterministic and free of Node built-ins: a workflow
 * may run them inline through `runDataNode` instead of scheduling an activity for them, and the
 * activities run them through `executeDataNode`.
 */
import { NodeError, NodeInputError } from './nodeErrors.ts';
import { checkNodeInputs } from './nodeInputs.ts';
import { dataNodes } from './nodes/data.ts';
import type { DataNodeRun } from './nodes/spec.ts';
import { type DataNodeType, nodeRegistry } from './registry.ts';

/** Every data node's implementation, by type: `defineNode` gave each spec its implementation. */
const implementations: ReadonlyMap<string, DataNodeRun> = new Map(dataNodes.map((node) => [node.spec.type, node.run]));

export function isDataNodeType(type: string): type is DataNodeType {
  return implementations.has(type);
}

/** Runs a data node on inputs `checkNodeInputs` answered; deterministic, so a workflow may call it directly. */
export function runDataNode(type: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const run = implementations.get(type);
  if (!run) throw new Error(`\`${type}\` is not a data node`);
  return run(inputs);
}

/**
 * A data node as an activity runs it: an unknown type, or a flow node (the interpreter runs
 * those), is refused; its inputs are checked against its spec; a failure is the node's input
 * error, never worth a retry.
 */
export function executeDataNode(type: string, rawInputs: Record<string, unknown>): Record<string, unknown> {
  const spec = nodeRegistry.get(type);
  if (!spec) throw new NodeError('unknown_type', `unknown node type \`${type}\``, { retryable: false });
  if (!isDataNodeType(type)) throw new NodeError('unknown_type', `${type} is run by the interpreter, not as a node`, { retryable: false });
  const { values, problem } = checkNodeInputs(spec, rawInputs);
  if (problem) throw new NodeInputError(`${type}: ${problem.message}`);
  return runDataNode(type, values);
}
