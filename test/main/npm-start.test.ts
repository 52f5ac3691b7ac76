import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createScratchDatabase } from '../../scripts/scratch-database.ts';
import { sharedDataDirOf } from '../../server/config.ts';
import { freePort } from '../../server/infra/ports.ts';
import { PASSWORD } from '../support/accounts.ts';
import { type Credentials, HttpClient } from '../support/http.ts';
import { PAGE_HOST, startTestSite } from '../support/pages.ts';
import { groupAlive, projectRoot as root } from '../support/processes.ts';
import { startSmtpSink, tokenFromMail } from '../support/smtp.ts';
import { testDatabaseBase } from '../support/stack.ts';

/**
 * `npm start` itself — the all-in-one process (server/main/start.ts: migrations, api, control
 * worker, browser host) — with an MCP SDK client against it. Its embedded PostgreSQL and Temporal
 * dev server are replaced by a scratch database and the test run's Temporal: they are what the
 * other test files use too, and cheaper on a small machine than a second PostgreSQL and Temporal.
 */

/** Start-up bundles the workflow code and runs every migration: slow on a busy 2-core machine. */
const START_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 30_000;

let child: ChildProcess;
let output = '';
let http: HttpClient;
let baseUrl: string;
let dataDir: string;
let database: Awaited<ReturnType<typeof createScratchDatabase>>;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
let queue: string;

async function stopGroup(pid: number) {
  const gone = () => !groupAlive(pid);
  if (gone()) return;
  process.kill(-pid, 'SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  // A graceful stop closes the api, the browser host and the worker; the group empties when done.
  while (!gone() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  if (!gone()) process.kill(-pid, 'SIGKILL');
}

/** Resolves once the process logs that the API listens; rejects if it exits first or takes too long. */
function waitUntilReady(proc: ChildProcess) {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => done(new Error(`npm start was not ready in ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-4000)}`)),
      START_TIMEOUT_MS,
    );
    const onData = () => {
      if (output.includes('API ready at')) done();
    };
    const onExit = (code: number | null, signal: string | null) =>
      done(new Error(`npm start exited (${code ?? signal}) before it was ready:\n${output.slice(-4000)}`));
    function done(error?: Error) {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    }
    proc.stdout?.on('data', onData);
    proc.on('exit', onExit);
    onData();
  });
}

beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  database = await createScratchDatabase(testDatabaseBase, 'bfstart');
  smtp = await startSmtpSink();
  site = await startTestSite({
    '/catalog': (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>catalog</title><h1>Fruit</h1><ul><li>apple</li><li>pear</li></ul>');
    },
  });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-npm-start-'));
  queue = `start-${randomBytes(6).toString('hex')}`;
  child = spawn('npm', ['start', '--silent'], {
    cwd: root,
    // Its own process group, so the test can stop npm, node and Chromium together.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      // The project's Node 24 (node_modules/.bin/node) first, as `npm start` expects.
      PATH: `${path.join(root, 'node_modules/.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      npm_config_update_notifier: 'false',
      NODE_ENV: 'development',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: baseUrl,
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: queue,
      BROWSER_HOST_ID: `host-${queue}`,
      BROWSER_WARM_POOL: '0',
      BROWSER_ALLOWED_PRIVATE_DESTINATIONS: PAGE_HOST,
      JWT_SECRET: randomBytes(32).toString('hex'),
      SMTP_URL: smtp.url,
      RATE_LIMITS: 'off',
      LOG_LEVEL: 'info',
    },
  });
  const keep = (chunk: Buffer) => {
    // Only the tail matters for a failure message.
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  await waitUntilReady(child);
  http = new HttpClient(baseUrl);
}, START_TIMEOUT_MS + 60_000);

afterAll(async () => {
  if (child?.pid) await stopGroup(child.pid);
  await site?.close();
  await smtp?.close();
  await database?.drop();
  if (dataDir) {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sharedDataDirOf(dataDir), { recursive: true, force: true });
  }
}, STOP_TIMEOUT_MS + 60_000);

describe('npm start', () => {
  it('serves the API, and an MCP SDK client lists and calls a function tool on it', { timeout: 180_000 }, async () => {
    const api = await http.get('/api');
    expect(api.status, api.text).toBe(200);

    // An account, verified through the mailed token.
    const email = `start-${randomBytes(4).toString('hex')}@example.test`;
    const registered = await http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });
    expect(registered.status, registered.text).toBe(200);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject), 60_000);
    const verified = await http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) });
    expect(verified.status, verified.text).toBe(200);
    const owner: Credentials = { token: verified.body.token };

    const slug = `start-${randomBytes(4).toString('hex')}`;
    const project = await http.put('/api/projects', { name: 'Started', description: '', slug, public: false }, owner);
    expect(project.status, project.text).toBe(200);

    const source = {
      parameters: { url: { refType: 'string' } },
      nodes: {
        page: { type: 'browser.page' },
        open: { type: 'page.goto', inputs: { page: { $ref: 'page.page' }, url: { $param: 'url' } } },
        heading: { type: 'extract.text', inputs: { page: { $ref: 'open.page' }, selector: 'h1' } },
        items: { type: 'extract.text', inputs: { page: { $ref: 'heading.page' }, selector: 'li' } },
      },
      outputs: { title: { $ref: 'heading.text' } },
    };
    const pipeline = await http.put(`/${slug}/api/pipelines`, { name: 'catalog', description: '', source }, owner);
    expect(pipeline.status, pipeline.text).toBe(200);
    const pipelineVersionId = (await http.get(`/${slug}/api/pipelines/${pipeline.body.id}`, owner)).body.version;

    const fn = await http.put(
      `/${slug}/api/functions`,
      {
        name: 'Catalog',
        description: 'Reads a catalog page',
        slug: 'catalog',
        definition: {
          source,
          parameters: [{ name: 'url', refType: 'string' }],
          outputs: [
            { name: 'title', refType: 'string' },
            { name: 'items', refType: 'list', source: { nodeName: 'items', outputName: 'texts' } },
          ],
        },
      },
      owner,
    );
    expect(fn.status, fn.text).toBe(200);
    const imported = await http.post(
      `/${slug}/api/functions/${fn.body.id}/import`,
      { pipelineId: pipeline.body.id, pipelineVersionId },
      owner,
    );
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.errors).toEqual([]);

    const server = await http.put(
      `/${slug}/api/mcp-servers`,
      { name: 'Shop', slug: 'shop', description: 'Catalog tools', functionIds: [fn.body.id] },
      owner,
    );
    expect(server.status, server.text).toBe(200);
    const key = await http.put('/api/api-keys', { name: 'agent', accessType: 'full' }, owner);
    expect(key.status, key.text).toBe(200);
    const config = await http.put(
      `/${slug}/api/mcp-client-configs`,
      { name: 'agent', description: '', mcpServerId: server.body.id, apiKeyId: key.body.id },
      owner,
    );
    expect(config.status, config.text).toBe(200);

    const client = new Client({ name: 'npm-start-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl}/${slug}/api/mcp-servers/${server.body.id}/mcp`), {
        requestInit: { headers: { 'x-api-key': key.body.secret } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['catalog']);
      const result = await client.callTool({ name: 'catalog', arguments: { url: `${site.url}/catalog` } }, undefined, { timeout: 150_000 });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ title: 'Fruit', items: ['apple', 'pear'] });
    } finally {
      await client.close();
    }
  });

  // Last: it stops the process.
  it('stops on Ctrl-C within 10 s with a browser running, which is stopped (not drained) and settles stopped', {
    timeout: 120_000,
  }, async () => {
    const email = `ctrl-c-${randomBytes(4).toString('hex')}@example.test`;
    await http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });
    const mail = await smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject), 60_000);
    const owner: Credentials = { token: (await http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) })).body.token };
    const slug = `ctrl-c-${randomBytes(4).toString('hex')}`;
    expect((await http.put('/api/projects', { name: 'Ctrl-C', description: '', slug, public: false }, owner)).status).toBe(200);
    const session = await http.put(`/${slug}/api/sessions`, { name: 'running' }, owner);
    expect(session.status, session.text).toBe(200);
    const started = await http.post(`/${slug}/api/sessions/${session.body.id}/start`, undefined, owner);
    expect(started.status, started.text).toBe(200);
    expect(started.body.status).toBe('running');

    // A terminal's Ctrl-C: SIGINT to the whole foreground group (npm, its shell, node).
    const pid = child.pid as number;
    const signalledAt = Date.now();
    process.kill(-pid, 'SIGINT');
    while (groupAlive(pid) && Date.now() - signalledAt < 30_000) await new Promise((resolve) => setTimeout(resolve, 100));
    const tookMs = Date.now() - signalledAt;
    expect(groupAlive(pid), output.slice(-4000)).toBe(false);
    expect(tookMs, output.slice(-4000)).toBeLessThan(10_000);
    expect(output).toContain('SIGINT: shutting down');
    expect(output).not.toContain('draining');
    expect(output).not.toContain('shutdown still under way');
    // The database's close is bounded by itself (db/driverBounds.ts), well within its step.
    expect(output).not.toContain('stopping the database connection took more than');
    // Each worker stops before its connection closes (server/infra/temporalRuntime.ts, runWorker).
    expect(output).not.toContain('IllegalStateError');

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const { rows } = await db.query('select status, stop_reason from session_resources where id = $1', [started.body.id]);
      expect(rows[0]).toEqual({ status: 'stopped', stop_reason: `browser host host-${queue} was shut down` });
    } finally {
      await db.end();
    }
  });
});
