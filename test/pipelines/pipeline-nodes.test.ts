import type http from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeNode, type NodeContext, NodeError, type PageHandle } from '../../server/browsers/host/nodes/executeNode.ts';
import type { NewLogEntry } from '../../server/logs/logWriter.ts';
import { compilePipeline } from '../../server/pipelines/compiler.ts';
import { type RunNode, runPlan } from '../../server/pipelines/engine/interpreter.ts';
import type { Plan } from '../../server/pipelines/engine/plan.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { launchChromium } from '../support/chromium.ts';
import { startTestSite } from '../support/pages.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * The browser nodes against real Chromium, on pages this file serves, and whole plans through
 * runPlan with a runNode that calls executeNode directly (as the host activity does, without
 * Temporal).
 */

const PASSWORD = 'correct-horse-77';
const SESSION = 'sess-4f9a2c';

const orders = Array.from({ length: 6 }, (_, i) => ({
  order: `A-${1001 + i}`,
  date: `2026-01-0${i + 1}`,
  qty: i + 1,
  total: (i + 1) * 1000 + 0.5,
  paid: i % 2 === 1,
}));

const html = (res: http.ServerResponse, body: string, status = 200) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body>${body}</body></html>`);
};

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = '';
    req.on('data', (chunk) => {
      data += chunk;
    });
    req.on('end', () => resolve(data));
  });

const loggedIn = (req: http.IncomingMessage) => (req.headers.cookie ?? '').includes(`session=${SESSION}`);

let site: Awaited<ReturnType<typeof startTestSite>>;
let browser: Browser;

beforeAll(async () => {
  site = await startTestSite({
    '/login': async (req, res) => {
      if (req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req));
        if (form.get('user') === 'ada' && form.get('pass') === PASSWORD) {
          res.writeHead(303, { location: '/orders?page=1', 'set-cookie': `session=${SESSION}; Path=/; HttpOnly` });
          return res.end();
        }
        return html(res, '<h1>Wrong user or password</h1>', 401);
      }
      html(
        res,
        `<form method="post" action="/login"><input id="user" name="user"><input id="pass" name="pass" type="password"><button type="submit">Sign in</button></form>`,
      );
    },
    '/orders': (req, res) => {
      if (!loggedIn(req)) {
        res.writeHead(303, { location: '/login' });
        return res.end();
      }
      const page = Number(new URL(req.url ?? '', site.url).searchParams.get('page') ?? 1);
      const rows = orders
        .slice((page - 1) * 2, page * 2)
        .map(
          (o) =>
            `<tr><td>${o.order}</td><td>${o.date}</td><td>${o.qty}</td><td>${o.total.toLocaleString('en-US', { minimumFractionDigits: 2 })}</td><td>${o.paid ? 'yes' : 'no'}</td></tr>`,
        )
        .join('');
      html(
        res,
        `<h1>Orders, page ${page}</h1>
        <table id="orders"><thead><tr><th>Order</th><th>Date</th><th>Qty</th><th>Total</th><th>Paid</th></tr></thead><tbody>${rows}</tbody></table>
        <nav class="pagination"><a href="/orders?page=1">1</a> <a href="/orders?page=2">2</a> <a href="/orders?page=3">3</a></nav>`,
      );
    },
    '/products': (_req, res) =>
      html(
        res,
        `${['Lamp', 'Desk', 'Chair']
          .map(
            (name, i) =>
              `<div class="product" data-sku="SKU-${i + 1}"><h2>${name}</h2><span class="price">$${((i + 1) * 1000 + 0.5).toLocaleString('en-US', { minimumFractionDigits: 2 })}</span><a href="/p/${i + 1}">more</a><em class="sale">${i === 1 ? 'sale' : ''}</em></div>`,
          )
          .join('')}<select id="country"><option value="no">Norway</option><option value="se">Sweden</option></select>`,
      ),
    '/search': (req, res) => {
      const q = new URL(req.url ?? '', site.url).searchParams.get('q');
      html(res, q ? `<h1>Results for ${q}</h1>` : `<form action="/search"><input name="q" id="q"></form>`);
    },
    '/banner': (req, res) => {
      const show = new URL(req.url ?? '', site.url).searchParams.get('show') === '1';
      html(
        res,
        `${show ? `<div id="cookie-banner">We use cookies <button onclick="document.getElementById('cookie-banner').remove(); document.getElementById('status').textContent = 'accepted'">OK</button></div>` : ''}
        <p id="status">${show ? 'pending' : 'no banner'}</p>`,
      );
    },
    '/feed': (_req, res) =>
      html(
        res,
        `<div id="items"></div><script>
          let n = 0;
          const more = () => { for (let i = 0; i < 10 && n < 50; i++) { const d = document.createElement('div'); d.className = 'item'; d.style.height = '200px'; d.textContent = 'item ' + (++n); items.append(d); } };
          more();
          addEventListener('scroll', () => { if (innerHeight + scrollY >= document.body.scrollHeight - 50) more(); });
        </script>`,
      ),
    '/noise': (_req, res) =>
      html(
        res,
        `<canvas id="noise" width="800" height="600"></canvas><script>
          const c = document.getElementById('noise').getContext('2d');
          const data = c.createImageData(800, 600);
          for (let i = 0; i < data.data.length; i++) data.data[i] = Math.random() * 256;
          c.putImageData(data, 0, 0);
        </script>`,
      ),
    '/slow': (_req, res) =>
      html(res, `<script>setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="late">here at last</p>'), 300)</script>`),
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** What a browser host does for one run: a context, its pages by handle, and the log. */
async function host() {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 800, height: 600 } });
  const pages = new Map<string, Page>();
  const logs: NewLogEntry[] = [];
  const ctx = (timeoutMs?: number): NodeContext => ({
    openPage: async ({ newTab }) => (newTab ? context.newPage() : (context.pages()[0] ?? context.newPage())),
    newPageHandle: (page) => {
      const pageId = `page-${pages.size + 1}`;
      pages.set(pageId, page);
      return { pageId };
    },
    getPage: async (handle) => {
      const page = pages.get(handle.pageId);
      if (!page) throw new Error(`unknown page ${handle.pageId}`);
      return page;
    },
    log: (entry) => logs.push(entry),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
  const runNode: RunNode = (call) => executeNode(call.type, call.inputs, ctx(call.timeoutMs));
  /** A page handle already on `path` of the site. */
  const open = async (path: string) => {
    const { page } = (await executeNode('browser.page', {}, ctx())) as { page: PageHandle };
    await executeNode('page.goto', { page, url: `${site.url}${path}` }, ctx());
    return page;
  };
  const run = (type: string, inputs: Record<string, unknown>, timeoutMs?: number) => executeNode(type, inputs, ctx(timeoutMs));
  return { context, pages, logs, ctx, runNode, open, run, close: () => context.close() };
}

function plan(source: unknown): Plan {
  const { errors, plan: compiled } = compilePipeline(source);
  expect(errors).toEqual([]);
  return compiled as Plan;
}

describe('a whole pipeline on real pages', () => {
  it('logs in through a form, pages through a list and extracts the table as typed records', async () => {
    const h = await host();
    try {
      const compiled = plan({
        parameters: { site: { refType: 'string' }, user: { refType: 'string' }, password: { refType: 'string', secret: true } },
        nodes: {
          tab: { type: 'browser.page' },
          loginUrl: { type: 'text.template', inputs: { template: '{{site}}/login', site: { $param: 'site' } } },
          login: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: { $ref: 'loginUrl.text' } } },
          name: { type: 'page.fill', inputs: { page: { $ref: 'login.page' }, selector: '#user', value: { $param: 'user' } } },
          pass: { type: 'page.fill', inputs: { page: { $ref: 'name.page' }, selector: '#pass', value: { $param: 'password' } } },
          submit: { type: 'page.click', inputs: { page: { $ref: 'pass.page' }, selector: 'button[type=submit]', waitFor: 'load' } },
          pages: {
            type: 'extract.attribute',
            inputs: { page: { $ref: 'submit.page' }, selector: '.pagination a', attribute: 'href', resolveUrl: true },
          },
          each: {
            type: 'flow.forEach',
            inputs: { items: { $ref: 'pages.values' }, page: { $ref: 'pages.page' } },
            body: {
              nodes: {
                go: { type: 'page.goto', inputs: { page: { $ref: 'each.page' }, url: { $ref: 'each.item' } } },
                rows: {
                  type: 'extract.table',
                  inputs: { page: { $ref: 'go.page' }, selector: 'table#orders', types: { Paid: 'boolean' } },
                },
              },
              outputs: { records: { $ref: 'rows.records' }, heading: { $ref: 'go.url' } },
            },
          },
          all: { type: 'list.flatten', inputs: { list: { $ref: 'each.records' } } },
          session: { type: 'page.cookies', inputs: { page: { $ref: 'each.page' }, name: 'session' } },
        },
        outputs: { orders: { $ref: 'all.list' }, count: { $ref: 'all.count' }, cookies: { $ref: 'session.cookies' } },
      });
      const { result, outputs } = await runPlan(compiled, {
        args: { site: site.url, user: 'ada', password: PASSWORD },
        runNode: h.runNode,
      });
      expect(result.count).toBe(6);
      expect(result.orders).toEqual(orders.map((o) => ({ Order: o.order, Date: o.date, Qty: o.qty, Total: o.total, Paid: o.paid })));
      expect(result.cookies).toEqual([expect.objectContaining({ name: 'session', value: SESSION, httpOnly: true })]);
      expect(outputs.submit).toEqual({ page: { pageId: 'page-1' } });
      expect(outputs['each.2.rows']).toMatchObject({ count: 2, headers: ['Order', 'Date', 'Qty', 'Total', 'Paid'] });
      expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['each.0.go', 'each.0.rows', 'each.1.go', 'each.2.rows', 'each', 'all']));
      // Neither the password nor the cookie's value is ever logged.
      const logged = JSON.stringify(h.logs);
      expect(logged).toContain('filled #pass');
      expect(logged).toContain('session');
      expect(logged).not.toContain(PASSWORD);
      expect(logged).not.toContain(SESSION);
    } finally {
      await h.close();
    }
  });

  it('a wrong password lands on the error page: a condition tells, and a loop types into a search form', async () => {
    const h = await host();
    try {
      const source = (password: string) => ({
        nodes: {
          tab: { type: 'browser.page' },
          login: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: `${site.url}/login` } },
          name: { type: 'page.fill', inputs: { page: { $ref: 'login.page' }, selector: '#user', value: 'ada' } },
          pass: { type: 'page.fill', inputs: { page: { $ref: 'name.page' }, selector: '#pass', value: password } },
          submit: { type: 'page.press', inputs: { page: { $ref: 'pass.page' }, selector: '#pass', key: 'Enter', waitFor: 'load' } },
          heading: { type: 'extract.text', inputs: { page: { $ref: 'submit.page' }, selector: 'h1' } },
          ok: {
            type: 'flow.condition',
            inputs: { value: { $ref: 'heading.text' }, operator: 'matches', operand: '^Orders', page: { $ref: 'heading.page' } },
            // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
            then: {
              nodes: {
                search: {
                  type: 'flow.forEach',
                  inputs: { items: ['lamps', 'desks'], page: { $ref: 'ok.page' } },
                  body: {
                    nodes: {
                      form: { type: 'page.goto', inputs: { page: { $ref: 'search.page' }, url: `${site.url}/search` } },
                      query: { type: 'page.fill', inputs: { page: { $ref: 'form.page' }, selector: '#q', value: { $ref: 'search.item' } } },
                      enter: {
                        type: 'page.press',
                        inputs: { page: { $ref: 'query.page' }, selector: '#q', key: 'Enter', waitFor: 'load', waitForSelector: 'h1' },
                      },
                      title: { type: 'extract.text', inputs: { page: { $ref: 'enter.page' }, selector: 'h1' } },
                    },
                    outputs: { title: { $ref: 'title.text' } },
                  },
                },
              },
              outputs: { titles: { $ref: 'search.title' } },
            },
            else: {
              nodes: { shot: { type: 'page.screenshot', inputs: { page: { $ref: 'ok.page' } } } },
              outputs: { evidence: { $ref: 'shot.image' } },
            },
          },
        },
        outputs: { branch: { $ref: 'ok.branch' }, titles: { $ref: 'ok.titles' }, evidence: { $ref: 'ok.evidence' } },
      });
      const good = await runPlan(plan(source(PASSWORD)), { args: {}, runNode: h.runNode });
      expect(good.result).toEqual({ branch: 'then', titles: ['Results for lamps', 'Results for desks'], evidence: null });
      expect(Object.keys(good.outputs)).toContain('ok.then.search.1.enter');

      await h.context.clearCookies();
      const bad = await runPlan(plan(source('wrong')), { args: {}, runNode: h.runNode });
      expect(bad.result.branch).toBe('else');
      expect(bad.result.titles).toBeNull();
      expect(
        Buffer.from(bad.result.evidence as string, 'base64')
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    } finally {
      await h.close();
    }
  });

  it('clicks a cookie banner away only when there is one', async () => {
    const h = await host();
    try {
      const source = (show: 0 | 1) => ({
        nodes: {
          tab: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: `${site.url}/banner?show=${show}` } },
          banner: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: '#cookie-banner', optional: true } },
          consent: {
            type: 'flow.condition',
            inputs: { value: { $ref: 'banner.count' }, operator: 'greaterThan', operand: 0, page: { $ref: 'banner.page' } },
            // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
            then: {
              nodes: { accept: { type: 'page.click', inputs: { page: { $ref: 'consent.page' }, selector: '#cookie-banner button' } } },
            },
          },
          status: { type: 'extract.text', inputs: { page: { $ref: 'consent.page' }, selector: '#status' } },
        },
        outputs: { status: { $ref: 'status.text' }, matched: { $ref: 'consent.matched' } },
      });
      expect((await runPlan(plan(source(1)), { args: {}, runNode: h.runNode })).result).toEqual({ status: 'accepted', matched: true });
      expect((await runPlan(plan(source(0)), { args: {}, runNode: h.runNode })).result).toEqual({ status: 'no banner', matched: false });
    } finally {
      await h.close();
    }
  });

  it('a failing selector fails the node by name with its own short message', async () => {
    const h = await host();
    try {
      const compiled = plan({
        nodes: {
          tab: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'tab.page' }, url: `${site.url}/products` } },
          buy: { type: 'page.click', inputs: { page: { $ref: 'open.page' }, selector: '#buy-now' }, timeoutMs: 700 },
        },
      });
      let failedAt: string | undefined;
      const runNode: RunNode = async (call) => {
        try {
          return await h.runNode(call);
        } catch (error) {
          failedAt = call.node;
          throw error;
        }
      };
      const error = await runPlan(compiled, { args: {}, runNode }).catch((caught) => caught);
      expect(failedAt).toBe('buy');
      expect(error).toBeInstanceOf(NodeError);
      expect(error).toMatchObject({ code: 'not_found', retryable: true });
      expect(error.message).toBe('clicking `#buy-now`: timed out');
      // The wait is what was left of the node's 500 ms when it began: a loaded machine takes a few first.
      await expect(h.run('extract.text', { page: { pageId: 'page-1' }, selector: '.missing' }, 500)).rejects.toMatchObject({
        code: 'not_found',
        message: expect.stringMatching(/^no element matches `\.missing` \(waited (4\d\d|500) ms\)$/),
      });
    } finally {
      await h.close();
    }
  });
});

