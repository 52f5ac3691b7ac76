/**
 * A pipeline's source as a graph to draw: its parameters, nodes (sub-graphs of flow nodes
 * flattened, each named by its path, e.g. `loop.body.read`), outputs, and an edge for every
 * `$ref` and `$param` an input or output holds. References resolve as the compiler resolves them
 * (docs/pipeline-language.md): a node sees its own sub-graph and every enclosing level.
 */
export type GraphNode = { id: string; label: string; kind: 'parameter' | 'node' | 'outputs'; type?: string; within?: string };
export type GraphEdge = { id: string; source: string; target: string; label?: string };

type Level = { prefix: string[]; names: Set<string> };
type SourceNode = { type?: string; inputs?: unknown; [key: string]: unknown };
type SubGraph = { nodes?: Record<string, SourceNode>; outputs?: unknown };

const isSubGraph = (value: unknown): value is SubGraph =>
  !!value && typeof value === 'object' && !Array.isArray(value) && typeof (value as SubGraph).nodes === 'object';

/** Every `{$ref}` and `{$param}` inside `value`, with the output or parameter it names. */
function references(value: unknown, found: { ref?: string; param?: string }[] = []) {
  if (Array.isArray(value)) for (const item of value) references(item, found);
  else if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if (typeof object.$ref === 'string') found.push({ ref: object.$ref });
    else if (typeof object.$param === 'string') found.push({ param: object.$param });
    else for (const item of Object.values(object)) references(item, found);
  }
  return found;
}

export function graphOf(source: Record<string, unknown>) {
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const parameters = Object.keys((source.parameters ?? {}) as Record<string, unknown>);
  for (const name of parameters) nodes.push({ id: `param:${name}`, label: name, kind: 'parameter' });

  const link = (target: string, refs: { ref?: string; param?: string }[], scopes: Level[]) => {
    for (const { ref, param } of refs) {
      if (param !== undefined) {
        if (parameters.includes(param)) edges.push({ id: `${target}<-param:${param}`, source: `param:${param}`, target });
        continue;
      }
      const [name, ...output] = (ref as string).split('.');
      // The nearest level that has a node of that name (the innermost first).
      const scope = [...scopes].reverse().find((level) => level.names.has(name as string));
      if (!scope) continue;
      const source = [...scope.prefix, name].join('.');
      if (source !== target) edges.push({ id: `${target}<-${source}.${output.join('.')}`, source, target, label: output.join('.') });
    }
  };

  const walk = (graph: SubGraph, prefix: string[], scopes: Level[], within?: string) => {
    const entries = Object.entries(graph.nodes ?? {});
    const level = { prefix, names: new Set(entries.map(([name]) => name)) };
    const visible = [...scopes, level];
    for (const [name, node] of entries) {
      const id = [...prefix, name].join('.');
      nodes.push({ id, label: name, kind: 'node', type: node.type, within });
      link(id, references(node.inputs), visible);
      for (const [key, value] of Object.entries(node)) {
        if (isSubGraph(value)) walk(value, [...prefix, name, key], visible, id);
      }
    }
    return visible;
  };
  const top = walk(source as SubGraph, [], []);
  const outputs = references(source.outputs);
  if (outputs.length) {
    nodes.push({ id: 'outputs', label: 'outputs', kind: 'outputs' });
    link('outputs', outputs, top);
  }
  return { nodes, edges };
}
