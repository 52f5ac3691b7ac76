import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let owner: Awaited<ReturnType<typeof registerUser>>;
let other: Awaited<ReturnType<typeof registerUser>>;
let admin: Awaited<ReturnType<typeof registerUser>>;
let project: { id: string; slug: string };
let otherProject: { id: string; slug: string };

const source = {
  nodes: { page: { type: 'browser.page' }, title: { type: 'extract.text', inputs: { page: { $ref: 'page.page' }, selector: 'h1' } } },
  outputs: { title: { $ref: 'title.text' } },
};

async function createFunction(projectSlug: string, slug: string, token = owner.token) {
  const created = await stack.http.put(
    `/${projectSlug}/api/functions`,
    {
      name: `Function ${slug}`,
      description: `does ${slug}`,
      slug,
      definition: { source, outputs: [{ name: 'title', refType: 'string' }] },
    },
    { token },
  );
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
}

beforeAll(async () => {
  stack = await startTestStack();
  owner = await registerUser(stack);
  other = await registerUser(stack);
  admin = await registerUser(stack, { email: 'admin@example.test' });
  project = await createProject(stack, owner.token);
  otherProject = await createProject(stack, owner.token);
});
afterAll(async () => {
  await stack?.close();
});

describe('MCP servers', () => {
  it('creates, lists, reads, replaces assignments and deletes', async () => {
    const a = await createFunction(project.slug, 'fn-a');
    const b = await createFunction(project.slug, 'fn-b');
    const base = `/${project.slug}/api/mcp-servers`;
    const created = await stack.http.put(base, { name: 'Tools', slug: 'Tools', description: 'for agents', functionIds: [a] }, owner);
    expect(created.status, created.text).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id']);
    const id = created.body.id as string;

    const one = await stack.http.get(`${base}/${id}`, owner);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, name: 'Tools', slug: 'tools', description: 'for agents' });
    expect(one.body.functions.map((fn: { id: string }) => fn.id)).toEqual([a]);
    expect(one.body.functions[0]).toEqual({ id: a, name: 'Function fn-a', slug: 'fn-a', description: 'does fn-a' });

    const list = await stack.http.get(base, owner);
    expect(list.body).toEqual([one.body]);

    const patched = await stack.http.patch(`${base}/${id}`, { functionIds: [b, a], description: 'changed' }, owner);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.functions.map((fn: { slug: string }) => fn.slug)).toEqual(['fn-a', 'fn-b']);
    expect(patched.body.description).toBe('changed');
    const emptied = await stack.http.patch(`${base}/${id}`, { functionIds: [] }, owner);
    expect(emptied.body.functions).toEqual([]);

    expect((await stack.http.delete(`${base}/${id}`, owner)).body).toEqual({ status: 'ok' });
    expect((await stack.http.get(`${base}/${id}`, owner)).status).toBe(404);
    expect((await stack.http.get(base, owner)).body).toEqual([]);
  });

  it('answers 409 for a slug taken in the project, not across projects', async () => {
    const base = `/${project.slug}/api/mcp-servers`;
    expect((await stack.http.put(base, { name: 'One', slug: 'dup', description: '' }, owner)).status).toBe(200);
    const again = await stack.http.put(base, { name: 'Two', slug: 'DUP', description: '' }, owner);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 'error', code: 'slug_taken' });
    const second = await stack.http.put(base, { name: 'Two', slug: 'dup2', description: '' }, owner);
    expect((await stack.http.patch(`${base}/${second.body.id}`, { slug: 'dup' }, owner)).status).toBe(409);
    expect(
      (await stack.http.put(`/${otherProject.slug}/api/mcp-servers`, { name: 'One', slug: 'dup', description: '' }, owner)).status,
    ).toBe(200);
  });

  it('refuses functions of another project and bad input', async () => {
    const foreign = await createFunction(otherProject.slug, 'foreign');
    const base = `/${project.slug}/api/mcp-servers`;
    const refused = await stack.http.put(base, { name: 'X', slug: 'x-server', description: '', functionIds: [foreign] }, owner);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'unknown_function', issues: [{ path: ['functionIds', 0] }] });
    const bogus = await stack.http.put(base, { name: 'X', slug: 'x-server', description: '', functionIds: ['nope'] }, owner);
    expect(bogus.status).toBe(400);
    const unknownField = await stack.http.put(base, { name: 'X', slug: 'x-server', description: '', extra: 1 }, owner);
    expect(unknownField.status).toBe(400);
    expect(unknownField.text).toContain('extra');
    const badSlug = await stack.http.put(base, { name: 'X', slug: 'has space', description: '' }, owner);
    expect(badSlug.status).toBe(400);
  });

  it('is private to those with the permissions', async () => {
    const base = `/${project.slug}/api/mcp-servers`;
    expect((await stack.http.get(base, other)).status).toBe(404);
    expect((await stack.http.get(base)).status).toBe(404);
    const readOnly = await createApiKey(stack, owner.token, { accessType: 'custom', permissions: [`${project.slug}.mcpServers.read`] });
    expect((await stack.http.get(base, { apiKey: readOnly.secret })).status).toBe(200);
    expect((await stack.http.put(base, { name: 'Y', slug: 'y-server', description: '' }, { apiKey: readOnly.secret })).status).toBe(403);
  });

  it('lists only the assigned functions the caller may read', async () => {
    const shown = await createFunction(project.slug, 'shown-fn');
    const hidden = await createFunction(project.slug, 'hidden-fn');
    const base = `/${project.slug}/api/mcp-servers`;
    const created = await stack.http.put(base, { name: 'Mixed', slug: 'mixed', description: '', functionIds: [shown, hidden] }, owner);
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    expect((await stack.http.get(`${base}/${id}`, owner)).body.functions.map((fn: { id: string }) => fn.id).sort()).toEqual(
      [shown, hidden].sort(),
    );
    const narrow = await createApiKey(stack, owner.token, {
      accessType: 'custom',
      permissions: [`${project.slug}.mcpServers.read`, `${project.slug}.functions.read.${shown}`],
    });
    const one = await stack.http.get(`${base}/${id}`, { apiKey: narrow.secret });
    expect(one.status, one.text).toBe(200);
    expect(one.body.functions.map((fn: { id: string }) => fn.id)).toEqual([shown]);
    const list = await stack.http.get(base, { apiKey: narrow.secret });
    expect(list.body.find((server: { id: string }) => server.id === id).functions.map((fn: { id: string }) => fn.id)).toEqual([shown]);
    expect(list.text).not.toContain('hidden-fn');
  });
});