describe('browser nodes one by one', () => {
  it('extract.list makes typed records from repeated elements', async () => {
    const h = await host();
    try {
      const page = await h.open('/products');
      const out = await h.run('extract.list', {
        page,
        selector: '.product',
        fields: {
          name: 'h2',
          price: { selector: '.price', type: 'number' },
          url: { selector: 'a', attribute: 'href' },
          sku: { selector: '.', attribute: 'data-sku' },
          sale: '.sale',
          missing: '.nothing',
          markup: { selector: 'h2', type: 'html' },
        },
      });
      expect(out.count).toBe(3);
      expect(out.records).toEqual([
        { name: 'Lamp', price: 1000.5, url: `${site.url}/p/1`, sku: 'SKU-1', sale: '', missing: null, markup: 'Lamp' },
        { name: 'Desk', price: 2000.5, url: `${site.url}/p/2`, sku: 'SKU-2', sale: 'sale', missing: null, markup: 'Desk' },
        { name: 'Chair', price: 3000.5, url: `${site.url}/p/3`, sku: 'SKU-3', sale: '', missing: null, markup: 'Chair' },
      ]);
      expect((await h.run('extract.list', { page, selector: '.product', fields: { name: 'h2' }, limit: 1 })).records).toEqual([
        { name: 'Lamp' },
      ]);
      expect(await h.run('extract.list', { page, selector: '.none', fields: { name: 'h2' }, optional: true })).toEqual({
        page,
        records: [],
        count: 0,
      });
    } finally {
      await h.close();
    }
  });

  it('page.evaluate runs a script with an argument and answers JSON; a throwing script fails the node', async () => {
    const h = await host();
    try {
      const page = await h.open('/products');
      expect(
        await h.run('page.evaluate', {
          page,
          script:
            'const names = [...document.querySelectorAll(arg.selector)].map((e) => e.textContent); await new Promise((r) => setTimeout(r, 10)); return { names, title: document.title, nothing: undefined }',
          arg: { selector: '.product h2' },
        }),
      ).toEqual({ page, result: { names: ['Lamp', 'Desk', 'Chair'], title: 'Shop' } });
      expect(await h.run('page.evaluate', { page, script: 'document.title' })).toEqual({ page, result: null });
      await expect(h.run('page.evaluate', { page, script: 'throw new Error("no stock")' })).rejects.toMatchObject({
        code: 'script_error',
        retryable: false,
        message: expect.stringContaining('no stock'),
      });
      await expect(h.run('page.evaluate', { page, script: 'return new Promise(() => {})' }, 300)).rejects.toMatchObject({
        code: 'timeout',
      });
    } finally {
      await h.close();
    }
  });

  it('page.screenshot answers a PNG of the viewport, the full page or an element', async () => {
    const h = await host();
    try {
      const page = await h.open('/feed');
      const viewport = await h.run('page.screenshot', { page });
      expect(viewport).toMatchObject({ page, width: 800, height: 600 });
      const png = Buffer.from(viewport.image as string, 'base64');
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect((await h.run('page.screenshot', { page, fullPage: true })).height).toBeGreaterThan(1500);
      const element = await h.run('page.screenshot', { page, selector: '.item' });
      expect(element).toMatchObject({ height: 200 });
    } finally {
      await h.close();
    }
  });

  it('page.screenshot refuses an image too large for a node’s output, saying how to make it smaller', async () => {
    const h = await host();
    try {
      // Random pixels do not compress: 800×600 of them is several MB as PNG.
      const page = await h.open('/noise');
      await expect(h.run('page.screenshot', { page })).rejects.toMatchObject({
        code: 'output_too_large',
        retryable: false,
        message: expect.stringMatching(/800×600 screenshot is .* MB .*selector.*fullPage/),
      });
    } finally {
      await h.close();
    }
  });

  it('scroll loads more of an endless list; wait waits for late elements', async () => {
    const h = await host();
    try {
      const page = await h.open('/feed');
      expect((await h.run('extract.text', { page, selector: '.item' })).count).toBe(10);
      const scrolled = await h.run('page.scroll', { page, times: 3, delayMs: 150 });
      expect(scrolled.scrollY as number).toBeGreaterThan(0);
      expect((await h.run('extract.text', { page, selector: '.item' })).count).toBeGreaterThanOrEqual(30);
      expect((await h.run('page.scroll', { page, to: 'top' })).scrollY).toBe(0);
      await h.run('page.scroll', { page, selector: '.item:nth-child(25)' });

      await h.run('page.goto', { page, url: `${site.url}/slow` });
      await expect(h.run('page.wait', { page, selector: '#late', state: 'visible' })).resolves.toEqual({ page });
      expect((await h.run('extract.text', { page, selector: '#late' })).text).toBe('here at last');
      await expect(h.run('page.wait', { page, ms: 50, loadState: 'load', url: '**/slow' })).resolves.toEqual({ page });
      await expect(h.run('page.wait', { page })).rejects.toMatchObject({ name: 'NodeInputError' });
    } finally {
      await h.close();
    }
  });

  it('select, attribute, html, text and cookies read and change the page', async () => {
    const h = await host();
    try {
      const page = await h.open('/products');
      expect(await h.run('page.select', { page, selector: '#country', value: 'Sweden' })).toEqual({ page, selected: ['se'] });
      expect((await h.run('page.evaluate', { page, script: 'return document.querySelector("#country").value' })).result).toBe('se');
      expect(await h.run('extract.attribute', { page, selector: '.product a', attribute: 'href' })).toEqual({
        page,
        value: '/p/1',
        values: ['/p/1', '/p/2', '/p/3'],
        count: 3,
      });
      expect((await h.run('extract.html', { page, selector: '.product h2' })).html).toBe('<h2>Lamp</h2>');
      expect((await h.run('extract.html', { page, selector: '.product', outer: false })).html).toContain(
        '<h2>Lamp</h2><span class="price">',
      );
      expect((await h.run('extract.html', { page })).html).toMatch(/^<!DOCTYPE html>|^<html/i);
      expect(await h.run('extract.text', { page, selector: '.product h2' })).toEqual({
        page,
        text: 'Lamp',
        texts: ['Lamp', 'Desk', 'Chair'],
        count: 3,
      });

      await h.context.addCookies([{ name: 'theme', value: 'dark', url: site.url }]);
      expect(await h.run('page.cookies', { page })).toMatchObject({
        cookies: [{ name: 'theme', value: 'dark', path: '/' }],
        value: 'dark',
      });
      expect((await h.run('page.cookies', { page, name: 'absent' })).cookies).toEqual([]);
    } finally {
      await h.close();
    }
  });

  it('pages: a new tab is another page; goto refuses non-web URLs; an unknown handle is no page', async () => {
    const h = await host();
    try {
      const first = await h.open('/products');
      const second = (await h.run('browser.page', { newTab: true })).page as PageHandle;
      expect(second).not.toEqual(first);
      expect((await h.run('page.goto', { page: second, url: `${site.url}/search?q=x` })).status).toBe(200);
      expect(h.pages.get(first.pageId)?.url()).toBe(`${site.url}/products`);
      expect((await h.run('browser.page', {})).page).toEqual({ pageId: 'page-3' });
      expect(h.pages.get('page-3')).toBe(h.pages.get(first.pageId));

      await expect(h.run('page.goto', { page: first, url: 'file:///etc/passwd' })).rejects.toMatchObject({
        name: 'NodeInputError',
        retryable: false,
      });
      await expect(h.run('page.click', { page: { pageId: 'nope' }, selector: 'a' })).rejects.toMatchObject({ code: 'no_page' });
      await expect(h.run('page.click', { page: 'tab', selector: 'a' })).rejects.toMatchObject({ name: 'NodeInputError' });
      await expect(h.run('flow.forEach', { items: [] })).rejects.toMatchObject({ code: 'unknown_type' });
      await expect(h.run('text.template', { template: 'Hi {{who}}', who: 'Ada' })).resolves.toEqual({ text: 'Hi Ada' });
    } finally {
      await h.close();
    }
  });
});

