import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserflowClient, isTRPCClientError } from '../../client/index.ts';
import { createApiKey, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('the typed client', () => {
  it('reads root.info anonymously, with a session token and with an API key', async () => {
    const user = await registerUser(stack);
    const key = await createApiKey(stack, user.token, { accessType: 'full' });

    const anonymous = await createBrowserflowClient({ url: stack.url }).root.info.query();
    expect(anonymous).toMatchObject({ name: 'browserflow', subject: null });

    const asUser = await createBrowserflowClient({ url: stack.url, token: user.token }).root.info.query();
    expect(asUser.subject).toMatchObject({ type: 'user', userId: user.id, email: user.email, emailVerified: true });

    const asKey = await createBrowserflowClient({ url: stack.url, apiKey: key.secret }).root.info.query();
    expect(asKey.subject).toMatchObject({ type: 'apiKey', userId: user.id, apiKeyId: key.id });
  });

  it('creates a project and reads it back by slug and by id, as the REST API does', async () => {
    const user = await registerUser(stack);
    const client = createBrowserflowClient({ url: stack.url, token: user.token });
    const slug = `c-${randomBytes(4).toString('hex')}`;

    const { id } = await client.projects.create.mutate({ name: 'Client project', slug, public: false });
    const bySlug = await client.projects.get.query({ project: slug });
    expect(bySlug).toMatchObject({ id, slug, name: 'Client project', visibility: 'private', owner: user.id });
    expect(await client.projects.get.query({ project: id })).toEqual(bySlug);

    const rest = await stack.http.get(`/${slug}/api`, { token: user.token });
    expect(rest.body).toEqual(bySlug);

    const key = await createApiKey(stack, user.token, { accessType: 'projects', projectIds: [id] });
    const keyed = createBrowserflowClient({ url: stack.url, apiKey: key.secret });
    expect(await keyed.projects.get.query({ project: slug })).toEqual(bySlug);
  });

  it('reports errors with the HTTP status and code of the REST answer', async () => {
    const client = createBrowserflowClient({ url: stack.url });
    const error = await client.projects.get.query({ project: 'no-such-project' }).catch((e: unknown) => e);
    expect(isTRPCClientError(error)).toBe(true);
    expect((error as { data?: unknown }).data).toMatchObject({ httpStatus: 404, domainCode: 'not_found' });

    const badKey = createBrowserflowClient({ url: stack.url, apiKey: 'bfk_00000000_not-a-real-key' });
    const rejected = await badKey.root.info.query().catch((e: unknown) => e);
    expect((rejected as { data?: unknown }).data).toMatchObject({ httpStatus: 401 });
  });
});
