import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionResource } from '../../db/entities/index.ts';
import { freePort } from '../../server/infra/ports.ts';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestSite } from '../support/pages.ts';
import { createPipeline as createPipelineIn, historyText, longWaitSource, settledRun, startRun } from '../support/pipelines.ts';
import { stopAndWait } from '../support/resources.ts';
import { readSse } from '../support/sse.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const PASSWORD = 'hunter2-very-secret';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let sessionId: string;
let site: Awaited<ReturnType<typeof startTestSite>>;
/** What the test site's `/received` got in the field `pass`, in order. */
const received: (string | null)[] = [];
const COOKIE_VALUE = 'cookie-value-5f1c9e';

const html = (body: string) => `<!doctype html><html><head><title>shop</title></head><body>${body}</body></html>`;
const orders: Record<string, [string, number, string][]> = {
  '1': [
    ['A-1', 19.5, 'shipped'],
    ['A-2', 5, 'open'],
  ],
  '2': [['A-3', 1200, 'open']],
};

beforeAll(async () => {
  stack = await startTestStack({}, { browserHost: true });
  site = await startTestSite({
    '/login': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        html(
          `<form method="post" action="/session"><input id="user" name="user"><input id="pass" name="pass" type="password"><button type="submit">Sign in</button></form>`,
        ),
      );
    },
    '/session': (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (form.get('user') === 'ada' && form.get('pass') === PASSWORD) {
          res.writeHead(303, { location: '/orders?page=1', 'set-cookie': 'shop=ok; Path=/' });
        } else {
          res.writeHead(303, { location: '/login?failed=1' });
        }
        res.end();
      });
    },
    '/orders': (req, res) => {
      const page = new URL(req.url ?? '', 'http://x').searchParams.get('page') ?? '1';
      if (!String(req.headers.cookie).includes('shop=ok')) {
        res.writeHead(303, { location: '/login' });
        return res.end();
      }
      const rows = (orders[page] ?? []).map(([id, total, state]) => `<tr><td>${id}</td><td>${total}</td><td>${state}</td></tr>`).join('');
      const next = page === '1' ? '<a id="next" href="/orders?page=2">next</a>' : '';
      res.setHeader('content-type', 'text/html');
      res.end(
        html(`<table id="orders"><thead><tr><th>Order</th><th>Total</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>${next}`),
      );
    },
    '/form': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html(`<form method="post" action="/received"><input id="pass" name="pass"><button type="submit">Send</button></form>`));
    },
    '/received': (req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(new URLSearchParams(body).get('pass'));
        res.setHeader('content-type', 'text/html');
        res.end(html('<h1>thanks</h1>'));
      });
    },
    '/cookie-jar': (_req, res) => {
      res.setHeader('set-cookie', `sid=${COOKIE_VALUE}; Path=/`);
      res.setHeader('content-type', 'text/html');
      res.end(html('<h1>cookies set</h1>'));
    },
    '/tab': (req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html(`<h1>tab ${new URL(req.url ?? '', 'http://x').searchParams.get('n')}</h1>`));
    },
    '/late': (_req, res) => {
      // The heading appears 4 s after the page loads.
      res.setHeader('content-type', 'text/html');
      res.end(
        html(
          `<script>setTimeout(() => { const h = document.createElement('h1'); h.id = 'late'; h.textContent = 'late'; document.body.append(h); }, 4000)</script>`,
        ),
      );
    },
    '/slow': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(html('<h1>slow</h1><ul><li>one</li><li>two</li><li>three</li></ul>'));
    },
  });
  owner = await registerUser(stack);
  project = await createProject(stack, owner.token);
  const created = await stack.http.put(`/${project.slug}/api/sessions`, { name: 'runner' }, { token: owner.token });
  sessionId = created.body.id;
});
afterAll(async () => {
  await site?.close();
  await stack?.close();
});

const createPipeline = (source: unknown) => createPipelineIn(stack, project.slug, { token: owner.token }, source);
/** The host's project browsers, which hold the calls' contexts. */
const callContexts = () => stack.browserHost?.projectBrowsers as NonNullable<TestStack['browserHost']>['projectBrowsers'];

async function runToEnd(
  pipelineId: string,
  args: Record<string, unknown> = {},
  where: { projectSlug: string; session: string } = { projectSlug: project.slug, session: sessionId },
) {
  const started = await stack.http.post(
    `/${where.projectSlug}/api/pipelines/${pipelineId}/start`,
    { session: where.session, args },
    { token: owner.token },
  );
  expect(started.status, started.text).toBe(200);
  const runUrl = `/${where.projectSlug}/api/pipelines/${pipelineId}/${started.body.id}`;
  return { runId: started.body.id as string, runUrl, run: await settledRun(stack, runUrl, { token: owner.token }) };
}

/** The areas of a browser's own log lines: console output, navigations, page errors, failed requests. */
const BROWSER_AREAS = ['console', 'navigation', 'network', 'page'];

/**
 * Everything a run shows or keeps: its view, its logs as JSON and SSE, its workflow history, and
 * the log of the browser it drove (console, navigations, failed requests). These runs are calls
 * (docs/browsers.md, Contexts for calls): they hold no browser resource, and their context's
 * browser lines are in the run's own log.
 */