describe('MCP client configs', () => {
  let serverId: string;
  let keyId: string;
  const base = () => `/${project.slug}/api/mcp-client-configs`;

  beforeAll(async () => {
    const server = await stack.http.put(`/${project.slug}/api/mcp-servers`, { name: 'Agents', slug: 'agents', description: '' }, owner);
    serverId = server.body.id;
    keyId = (await createApiKey(stack, owner.token, { name: 'agent key', accessType: 'full' })).id;
  });

  it('creates, lists with server and key summary, reads, updates and deletes', async () => {
    const created = await stack.http.put(base(), { name: 'Claude', description: 'desktop', mcpServerId: serverId, apiKeyId: keyId }, owner);
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const one = await stack.http.get(`${base()}/${id}`, owner);
    expect(one.body).toEqual({ id, name: 'Claude', description: 'desktop', mcpServerId: serverId, apiKeyId: keyId });
    const list = await stack.http.get(base(), owner);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({
      id,
      mcpServer: { id: serverId, name: 'Agents', slug: 'agents' },
      apiKey: { id: keyId, name: 'agent key' },
    });
    expect(list.body[0].apiKey.keyPrefix).toEqual(expect.any(String));
    expect(JSON.stringify(list.body)).not.toMatch(/secret/i);

    const patched = await stack.http.patch(`${base()}/${id}`, { name: 'Claude Desktop' }, owner);
    expect(patched.body.name).toBe('Claude Desktop');
    expect((await stack.http.delete(`${base()}/${id}`, owner)).body).toEqual({ status: 'ok' });
    expect((await stack.http.get(`${base()}/${id}`, owner)).status).toBe(404);
  });

  it('answers 409 for a name taken in the project', async () => {
    expect((await stack.http.put(base(), { name: 'Same', description: '', mcpServerId: serverId, apiKeyId: keyId }, owner)).status).toBe(
      200,
    );
    const again = await stack.http.put(base(), { name: 'Same', description: '', mcpServerId: serverId, apiKeyId: keyId }, owner);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('name_taken');
  });

  it('refuses a server of another project and another user’s key; admins may link any key', async () => {
    const foreignServer = await stack.http.put(
      `/${otherProject.slug}/api/mcp-servers`,
      { name: 'F', slug: 'foreign', description: '' },
      owner,
    );
    const cross = await stack.http.put(
      base(),
      { name: 'Cross', description: '', mcpServerId: foreignServer.body.id, apiKeyId: keyId },
      owner,
    );
    expect(cross.status).toBe(400);
    expect(cross.body.code).toBe('invalid_mcp_server');

    const othersKey = await createApiKey(stack, other.token, { accessType: 'full' });
    const stolen = await stack.http.put(base(), { name: 'Stolen', description: '', mcpServerId: serverId, apiKeyId: othersKey.id }, owner);
    expect(stolen.status).toBe(400);
    expect(stolen.body.code).toBe('invalid_api_key');
    const config = await stack.http.put(base(), { name: 'Mine', description: '', mcpServerId: serverId, apiKeyId: keyId }, owner);
    expect((await stack.http.patch(`${base()}/${config.body.id}`, { apiKeyId: othersKey.id }, owner)).status).toBe(400);

    const byAdmin = await stack.http.put(
      base(),
      { name: 'By admin', description: '', mcpServerId: serverId, apiKeyId: othersKey.id },
      admin,
    );
    expect(byAdmin.status, byAdmin.text).toBe(200);
  });

  it('goes with its server', async () => {
    const server = await stack.http.put(`/${project.slug}/api/mcp-servers`, { name: 'Gone', slug: 'gone', description: '' }, owner);
    const config = await stack.http.put(base(), { name: 'For gone', description: '', mcpServerId: server.body.id, apiKeyId: keyId }, owner);
    await stack.http.delete(`/${project.slug}/api/mcp-servers/${server.body.id}`, owner);
    expect((await stack.http.get(`${base()}/${config.body.id}`, owner)).status).toBe(404);
  });

  it('is in the OpenAPI document, the MCP endpoint included', async () => {
    const document = (await stack.http.get('/api/openapi.json')).body;
    expect(Object.keys(document.paths['/{project}/api/mcp-servers'])).toEqual(expect.arrayContaining(['get', 'put']));
    expect(Object.keys(document.paths['/{project}/api/mcp-servers/{serverId}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    expect(Object.keys(document.paths['/{project}/api/mcp-client-configs/{configId}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    expect(Object.keys(document.paths['/{project}/api/mcp-servers/{serverId}/mcp'])).toEqual(['get', 'post', 'delete']);
  });
});
