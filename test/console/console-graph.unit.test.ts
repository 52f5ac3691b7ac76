import { describe, expect, it } from 'vitest';
import { graphOf } from '../../console/src/graph.ts';

/** The console draws a pipeline from its source: which boxes and arrows it gets (console/src/graph.ts). */
describe('a pipeline drawn as a graph', () => {
  it('has a box per parameter, node and the outputs, and an arrow per reference', () => {
    const { nodes, edges } = graphOf({
      parameters: { url: { refType: 'string' } },
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    expect(nodes.map((node) => `${node.kind}:${node.id}`)).toEqual([
      'parameter:param:url',
      'node:page',
      'node:open',
      'node:heading',
      'outputs:outputs',
    ]);
    expect(edges.map((edge) => `${edge.source}->${edge.target}${edge.label ? ` (${edge.label})` : ''}`).sort()).toEqual([
      'heading->outputs (text)',
      'open->heading (page)',
      'page->open (page)',
      'param:url->open',
    ]);
  });

  it('resolves a reference inside a loop to its own level first, then the enclosing ones', () => {
    const { nodes, edges } = graphOf({
      nodes: {
        page: { type: 'browser.page' },
        read: { type: 'extract.text', inputs: { page: { $ref: 'page.page' }, selector: 'h1' } },
        loop: {
          type: 'flow.forEach',
          inputs: { items: [1, 2], page: { $ref: 'page.page' } },
          body: {
            nodes: {
              read: { type: 'extract.text', inputs: { page: { $ref: 'loop.page' }, selector: 'li' } },
              shout: { type: 'data.template', inputs: { text: { $ref: 'read.text' }, first: { $ref: 'page.page' } } },
            },
            outputs: { text: { $ref: 'shout.text' } },
          },
        },
      },
    });
    expect(nodes.find((node) => node.id === 'loop.body.read')).toMatchObject({ type: 'extract.text', within: 'loop' });
    const arrows = edges.map((edge) => `${edge.source}->${edge.target}`);
    // `read` inside the body is the body's own, not the top level's; `page` is the top level's.
    expect(arrows).toContain('loop.body.read->loop.body.shout');
    expect(arrows).not.toContain('read->loop.body.shout');
    expect(arrows).toContain('page->loop.body.shout');
    expect(arrows).toContain('loop->loop.body.read');
    // No outputs box without top-level outputs; unknown names draw nothing.
    expect(nodes.some((node) => node.kind === 'outputs')).toBe(false);
  });

  it('draws nothing for references to what does not exist, and no arrow from a node to itself', () => {
    const { edges } = graphOf({
      nodes: { a: { type: 'x', inputs: { v: { $ref: 'nowhere.out' }, w: { $param: 'missing' }, self: { $ref: 'a.out' } } } },
    });
    expect(edges).toEqual([]);
  });
});