async function everythingOf(runId: string, runUrl: string) {
  // Closed, so the run has let go of its context and that context's log is written.
  await stack.temporal.workflow
    .getHandle(`run-${runId}`)
    .result()
    .catch(() => undefined);
  const run = await stack.http.get(runUrl, { token: owner.token });
  expect(run.body.resources, run.text).toEqual([]);
  const logs = await stack.http.get(`${runUrl}/logs?limit=200`, { token: owner.token });
  expect(logs.status).toBe(200);
  const browserLogs = JSON.stringify((logs.body as { area: string }[]).filter((entry) => BROWSER_AREAS.includes(entry.area)));
  const sse = await readSse(`${stack.url}${runUrl}/logs`, {
    headers: { authorization: `Bearer ${owner.token}` },
    until: (events) => events.some((e) => e.event === 'end'),
  });
  expect(sse.at(-1)?.event).toBe('end');
  const history = await historyText(stack, runId);
  return {
    logs: logs.body,
    browserLogs,
    historyText: history,
    texts: [run.text, logs.text, JSON.stringify(sse), history],
  };
}

/** The secret is in none of the texts: not as given, not escaped in JSON, not encoded in a URL. */
function expectNowhere(secret: string, texts: string[]) {
  const inQuery = new URL(`http://host/?${secret}`).search.slice(1);
  for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), inQuery]) {
    for (const text of texts) expect(text).not.toContain(form);
  }
}

