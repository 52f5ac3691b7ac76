import dagre from '@dagrejs/dagre';
import { Background, Controls, type Edge, MarkerType, type Node, ReactFlow } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import { graphOf } from '../graph.ts';

const NODE_WIDTH = 170;
const NODE_HEIGHT = 52;

/**
 * The pipeline drawn: parameters on the left, nodes in the order their references run, outputs
 * on the right, laid out by dagre. A node the compiler has errors for is outlined in red; a
 * sub-graph's node says which flow node holds it.
 */
export function PipelineGraph({ source, failing }: { source: Record<string, unknown>; failing: Set<string> }) {
  const { nodes, edges } = useMemo(() => layout(source, failing), [source, failing]);
  return (
    <figure className="graph" aria-label="pipeline graph" data-nodes={nodes.length} data-edges={edges.length}>
      <ReactFlow nodes={nodes} edges={edges} fitView nodesConnectable={false} nodesDraggable={false} proOptions={{ hideAttribution: true }}>
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </figure>
  );
}

function layout(source: Record<string, unknown>, failing: Set<string>) {
  const graph = graphOf(source);
  const dag = new dagre.graphlib.Graph();
  dag.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 60 });
  dag.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes) dag.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const edge of graph.edges) dag.setEdge(edge.source, edge.target);
  dagre.layout(dag);
  const nodes: Node[] = graph.nodes.map((node) => {
    const { x, y } = dag.node(node.id);
    return {
      id: node.id,
      position: { x: x - NODE_WIDTH / 2, y: y - NODE_HEIGHT / 2 },
      data: {
        label: (
          <span data-node={node.id}>
            <strong>{node.label}</strong>
            <br />
            <small>{node.kind === 'node' ? `${node.type ?? '?'}${node.within ? ` in ${node.within}` : ''}` : node.kind}</small>
          </span>
        ),
      },
      className: `graph-node ${node.kind}${failing.has(node.id) ? ' failing' : ''}`,
      sourcePosition: 'right' as Node['sourcePosition'],
      targetPosition: 'left' as Node['targetPosition'],
      style: { width: NODE_WIDTH },
    };
  });
  const edges: Edge[] = graph.edges.map((edge) => ({
    ...edge,
    markerEnd: { type: MarkerType.ArrowClosed },
    labelStyle: { fontSize: 10 },
  }));
  return { nodes, edges };
}