describe('GET /{project}/api/pipelines/nodes', () => {
  let stack: TestStack;
  let token: string;
  let slug: string;
  let publicSlug: string;

  beforeAll(async () => {
    stack = await startTestStack();
    ({ token } = await registerUser(stack));
    ({ slug } = await createProject(stack, token));
    ({ slug: publicSlug } = await createProject(stack, token, { public: true }));
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('answers the catalog by default and the JSON Schema of a source to Accept: application/schema+json', async () => {
    const catalog = await stack.http.get(`/${slug}/api/pipelines/nodes`, { token });
    expect(catalog.status, catalog.text).toBe(200);
    expect(catalog.body.nodes.map((node: { type: string }) => node.type)).toEqual(
      expect.arrayContaining(['page.goto', 'extract.table', 'flow.forEach']),
    );
    const table = catalog.body.nodes.find((node: { type: string }) => node.type === 'extract.table');
    expect(table.inputs.selector).toMatchObject({ refType: 'string', required: true });
    expect(table.outputs.records).toMatchObject({ refType: 'list' });
    expect(table.example.nodes).toBeTruthy();
    expect(catalog.body.refTypes.map((refType: { name: string }) => refType.name)).toContain('page');

    const schema = await stack.http.request('GET', `/${slug}/api/pipelines/nodes`, {
      headers: { accept: 'application/schema+json' },
      as: { token },
    });
    expect(schema.status, schema.text).toBe(200);
    expect(schema.body).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'Pipeline source',
      required: ['nodes'],
    });
    expect(schema.body.$defs.Nodes).toBeTruthy();
    const byQuery = await stack.http.get(`/${slug}/api/pipelines/nodes?format=schema`, { token });
    expect(byQuery.body).toEqual(schema.body);
    const plainJson = await stack.http.request('GET', `/${slug}/api/pipelines/nodes`, {
      headers: { accept: 'application/json' },
      as: { token },
    });
    expect(plainJson.body.nodes).toBeTruthy();
    // Quality values decide between the two.
    for (const [accept, answers] of [
      ['application/schema+json;q=0, application/json', 'catalog'],
      ['application/json, application/schema+json;q=0.2', 'catalog'],
      ['application/json;q=0.5, application/schema+json', 'schema'],
      ['*/*;q=0.1, application/schema+json;q=0.9', 'schema'],
    ] as const) {
      const answer = await stack.http.request('GET', `/${slug}/api/pipelines/nodes`, { headers: { accept }, as: { token } });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.nodes ? 'catalog' : 'schema', accept).toBe(answers);
    }
  });

  it('is for whoever can read the project', async () => {
    expect((await stack.http.get(`/${slug}/api/pipelines/nodes`)).status).toBe(404);
    const stranger = await registerUser(stack);
    expect((await stack.http.get(`/${slug}/api/pipelines/nodes`, { token: stranger.token })).status).toBe(404);
    expect((await stack.http.get(`/${publicSlug}/api/pipelines/nodes`)).status).toBe(200);
    expect((await stack.http.get(`/${slug}/api/pipelines/nodes?format=yaml`, { token })).status).toBe(400);
  });

  it('is in the OpenAPI document', async () => {
    const document = await stack.http.get('/api/openapi.json');
    expect(document.body.paths['/{project}/api/pipelines/nodes']?.get).toBeTruthy();
  });
});