const loginSource = () => ({
  parameters: { user: { refType: 'string' }, password: { refType: 'string', secret: true } },
  nodes: {
    page: { type: 'browser.page' },
    open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/login` } },
    name: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#user', value: { $param: 'user' } } },
    pass: { type: 'page.fill', inputs: { page: { $ref: 'name.page' }, selector: '#pass', value: { $param: 'password' } } },
    submit: { type: 'page.click', inputs: { page: { $ref: 'pass.page' }, selector: 'button[type=submit]', waitFor: 'load' } },
    first: { type: 'extract.table', inputs: { page: { $ref: 'submit.page' }, selector: 'table#orders' } },
    next: { type: 'page.click', inputs: { page: { $ref: 'first.page' }, selector: 'a#next', waitFor: 'load' } },
    second: { type: 'extract.table', inputs: { page: { $ref: 'next.page' }, selector: 'table#orders' } },
  },
  outputs: { page1: { $ref: 'first.records' }, page2: { $ref: 'second.records' } },
});

describe('a pipeline run', () => {
  it('logs in through a form, pages through a list and extracts the table as typed records', async () => {
    const pipelineId = await createPipeline(loginSource());
    const { run, runId, runUrl } = await runToEnd(pipelineId, { user: 'ada', password: PASSWORD });
    expect(run.status, JSON.stringify(run.error)).toEqual({ pipeline: 'succeeded', 'pipeline-evaluation': 'completed' });
    expect(run.result).toEqual({
      page1: [
        { Order: 'A-1', Total: 19.5, State: 'shipped' },
        { Order: 'A-2', Total: 5, State: 'open' },
      ],
      page2: [{ Order: 'A-3', Total: 1200, State: 'open' }],
    });
    expect(run.nodeOutputs.first.count).toBe(2);
    expect(run.args).toEqual({ user: 'ada', password: '[secret]' });

    // The secret never appears: not in the run, its logs (JSON or SSE), nor workflow history.
    const { logs, historyText, texts } = await everythingOf(runId, runUrl);
    expect(logs.map((e: { context: string }) => e.context)).toEqual(expect.arrayContaining(['run', 'submit', 'second']));
    expect(historyText).toContain('secret:password');
    expectNowhere(PASSWORD, texts);
  });

  it('gives runs at once on one running browser a tab each, so neither drives the other’s page', async () => {
    const browser = await stack.http.post(`/${project.slug}/api/sessions/${sessionId}/start`, undefined, { token: owner.token });
    expect(browser.status, browser.text).toBe(200);
    const pipelineId = await createPipeline({
      parameters: { n: { refType: 'string' } },
      nodes: {
        url: { type: 'text.template', inputs: { template: `${site.url}/tab?n={{n}}`, n: { $param: 'n' } } },
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $ref: 'url.text' } } },
        // Long enough for the other run to navigate in between, were the tab shared.
        pause: { type: 'page.wait', inputs: { page: { $ref: 'open.page' }, ms: 1500 } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'pause.page' }, selector: 'h1' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    const [first, second] = await Promise.all(['first', 'second'].map((n) => runToEnd(pipelineId, { n })));
    expect(first?.run.result).toEqual({ heading: 'tab first' });
    expect(second?.run.result).toEqual({ heading: 'tab second' });
    // Both ran on the session's running browser, which is still running for its user.
    expect(first?.run.resources[0]?.id).toBe(browser.body.id);
    const stopped = await stopAndWait(stack.http, `/${project.slug}/api/sessions/${sessionId}/${browser.body.id}`, { token: owner.token });
    expect(stopped.ended.status).toBe('stopped');
  });

  it('loops over a list and branches on a condition', async () => {
    const pipelineId = await createPipeline({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
        items: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'li' } },
        each: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'items.texts' } },
          body: {
            nodes: {
              line: {
                type: 'text.template',
                inputs: { template: 'item {{n}}: {{item}}', n: { $ref: 'each.index' }, item: { $ref: 'each.item' } },
              },
            },
            outputs: { line: { $ref: 'line.text' } },
          },
        },
        check: {
          type: 'flow.condition',
          inputs: { value: { $ref: 'items.count' }, operator: 'greaterThan', operand: 2 },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: { many: { type: 'text.template', inputs: { template: 'many' } } }, outputs: { verdict: { $ref: 'many.text' } } },
          else: { nodes: { few: { type: 'text.template', inputs: { template: 'few' } } }, outputs: { verdict: { $ref: 'few.text' } } },
        },
      },
      outputs: { lines: { $ref: 'each.line' }, verdict: { $ref: 'check.verdict' } },
    });
    const { run } = await runToEnd(pipelineId);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result, JSON.stringify(run.nodeOutputs)).toEqual({
      lines: ['item 0: one', 'item 1: two', 'item 2: three'],
      verdict: 'many',
    });
    // The flow nodes' own outputs are stored beside those of the nodes inside them.
    expect(run.nodeOutputs.each).toMatchObject({ line: ['item 0: one', 'item 1: two', 'item 2: three'] });
    expect(run.nodeOutputs.check).toMatchObject({ verdict: 'many' });
  });

  it('fails with the node named when a selector matches nothing', async () => {
    const pipelineId = await createPipeline({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
        click: { type: 'page.click', timeoutMs: 1000, inputs: { page: { $ref: 'open.page' }, selector: '#missing' } },
      },
    });
    const { run } = await runToEnd(pipelineId);
    expect(run.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(run.error.node).toBe('click');
    expect(run.error.message).toMatch(/#missing/);
  });

  it('stops mid-run when asked, and the browser it started is stopped with it', async () => {
    const pipelineId = await createPipeline(longWaitSource(30_000));
    // A run that records keeps a browser of its own (docs/browsers.md, Contexts for calls).
    const { runUrl } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId, { record: true });
    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.nodeOutputs.page, { timeout: 30_000 })
      .toBeTruthy();
    const stopped = await stack.http.post(`${runUrl}/stop`, undefined, { token: owner.token });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.status).toEqual({ pipeline: 'cancelled', 'pipeline-evaluation': 'stopped' });
    const resourceId = stopped.body.resources[0]?.id;
    expect(resourceId).toBeTruthy();
    await expect
      .poll(
        async () => (await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`, { token: owner.token })).body.status,
        { timeout: 30_000 },
      )
      .toBe('stopped');
  });

  it('stops a call mid-run when asked, and closes its context with it', async () => {
    const pipelineId = await createPipeline(longWaitSource(30_000));
    const { runId, runUrl } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId);
    await expect
      .poll(async () => (await stack.http.get(runUrl, { token: owner.token })).body.nodeOutputs.page, { timeout: 30_000 })
      .toBeTruthy();
    expect(callContexts().has(runId)).toBe(true);
    const stopped = await stack.http.post(`${runUrl}/stop`, undefined, { token: owner.token });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.status).toEqual({ pipeline: 'cancelled', 'pipeline-evaluation': 'stopped' });
    expect(stopped.body.resources).toEqual([]);
    await expect.poll(() => callContexts().has(runId), { timeout: 30_000 }).toBe(false);
  });

  it('refuses a version with compiler errors, bad arguments, and callers without execute', async () => {
    const broken = await createPipeline({ nodes: { x: { type: 'no.such.node' } } });
    const refused = await stack.http.post(`/${project.slug}/api/pipelines/${broken}/start`, { session: sessionId }, { token: owner.token });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('version_has_errors');

    const login = await createPipeline(loginSource());
    const badArgs = await stack.http.post(
      `/${project.slug}/api/pipelines/${login}/start`,
      { session: sessionId, args: { user: 5 } },
      { token: owner.token },
    );
    expect(badArgs.status).toBe(400);
    expect(badArgs.body.code).toBe('invalid_args');

    const reader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read`, `${project.slug}.sessions.read`],
    });
    const forbidden = await stack.http.post(
      `/${project.slug}/api/pipelines/${login}/start`,
      { session: sessionId, args: { user: 'ada', password: 'x' } },
      { apiKey: reader.secret },
    );
    expect(forbidden.status).toBe(403);
    const stranger = await registerUser(stack);
    expect(
      (await stack.http.post(`/${project.slug}/api/pipelines/${login}/start`, { session: sessionId }, { token: stranger.token })).status,
    ).toBe(404);
  });
});

describe('secret arguments', () => {
  const secrets: [string, string][] = [
    ['long', 'correct-horse-7731'],
    ['two-character', '^~'],
    ['quoted, back-slashed', 'pa"ss\\wo\\"rd'],
  ];

  it.each(secrets)(
    'a template that uses a %s secret fills the real value into the page, and the run shows it nowhere',
    async (_kind, secret) => {
      const pipelineId = await createPipeline({
        parameters: { pw: { refType: 'string', secret: true } },
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/form` } },
          text: { type: 'text.template', inputs: { template: 'pre-{{pw}}', pw: { $param: 'pw' } } },
          fill: { type: 'page.fill', inputs: { page: { $ref: 'open.page' }, selector: '#pass', value: { $ref: 'text.text' } } },
          send: { type: 'page.click', inputs: { page: { $ref: 'fill.page' }, selector: 'button[type=submit]', waitFor: 'load' } },
          title: { type: 'extract.text', inputs: { page: { $ref: 'send.page' }, selector: 'h1' } },
        },
        outputs: { said: { $ref: 'title.text' }, sent: { $ref: 'text.text' } },
      });
      const before = received.length;
      const { run, runId, runUrl } = await runToEnd(pipelineId, { pw: secret });
      expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
      expect(received.slice(before)).toEqual([`pre-${secret}`]);
      expect(run.nodeOutputs.text.text).toBe('pre-[redacted]');
      expect(run.result).toEqual({ said: 'thanks', sent: 'pre-[redacted]' });

      const { historyText, texts } = await everythingOf(runId, runUrl);
      expect(historyText).toContain('sealed:');
      expectNowhere(secret, texts);
    },
  );

  it.each(secrets)(
    'a node that fails on a URL with a %s secret in it names the node, and the run shows the secret nowhere',
    async (_kind, secret) => {
      const closedPort = await freePort();
      const pipelineId = await createPipeline({
        parameters: { pw: { refType: 'string', secret: true } },
        nodes: {
          page: { type: 'browser.page' },
          url: { type: 'text.template', inputs: { template: `http://127.0.0.1:${closedPort}/login?pw={{pw}}`, pw: { $param: 'pw' } } },
          open: { type: 'page.goto', timeoutMs: 5000, inputs: { page: { $ref: 'page.page' }, url: { $ref: 'url.text' } } },
        },
      });
      const { run, runId, runUrl } = await runToEnd(pipelineId, { pw: secret });
      expect(run.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
      expect(run.error.node).toBe('open');
      expect(run.error.message).toContain(`/login?pw=[redacted]`);

      const { logs, browserLogs, texts } = await everythingOf(runId, runUrl);
      expect(logs.some((e: { severity: string; message: string }) => e.severity === 'error' && e.message.includes('[redacted]'))).toBe(
        true,
      );
      // The call's browser logged the failed request in the run's log, with the secret hidden.
      expect(browserLogs).toContain(`/login?pw=[redacted]`);
      expect(browserLogs).toContain('"area":"network"');
      expectNowhere(secret, texts);
      // A reader who may not read the session's cookies sees that the browser line was written, not
      // the address (a page can put a cookie into one), as in a browser's own log.
      const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.pipelines.read`] });
      const seen = await stack.http.get(`${runUrl}/logs?limit=200`, { apiKey: reader.secret });
      expect(seen.status, seen.text).toBe(200);
      const network = (seen.body as { area: string; context: string; message: string }[]).filter((entry) => entry.area === 'network');
      expect(network.length).toBeGreaterThan(0);
      for (const entry of network) expect(entry).toMatchObject({ context: 'withheld', message: expect.stringMatching(/^withheld:/) });
      // The run's own lines stay whole for them (the run read no cookies): the failed node's names the address.
      expect(seen.text).toContain('"area":"node"');
    },
  );

  it('fails a condition on a value made from a secret, naming the node, instead of answering on ciphertext', async () => {
    const secret = 'correct-horse-7731';
    const pipelineId = await createPipeline({
      parameters: { pw: { refType: 'string', secret: true } },
      nodes: {
        text: { type: 'text.template', inputs: { template: 'pre-{{pw}}', pw: { $param: 'pw' } } },
        check: {
          type: 'flow.condition',
          inputs: { value: { $ref: 'text.text' }, operator: 'notEquals', operand: 'anything' },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: { yes: { type: 'text.template', inputs: { template: 'yes' } } }, outputs: { verdict: { $ref: 'yes.text' } } },
        },
      },
      outputs: { verdict: { $ref: 'check.verdict' } },
    });
    const { run, runId, runUrl } = await runToEnd(pipelineId, { pw: secret });
    expect(run.status).toEqual({ pipeline: 'failed', 'pipeline-evaluation': 'failed' });
    expect(run.error).toMatchObject({ node: 'check', code: 'secret_in_condition' });
    expect(run.nodeOutputs).not.toHaveProperty('check.then.yes');
    expectNowhere(secret, (await everythingOf(runId, runUrl)).texts);
  });

  it('leaves numbers unsealed, so a loop limit and a condition on a count work when the count holds a secret', async () => {
    // The page lists three items and the secret is "3": the count 3 holds it.
    const pipelineId = await createPipeline({
      parameters: { pin: { refType: 'string', secret: true } },
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
        items: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'li' } },
        each: {
          type: 'flow.forEach',
          inputs: { items: { $ref: 'items.texts' }, maxItems: { $ref: 'items.count' } },
          body: {
            nodes: { line: { type: 'text.template', inputs: { template: '{{item}}!', item: { $ref: 'each.item' } } } },
            outputs: { line: { $ref: 'line.text' } },
          },
        },
        check: {
          type: 'flow.condition',
          inputs: { value: { $ref: 'items.count' }, operator: 'greaterThan', operand: 2 },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: { many: { type: 'text.template', inputs: { template: 'many' } } }, outputs: { verdict: { $ref: 'many.text' } } },
          else: { nodes: { few: { type: 'text.template', inputs: { template: 'few' } } }, outputs: { verdict: { $ref: 'few.text' } } },
        },
      },
      outputs: { lines: { $ref: 'each.line' }, verdict: { $ref: 'check.verdict' } },
    });
    const { run } = await runToEnd(pipelineId, { pin: '3' });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ lines: ['one!', 'two!', 'three!'], verdict: 'many' });
    // Stored, the count is still redacted.
    expect(run.nodeOutputs.items.count).toBe('[redacted]');
  });
});

describe('who may start a run and see what it read', () => {
  const cookieSource = () => ({
    nodes: {
      page: { type: 'browser.page' },
      open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie-jar` } },
      jar: { type: 'page.cookies', inputs: { page: { $ref: 'open.page' }, name: 'sid' } },
    },
    outputs: { sid: { $ref: 'jar.value' } },
  });
  const scriptSource = () => ({
    nodes: {
      page: { type: 'browser.page' },
      open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie-jar` } },
      script: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: 'return document.cookie' } },
    },
    outputs: { cookie: { $ref: 'script.result' } },
  });

  it('refuses a key that may execute the pipeline but not start the session’s browser', async () => {
    const pipelineId = await createPipeline(loginSource());
    const start = (apiKey: string) =>
      stack.http.post(
        `/${project.slug}/api/pipelines/${pipelineId}/start`,
        { session: sessionId, args: { user: 'ada', password: PASSWORD } },
        { apiKey },
      );
    const browsersStarted = () => stack.orm.em.fork().count(SessionResource, { session: sessionId });
    const before = await browsersStarted();

    const runner = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.pipelines.read`, `${project.slug}.pipelineRuns.execute`, `${project.slug}.sessions.read`],
    });
    const refused = await start(runner.secret);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.message).toContain(`sessions.write.${sessionId}`);
    // Nothing was launched for it.
    expect(await browsersStarted()).toBe(before);

    const driver = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [
        `${project.slug}.pipelines.read`,
        `${project.slug}.pipelineRuns.execute`,
        `${project.slug}.sessions.read`,
        `${project.slug}.sessions.write.${sessionId}`,
      ],
    });
    const started = await start(driver.secret);
    expect(started.status, started.text).toBe(200);
    await expect
      .poll(
        async () =>
          (await stack.http.get(`/${project.slug}/api/pipelines/${pipelineId}/${started.body.id}`, { token: owner.token })).body.status
            .pipeline,
        { timeout: 60_000, interval: 300 },
      )
      .toBe('succeeded');

    // A run that reads cookies also needs cookies.read on the session.
    const cookiePipeline = await createPipeline(cookieSource());
    const noCookies = await stack.http.post(
      `/${project.slug}/api/pipelines/${cookiePipeline}/start`,
      { session: sessionId },
      { apiKey: driver.secret },
    );
    expect(noCookies.status, noCookies.text).toBe(403);
    expect(noCookies.body.message).toContain(`cookies.read.${sessionId}`);
    // So does a page script, which can return `document.cookie`.
    const scriptPipeline = await createPipeline(scriptSource());
    const noScript = await stack.http.post(
      `/${project.slug}/api/pipelines/${scriptPipeline}/start`,
      { session: sessionId },
      { apiKey: driver.secret },
    );
    expect(noScript.status, noScript.text).toBe(403);
    expect(noScript.body.message).toContain(`cookies.read.${sessionId}`);
  });

  async function runInPublicProject(source: unknown) {
    const shop = await createProject(stack, owner.token, { public: true });
    const session = await stack.http.put(`/${shop.slug}/api/sessions`, { name: 'public runner' }, { token: owner.token });
    expect(session.status, session.text).toBe(200);
    const created = await stack.http.put(
      `/${shop.slug}/api/pipelines`,
      { name: 'cookie reader', description: '', source },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const { run, runUrl } = await runToEnd(created.body.id, {}, { projectSlug: shop.slug, session: session.body.id });
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.outputsWithheld).toBe(false);
    const reader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${shop.slug}.pipelines.read`, `${shop.slug}.sessions.read`],
    });
    return { shop, sessionId: session.body.id as string, run, runUrl, reader };
  }

  it('shows the cookie values a run read only to callers who may read the session’s cookies', async () => {
    const { shop, sessionId: session, run, runUrl, reader } = await runInPublicProject(cookieSource());
    expect(run.result).toEqual({ sid: COOKIE_VALUE });
    const cookieReader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${shop.slug}.pipelines.read`, `${shop.slug}.cookies.read.${session}`],
    });
    const stranger = await registerUser(stack);
    for (const as of [{}, { token: stranger.token }, { apiKey: reader.secret }]) {
      const seen = await stack.http.get(runUrl, as);
      expect(seen.status, seen.text).toBe(200);
      expect(seen.body).toMatchObject({ status: run.status, nodeOutputs: {}, result: null, outputsWithheld: true });
      expect(seen.text).not.toContain(COOKIE_VALUE);
      const logs = await stack.http.get(`${runUrl}/logs?limit=200`, as);
      expect(logs.status, logs.text).toBe(200);
      expect(logs.text).not.toContain(COOKIE_VALUE);
    }
    const allowed = await stack.http.get(runUrl, { apiKey: cookieReader.secret });
    expect(allowed.body.result).toEqual({ sid: COOKIE_VALUE });
    expect(allowed.body.nodeOutputs.jar.cookies[0]).toMatchObject({ name: 'sid', value: COOKIE_VALUE });
  });

  it('withholds the error of a script that throws document.cookie, and keeps stored cookie values out of the run', async () => {
    const STORED = 'stored-cookie-9a7e3b';
    const shop = await createProject(stack, owner.token, { public: true });
    const session = await stack.http.put(
      `/${shop.slug}/api/sessions`,
      { name: 'cookie thrower', cookies: [{ name: 'stored', value: STORED, url: site.url }] },
      { token: owner.token },
    );
    expect(session.status, session.text).toBe(200);
    const created = await stack.http.put(
      `/${shop.slug}/api/pipelines`,
      {
        name: 'cookie thrower',
        description: '',
        source: {
          nodes: {
            page: { type: 'browser.page' },
            open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie-jar` } },
            script: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: 'throw new Error(document.cookie)' } },
          },
        },
      },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const { run, runUrl } = await runToEnd(created.body.id, {}, { projectSlug: shop.slug, session: session.body.id });
    expect(run.status.pipeline).toBe('failed');
    // The owner may read the cookies: the page's own cookie shows, the stored one is redacted.
    expect(run.error).toMatchObject({ node: 'script', code: 'script_error' });
    expect(run.error.message).toContain(`sid=${COOKIE_VALUE}`);
    expect(run.error.message).toContain('stored=[redacted]');
    expect(run.outputsWithheld).toBe(false);

    const reader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${shop.slug}.pipelines.read`, `${shop.slug}.sessions.read`],
    });
    for (const as of [{ token: owner.token }, { apiKey: reader.secret }, {}]) {
      const seen = await stack.http.get(runUrl, as);
      expect(seen.status, seen.text).toBe(200);
      expect(seen.text).not.toContain(STORED);
      const logs = await stack.http.get(`${runUrl}/logs?limit=200`, as);
      expect(logs.status, logs.text).toBe(200);
      // The run's log is open to pipelines.read: neither value is in it, for anyone.
      expect(logs.text).not.toContain(COOKIE_VALUE);
      expect(logs.text).not.toContain(STORED);
      if ('token' in as) continue;
      expect(seen.body.outputsWithheld).toBe(true);
      expect(seen.body.error).toMatchObject({ node: 'script', code: 'script_error', message: expect.stringMatching(/^withheld/) });
      expect(seen.text).not.toContain(COOKIE_VALUE);
    }
  });

  it('withholds a run’s log lines, as JSON and as SSE, from callers who may not read the cookies it read into a URL', async () => {
    const {
      shop,
      sessionId: session,
      runUrl,
      reader,
    } = await runInPublicProject({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/cookie-jar` } },
        jar: { type: 'page.cookies', inputs: { page: { $ref: 'open.page' }, name: 'sid' } },
        url: { type: 'text.template', inputs: { template: `${site.url}/tab?n={{sid}}`, sid: { $ref: 'jar.value' } } },
        visit: { type: 'page.goto', inputs: { page: { $ref: 'jar.page' }, url: { $ref: 'url.text' } } },
      },
    });
    const cookieReader = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${shop.slug}.pipelines.read`, `${shop.slug}.cookies.read.${session}`],
    });
    const sse = (as: Record<string, string>) =>
      readSse(`${stack.url}${runUrl}/logs`, { headers: as, until: (events) => events.some((event) => event.event === 'end') });

    // Who may read the cookies sees every line whole: the value is in the address the run opened.
    const whole = await stack.http.get(`${runUrl}/logs?limit=200`, { apiKey: cookieReader.secret });
    expect(whole.text).toContain(COOKIE_VALUE);
    const wholeStream = await sse({ 'x-api-key': cookieReader.secret });
    expect(wholeStream.map((event) => event.data).join('\n')).toContain(COOKIE_VALUE);

    const stranger = await registerUser(stack);
    for (const [as, headers] of [
      [{}, {}],
      [{ token: stranger.token }, { authorization: `Bearer ${stranger.token}` }],
      [{ apiKey: reader.secret }, { 'x-api-key': reader.secret }],
    ] as const) {
      const logs = await stack.http.get(`${runUrl}/logs?limit=200`, as);
      expect(logs.status, logs.text).toBe(200);
      expect(logs.text).not.toContain(COOKIE_VALUE);
      expect(logs.body.length).toBe(whole.body.length);
      const [first, ...rest] = logs.body as { area: string; message: string; context: string; object: unknown }[];
      expect(first?.area).toBe('run');
      // The run's status lines stay whole; every other line is there, saying nothing.
      expect(logs.body.at(-1)).toMatchObject({ area: 'run', object: { status: 'succeeded' } });
      for (const line of rest.filter((entry) => entry.area !== 'run')) {
        expect(line).toMatchObject({
          context: 'withheld',
          message: expect.stringMatching(/^withheld: the run read cookies/),
          object: null,
        });
      }
      const stream = await sse(headers);
      const lines = stream.filter((event) => event.event === 'log');
      expect(lines).toHaveLength(whole.body.length);
      expect(stream.map((event) => event.data).join('\n')).not.toContain(COOKIE_VALUE);
    }
  });

  it('withholds what a page script returned from callers who may not read the session’s cookies', async () => {
    const { run, runUrl, reader } = await runInPublicProject(scriptSource());
    expect(run.result).toEqual({ cookie: `sid=${COOKIE_VALUE}` });
    const seen = await stack.http.get(runUrl, { apiKey: reader.secret });
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body).toMatchObject({ nodeOutputs: {}, result: null, outputsWithheld: true });
    expect(seen.text).not.toContain(COOKIE_VALUE);
  });
});

