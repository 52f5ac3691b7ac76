import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonDepth } from '../../server/http/jsonDepth.ts';
import { registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
});

afterAll(async () => {
  await stack?.close();
});

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('hostile bodies', () => {
  it('a 100 KB body nested 50,000 deep is refused at once, and the server answers others meanwhile', async () => {
    const deep = `{"email":${nested(50_000)},"password":"x"}`;
    const started = performance.now();
    const [refused, meanwhile] = await Promise.all([
      stack.http.request('POST', '/trpc/auth.login', { rawBody: deep, headers: { 'content-type': 'application/json' } }),
      stack.http.get('/api'),
    ]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('too_deep');
    expect(meanwhile.status).toBe(200);
  });

  it('every JSON transport refuses nesting past 64 levels with 400 too_deep: REST, tRPC bodies and queries, MCP', async () => {
    const user = await registerUser(stack);
    const rest = await stack.http.request('PUT', '/api/projects', {
      rawBody: `{"name":"p","slug":"deep","description":${nested(5_000)}}`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
    });
    expect([rest.status, rest.body.code]).toEqual([400, 'too_deep']);
    const query = await stack.http.get(`/trpc/auth.status?input=${encodeURIComponent(nested(100))}`);
    expect(query.status).toBe(400);
    expect(query.text).toContain('too_deep');
    const mcp = await stack.http.request('POST', '/some-project/api/mcp-servers/x/mcp', {
      rawBody: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${nested(1_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect([mcp.status, mcp.body.code]).toEqual([400, 'too_deep']);
    // 64 levels are fine (the route then says what it thinks of the value).
    const shallow = await stack.http.request('PUT', '/api/projects', {
      rawBody: `{"name":"p","slug":"shallow","description":${nested(63)}}`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` },
    });
    expect(shallow.status).toBe(400);
    expect(shallow.body.code).not.toBe('too_deep');
  });

  it('counts depth in one pass, skipping brackets inside strings', () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[[{{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[[["')).toBe(0);
    expect(jsonDepth(nested(1_000_000))).toBe(65);
  });
});
