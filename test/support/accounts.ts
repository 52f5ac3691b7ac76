import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { tokenFromMail } from './smtp.ts';
import type { TestStack } from './stack.ts';

export const PASSWORD = 'correct horse battery';

/** Registers an account through the API; with `verify`, also completes the mailed verification. */
export async function registerUser(stack: TestStack, options: { email?: string; verify?: boolean } = {}) {
  const email = options.email ?? `user-${randomBytes(4).toString('hex')}@example.test`;
  const registered = await stack.http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Ada', lastName: 'Lovelace' });
  expect(registered.status, registered.text).toBe(200);
  let token: string = registered.body.token;
  if (options.verify ?? true) {
    const mail = await stack.smtp.waitFor((m) => m.to.includes(email) && /verify/i.test(m.subject));
    const verified = await stack.http.post('/api/auth/verify/submit', { token: tokenFromMail(mail) });
    expect(verified.status, verified.text).toBe(200);
    token = verified.body.token;
  }
  const me = await stack.http.get('/api/auth', { token });
  return { email, token, id: me.body.user.id as string };
}

export async function createProject(stack: TestStack, token: string, options: { slug?: string; public?: boolean } = {}) {
  const slug = options.slug ?? `p-${randomBytes(4).toString('hex')}`;
  const created = await stack.http.put(
    '/api/projects',
    { name: `Project ${slug}`, description: 'test', slug, public: options.public ?? false },
    { token },
  );
  expect(created.status, created.text).toBe(200);
  return { id: created.body.id as string, slug };
}

export async function createApiKey(
  stack: TestStack,
  token: string,
  body: { name?: string; accessType: 'full' | 'projects' | 'custom'; projectIds?: string[]; permissions?: string[] },
) {
  const created = await stack.http.put('/api/api-keys', { name: 'test key', ...body }, { token });
  expect(created.status, created.text).toBe(200);
  return { id: created.body.id as string, secret: created.body.secret as string, keyPrefix: created.body.keyPrefix as string };
}