describe('bookkeeping a run cannot skip', () => {
  it('a stop right after the start ends the run cancelled and stops the browser it started', async () => {
    const pipelineId = await createPipeline(longWaitSource(30_000));
    // A run that records keeps a browser of its own (docs/browsers.md, Contexts for calls).
    const { runId, runUrl } = await startRun(stack, project.slug, { token: owner.token }, pipelineId, sessionId, { record: true });
    const stopped = await stack.http.post(`${runUrl}/stop`, undefined, { token: owner.token });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.status).toEqual({ pipeline: 'cancelled', 'pipeline-evaluation': 'stopped' });
    expect(stopped.body.finished).toBeTruthy();
    const resourceId = stopped.body.resources[0]?.id;
    expect(resourceId).toBeTruthy();
    await expect
      .poll(
        async () => (await stack.http.get(`/${project.slug}/api/sessions/${sessionId}/${resourceId}`, { token: owner.token })).body.status,
        { timeout: 30_000 },
      )
      .toBe('stopped');
    // The workflow closed, and nothing it did late (a `running` mark) undid the end.
    await stack.temporal.workflow.getHandle(`run-${runId}`).result();
    const after = await stack.http.get(runUrl, { token: owner.token });
    expect(after.body.status).toEqual({ pipeline: 'cancelled', 'pipeline-evaluation': 'stopped' });
    expect(after.body.error).toMatchObject({ code: 'stopped' });
  });

  it('runs a catastrophic `matches` pattern in linear time, and refuses a backreference at compile time', async () => {
    const pipelineId = await createPipeline({
      nodes: {
        check: {
          type: 'flow.condition',
          inputs: { value: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa!', operator: 'matches', operand: '(a+)+$' },
          // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
          then: { nodes: { yes: { type: 'text.template', inputs: { template: 'yes' } } }, outputs: { verdict: { $ref: 'yes.text' } } },
          else: { nodes: { no: { type: 'text.template', inputs: { template: 'no' } } }, outputs: { verdict: { $ref: 'no.text' } } },
        },
      },
      outputs: { verdict: { $ref: 'check.verdict' } },
    });
    const began = Date.now();
    const { run } = await runToEnd(pipelineId);
    expect(run.status.pipeline, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.result).toEqual({ verdict: 'no' });
    expect(Date.now() - began).toBeLessThan(30_000);

    const created = await stack.http.put(
      `/${project.slug}/api/pipelines`,
      {
        name: `p-backref-${Date.now()}`,
        description: '',
        source: { nodes: { check: { type: 'flow.condition', inputs: { value: 'aa', operator: 'matches', operand: '(a)\\1' } } } },
      },
      { token: owner.token },
    );
    expect(created.status, created.text).toBe(200);
    const detail = await stack.http.get(`/${project.slug}/api/pipelines/${created.body.id}`, { token: owner.token });
    expect(detail.body.errors).toEqual([expect.objectContaining({ node: 'check', input: 'operand', code: 'invalid_value' })]);
    expect(detail.body.errors[0].message).toMatch(/RE2/);
  });

  it('keeps page text without NUL and refuses outputs too large for workflow history', async () => {
    const script = (body: string) => ({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
        script: { type: 'page.evaluate', inputs: { page: { $ref: 'open.page' }, script: body } },
      },
      outputs: { value: { $ref: 'script.result' } },
    });
    const nul = await runToEnd(await createPipeline(script("return { ['k\\u0000ey']: 'a\\u0000b' }")));
    expect(nul.run.status.pipeline, JSON.stringify(nul.run.error)).toBe('succeeded');
    expect(nul.run.result).toEqual({ value: { key: 'ab' } });

    const big = await runToEnd(await createPipeline(script("return 'x'.repeat(2000000)")));
    expect(big.run.status.pipeline).toBe('failed');
    expect(big.run.error).toMatchObject({ node: 'script', code: 'output_too_large' });
    expect(big.run.error.message).toMatch(/return less from the script/);

    const html = await runToEnd(
      await createPipeline({
        nodes: {
          page: { type: 'browser.page' },
          open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
          fill: {
            type: 'page.evaluate',
            inputs: { page: { $ref: 'open.page' }, script: "document.body.append('y'.repeat(2000000)); return null" },
          },
          html: { type: 'extract.html', inputs: { page: { $ref: 'fill.page' } } },
        },
      }),
    );
    expect(html.run.error).toMatchObject({ node: 'html', code: 'output_too_large' });
  });
});

