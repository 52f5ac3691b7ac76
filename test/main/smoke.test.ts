import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerUser } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('a newcomer', () => {
  it('registers, verifies through the mailed token and creates a project', async () => {
    const user = await registerUser(stack);
    const project = await createProject(stack, user.token);
    const read = await stack.http.get(`/${project.slug}/api`, { token: user.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: project.id, slug: project.slug, visibility: 'private', owner: user.id });
  });
});
