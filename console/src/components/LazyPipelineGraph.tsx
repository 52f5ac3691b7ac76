import { lazy, Suspense } from 'react';

// The graph's libraries (React Flow, dagre) are half the console's code: loaded with the first graph.
const PipelineGraph = lazy(() => import('./PipelineGraph.tsx').then((module) => ({ default: module.PipelineGraph })));

/** A pipeline's source drawn, each node the compiler's `errors` name outlined; "Drawing…" while its libraries load. */
export function LazyPipelineGraph({ source, errors }: { source: Record<string, unknown>; errors: readonly { node?: string | null }[] }) {
  return (
    <Suspense fallback={<p className="muted">Drawing…</p>}>
      <PipelineGraph source={source} failing={new Set(errors.flatMap((error) => (error.node ? [error.node] : [])))} />
    </Suspense>
  );
}