describe('retries and timeouts', () => {
  it('a node with retries gets another attempt when the first fails', async () => {
    // The first attempt gives up after 2 s; the heading is there 4 s after the page loaded.
    const source = (retries: number) => ({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/late` } },
        heading: { type: 'extract.text', retries, timeoutMs: 2000, inputs: { page: { $ref: 'open.page' }, selector: '#late' } },
      },
      outputs: { heading: { $ref: 'heading.text' } },
    });
    const attempts = async (runUrl: string) =>
      (
        (await stack.http.get(`${runUrl}/logs?limit=200`, { token: owner.token })).body as {
          context: string;
          message: string;
          area: string;
        }[]
      )
        // The node's own lines (a failed attempt has its screenshot's line too).
        .filter((entry) => entry.context === 'heading' && entry.area !== 'screenshot')
        .map((entry) => entry.message);

    const once = await runToEnd(await createPipeline(source(0)));
    expect(once.run.status.pipeline).toBe('failed');
    expect(once.run.error).toMatchObject({ node: 'heading', code: 'not_found' });
    expect(await attempts(once.runUrl)).toEqual(['extract.text started', expect.stringMatching(/^extract\.text failed: /)]);

    const retried = await runToEnd(await createPipeline(source(2)));
    expect(retried.run.status.pipeline, JSON.stringify(retried.run.error)).toBe('succeeded');
    expect(retried.run.result).toEqual({ heading: 'late' });
    expect(await attempts(retried.runUrl)).toEqual([
      'extract.text started',
      expect.stringMatching(/^extract\.text failed: /),
      'extract.text started',
      expect.stringMatching(/^extract\.text done in/),
    ]);
  });

  it('a node’s own timeout applies: it fails in about that time with its code', async () => {
    const pipelineId = await createPipeline({
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: `${site.url}/slow` } },
        // The default would be 30 s.
        wait: { type: 'page.wait', timeoutMs: 1500, inputs: { page: { $ref: 'open.page' }, selector: '#never' } },
      },
    });
    const { run } = await runToEnd(pipelineId);
    expect(run.status.pipeline).toBe('failed');
    expect(run.error).toMatchObject({ node: 'wait', code: 'not_found' });
    expect(run.error.message).toMatch(/#never/);
    const took = Date.parse(run.finished) - Date.parse(run.started);
    expect(took).toBeLessThan(15_000);
  });
});

describe('which version and session a start takes', () => {
  const textSource = (text: string) => ({
    nodes: { say: { type: 'text.template', inputs: { template: text } } },
    outputs: { said: { $ref: 'say.text' } },
  });

  async function pipelineWithVersions() {
    const pipelineId = await createPipeline(textSource('one'));
    const v1 = (await stack.http.get(`/${project.slug}/api/pipelines/${pipelineId}`, { token: owner.token })).body.version as string;
    const patch = (source: unknown) =>
      stack.http.patch(`/${project.slug}/api/pipelines/${pipelineId}/source`, { source }, { token: owner.token });
    const broken = (await patch({ nodes: { x: { type: 'no.such.node' } } })).body.version as string;
    const v2 = (await patch(textSource('two'))).body.version as string;
    return { pipelineId, v1, broken, v2 };
  }

  it('runs an explicit older version; refuses one with errors (400), another pipeline’s (404), another project’s session (404)', async () => {
    const { pipelineId, v1, broken, v2 } = await pipelineWithVersions();
    const start = (body: Record<string, unknown>) =>
      stack.http.post(`/${project.slug}/api/pipelines/${pipelineId}/start`, { session: sessionId, ...body }, { token: owner.token });
    const settled = (runId: string) => settledRun(stack, `/${project.slug}/api/pipelines/${pipelineId}/${runId}`, { token: owner.token });

    const old = await start({ version: v1 });
    expect(old.status, old.text).toBe(200);
    expect(await settled(old.body.id)).toMatchObject({ version: v1, result: { said: 'one' } });
    const current = await start({});
    expect(current.status, current.text).toBe(200);
    expect(await settled(current.body.id)).toMatchObject({ version: v2, result: { said: 'two' } });

    const withErrors = await start({ version: broken });
    expect(withErrors.status, withErrors.text).toBe(400);
    expect(withErrors.body.code).toBe('version_has_errors');

    const other = await pipelineWithVersions();
    const foreign = await start({ version: other.v1 });
    expect(foreign.status, foreign.text).toBe(404);

    const elsewhere = await createProject(stack, owner.token);
    const theirs = await stack.http.put(`/${elsewhere.slug}/api/sessions`, { name: 'elsewhere' }, { token: owner.token });
    expect(theirs.status, theirs.text).toBe(200);
    const foreignSession = await stack.http.post(
      `/${project.slug}/api/pipelines/${pipelineId}/start`,
      { session: theirs.body.id },
      { token: owner.token },
    );
    expect(foreignSession.status, foreignSession.text).toBe(404);
  });

  it('a key with pipelineRuns.execute.<version> starts that version only, and stopping needs execute', async () => {
    const { pipelineId, v1, v2 } = await pipelineWithVersions();
    const base = [`${project.slug}.pipelines.read`, `${project.slug}.sessions.read`, `${project.slug}.sessions.write.${sessionId}`];
    const runner = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [...base, `${project.slug}.pipelineRuns.execute.${v1}`],
    });
    const reader = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: base });
    const start = (version: string, apiKey: string) =>
      stack.http.post(`/${project.slug}/api/pipelines/${pipelineId}/start`, { session: sessionId, version }, { apiKey });

    const refused = await start(v2, runner.secret);
    expect(refused.status, refused.text).toBe(403);
    expect((await start(v1, reader.secret)).status).toBe(403);
    const started = await start(v1, runner.secret);
    expect(started.status, started.text).toBe(200);
    const runUrl = `/${project.slug}/api/pipelines/${pipelineId}/${started.body.id}`;
    const readerStop = await stack.http.post(`${runUrl}/stop`, undefined, { apiKey: reader.secret });
    expect(readerStop.status, readerStop.text).toBe(403);
    const runnerStop = await stack.http.post(`${runUrl}/stop`, undefined, { apiKey: runner.secret });
    expect(runnerStop.status, runnerStop.text).toBe(200);
    expect(runnerStop.body.status.pipeline).toMatch(/succeeded|cancelled/);
  });
});
