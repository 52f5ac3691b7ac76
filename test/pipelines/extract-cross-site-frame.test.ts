import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTHER_SITE_HOST, PAGE_HOST, startTestSite } from '../support/pages.ts';
import { createPipeline, settledRun, userWithSession } from '../support/pipelines.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Extraction reads the host's own isolated world of the frame that holds the matches. A frame of
 * another site runs in a renderer process of its own (site isolation), out of reach of the page's
 * CDP session: the host opens a session on that frame. A page that hides the matches from the
 * host's read fails the node instead of reading as nothing.
 */

const IN_FRAME = 'iframe >> internal:control=enter-frame';

const html = (res: http.ServerResponse, body: string) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>${body}</body></html>`);
};

/** Removes every attribute the host's selector marks set, as soon as it is set. */
const STRIP_MARKS = `<script>new MutationObserver((changes) => {
  for (const change of changes) if (change.attributeName && change.attributeName.startsWith('data-bf-')) change.target.removeAttribute(change.attributeName);
}).observe(document, { attributes: true, subtree: true });</script>`;

describe('extracting from a frame of another site', () => {
  let stack: TestStack;
  let shop: Awaited<ReturnType<typeof startTestSite>>;
  let site: Awaited<ReturnType<typeof startTestSite>>;

  beforeAll(async () => {
    stack = await startTestStack({ BROWSER_ALLOWED_PRIVATE_DESTINATIONS: `${PAGE_HOST},${OTHER_SITE_HOST}` }, { browserHost: true });
    shop = await startTestSite(
      {
        '/items': (_req, res) =>
          html(
            res,
            `<h2>Offers</h2><ul>
              <li class="item"><span class="name">Kettle</span> <span class="price">24.50</span></li>
              <li class="item"><span class="name">Teapot</span> <span class="price">31</span></li>
            </ul>`,
          ),
        '/stripping': (_req, res) => html(res, `${STRIP_MARKS}<h2>Offers</h2><ul><li class="item">Kettle</li></ul>`),
      },
      OTHER_SITE_HOST,
    );
    site = await startTestSite({
      '/embed': (_req, res) => html(res, `<h1>Partner offers</h1><iframe src="${shop.url}/items"></iframe>`),
      '/stripping': (_req, res) => html(res, `<h1>Partner offers</h1><iframe src="${shop.url}/stripping"></iframe>`),
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await shop?.close();
    await site?.close();
  });

  const run = async (path: string, nodes: Record<string, unknown>, outputs: Record<string, unknown>) => {
    const { token, slug, sessionId } = await userWithSession(stack, 'frames');
    const pipelineId = await createPipeline(
      stack,
      slug,
      { token },
      {
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}${path}` } },
          ...nodes,
        },
        outputs,
      },
    );
    const started = await stack.http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session: sessionId }, { token });
    expect(started.status, started.text).toBe(200);
    return settledRun(stack, `/${slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token }, 90_000);
  };

  it("reads a list and a text out of another site's frame, as out of the page itself", async () => {
    const settled = await run(
      '/embed',
      {
        heading: { type: 'extract.text', timeoutMs: 10_000, inputs: { page: { $ref: 'open.page' }, selector: `${IN_FRAME} >> h2` } },
        offers: {
          type: 'extract.list',
          timeoutMs: 10_000,
          inputs: {
            page: { $ref: 'heading.page' },
            selector: `${IN_FRAME} >> .item`,
            fields: { name: '.name', price: { selector: '.price', type: 'number' } },
          },
        },
      },
      { heading: { $ref: 'heading.text' }, offers: { $ref: 'offers.records' } },
    );
    expect(settled.status.pipeline, JSON.stringify(settled.error)).toBe('succeeded');
    expect(settled.result).toEqual({
      heading: 'Offers',
      offers: [
        { name: 'Kettle', price: 24.5 },
        { name: 'Teapot', price: 31 },
      ],
    });
  }, 120_000);

  it('fails the node, naming the selector, when the page hides the matches from the read', async () => {
    const settled = await run(
      '/stripping',
      {
        wait: { type: 'page.wait', timeoutMs: 10_000, inputs: { page: { $ref: 'open.page' }, selector: `${IN_FRAME} >> .item` } },
        offers: {
          type: 'extract.list',
          timeoutMs: 10_000,
          inputs: { page: { $ref: 'wait.page' }, selector: `${IN_FRAME} >> .item`, fields: { name: '.' } },
        },
      },
      { offers: { $ref: 'offers.records' } },
    );
    expect(settled.status.pipeline).toBe('failed');
    expect(settled.error).toMatchObject({ node: 'offers', code: 'browser_error' });
    expect(settled.error.message).toContain(`reading \`${IN_FRAME} >> .item\``);
    expect(settled.error.message).toContain('1 element matched but could not be read');
  }, 120_000);
});
