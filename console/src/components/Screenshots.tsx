import { Text, Title } from '@mantine/core';
import type { Screenshot } from '../../../client/index.ts';

/**
 * The service gives a screenshot's URL at PUBLIC_URL; the console reads it at its own origin (the
 * session cookie goes with it, and the CSP allows this origin's images only).
 */
export const screenshotPath = (url: string) => new URL(url, window.location.href).pathname;

/** A node's pictures as thumbnails, each a link to the full JPEG. */
export function Screenshots({ shots }: { shots: readonly Screenshot[] }) {
  if (shots.length === 0) return null;
  return (
    <ul className="screenshots">
      {shots.map((shot) => (
        <li key={shot.id}>
          <a href={screenshotPath(shot.url)} target="_blank" rel="noreferrer">
            <img
              src={screenshotPath(shot.url)}
              alt={`${shot.kind === 'failure' ? 'where it failed' : 'after'}: ${shot.node} at ${shot.pageUrl}`}
              width={240}
              height={Math.round((240 * shot.height) / Math.max(shot.width, 1))}
              loading="lazy"
            />
          </a>
          <Text size="xs" c={shot.kind === 'failure' ? 'var(--mantine-color-error)' : 'dimmed'}>
            {shot.kind === 'failure' ? 'where it failed' : 'after the step'}
          </Text>
        </li>
      ))}
    </ul>
  );
}

/**
 * Each node's outputs and pictures. With a picture after every step, they give the order the run
 * reached the nodes; otherwise the outputs' order, then the nodes with pictures and no outputs (the
 * one that failed).
 */
export function stepsOf(nodeOutputs: Record<string, unknown>, shots: readonly Screenshot[]) {
  const pictured = [...new Set(shots.map((shot) => shot.node))];
  const known = Object.keys(nodeOutputs);
  const everyStep = known.every((node) => pictured.includes(node));
  const order = everyStep ? [...pictured, ...known.filter((node) => !pictured.includes(node))] : [...new Set([...known, ...pictured])];
  return order.map((node) => ({
    node,
    outputs: nodeOutputs[node],
    has: Object.hasOwn(nodeOutputs, node),
    shots: shots.filter((shot) => shot.node === node),
  }));
}

/**
 * Pictures of the pages a proposal acts on, each element its steps name boxed and numbered as the
 * step list numbers them. Boxes are placed in percent of the picture, so they follow its scale.
 */
export function ProposalPictures({ shots }: { shots: readonly Screenshot[] }) {
  if (shots.length === 0) return null;
  return (
    <section aria-label="where the steps act">
      <Title order={3} size="h4" mb="xs">
        Where the steps act
      </Title>
      {shots.map((shot) => (
        <figure key={shot.id} className="highlighted">
          <div className="frame">
            <img src={screenshotPath(shot.url)} alt={`the page at ${shot.pageUrl}`} width={shot.width} height={shot.height} />
            {shot.boxes?.map((box) => (
              <span
                key={`${box.step}:${box.selector}`}
                className="box"
                role="note"
                aria-label={`step ${box.step + 1}: ${box.selector}`}
                style={{
                  left: `${(100 * box.x) / shot.width}%`,
                  top: `${(100 * box.y) / shot.height}%`,
                  width: `${(100 * box.width) / shot.width}%`,
                  height: `${(100 * box.height) / shot.height}%`,
                }}
              >
                <span className="box-label">{box.step + 1}</span>
              </span>
            ))}
          </div>
          <Text component="figcaption" size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
            {shot.pageUrl} · steps {shot.boxes?.map((box) => box.step + 1).join(', ')}
          </Text>
        </figure>
      ))}
    </section>
  );
}
