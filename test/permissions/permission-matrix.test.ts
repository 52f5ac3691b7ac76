import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, createProject, registerUser } from '../support/accounts.ts';
import type { Credentials, HttpResponse } from '../support/http.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Who may do what to a project, over HTTP. Every cell of the table below is one test.
 *
 * Rules (ARCHITECTURE.md, Permissions): a private project the subject cannot read answers 404;
 * readable but not allowed answers 403 (401 for anonymous); a revoked key answers 401. A public
 * project gives everyone read, never write. `public`/`slug` changes need `projects.admin` and
 * DELETE needs `projects.delete`; the owner holds both through `<slug>.*`, a custom key only if
 * it lists them. Every key below belongs to the project's owner.
 */

type Visibility = 'public' | 'private';
type Project = { id: string; slug: string; visibility: Visibility };

const subjects = [
  'anonymous',
  'other user',
  'owner',
  'admin',
  'full key',
  'projects key with it',
  'projects key without it',
  'custom key with',
  'custom key without',
  'revoked key',
] as const;
type SubjectName = (typeof subjects)[number];

/** A status code, or for the listing whether the project is in it (`in` / `out`). */
type Cell = number | 'in' | 'out';

type Route = {
  name: string;
  /** Permission strings (after `<project>.`) given to "custom key with". */
  customWith: (project: Project) => string[];
  /** Grants of "custom key without": the nearest thing that is still not enough. */
  customWithout: (project: Project) => string[];
  /** Mutating routes get a fresh project per cell, so cells do not interfere. */
  fresh: boolean;
  call: (project: Project, as: Credentials) => Promise<HttpResponse>;
  /** Checks the effect of an allowed call. */
  effect?: (project: Project, response: HttpResponse) => Promise<void>;
  expected: Record<Visibility, Cell[]>;
};

let stack: TestStack;
let owner: { token: string; id: string };
let otherUser: { token: string };
let admin: { token: string };
let fullKey: string;
let revokedKey: string;
/** An owner's project that no cell is about; "projects key without it" lists only this one. */
let decoy: Project;
let keyWithoutProject: string;
const sharedProjects = {} as Record<Visibility, Project>;

const slugGrants = (project: Project, ...actions: string[]) => actions.map((action) => `${project.slug}.${action}`);
const elsewhere = () => [`${decoy.slug}.*`];

// biome-ignore format: the expectations are a table; columns follow `subjects`.
const routes: Route[] = [
  {
    name: 'GET /{project}/api',
    customWith: (p) => slugGrants(p, 'projects.read'),
    customWithout: elsewhere,
    fresh: false,
    call: (p, as) => stack.http.get(`/${p.slug}/api`, as),
    effect: async (p, response) => expect(response.body).toMatchObject({ id: p.id, slug: p.slug, visibility: p.visibility }),
    expected: {
      //        anon other owner admin full proj+ proj- cust+ cust- revoked
      public:  [200,  200,  200,  200,  200, 200,  200,  200,  200,  401],
      private: [404,  404,  200,  200,  200, 200,  404,  200,  404,  401],
    },
  },
  {
    name: 'PATCH /{project}/api {name}',
    customWith: (p) => slugGrants(p, 'projects.write'),
    customWithout: (p) => slugGrants(p, 'pipelines.read'),
    fresh: false,
    call: (p, as) => stack.http.patch(`/${p.slug}/api`, { name: `renamed ${randomBytes(2).toString('hex')}` }, as),
    effect: async (_p, response) => expect(response.body.name).toMatch(/^renamed /),
    expected: {
      //        anon other owner admin full proj+ proj- cust+ cust- revoked
      public:  [401,  403,  200,  200,  200, 200,  403,  200,  403,  401],
      private: [404,  404,  200,  200,  200, 200,  404,  200,  403,  401],
    },
  },
  {
    name: 'PATCH /{project}/api {public}',
    customWith: (p) => slugGrants(p, 'projects.admin'),
    customWithout: (p) => slugGrants(p, 'projects.write'),
    fresh: true,
    call: (p, as) => stack.http.patch(`/${p.slug}/api`, { public: p.visibility === 'private' }, as),
    effect: async (p, response) => {
      const flipped = p.visibility === 'private' ? 'public' : 'private';
      expect(response.body.visibility).toBe(flipped);
      expect((await stack.http.get(`/${p.slug}/api`, { token: owner.token })).body.visibility).toBe(flipped);
    },
    expected: {
      //        anon other owner admin full proj+ proj- cust+ cust- revoked
      public:  [401,  403,  200,  200,  200, 200,  403,  200,  403,  401],
      private: [404,  404,  200,  200,  200, 200,  404,  200,  403,  401],
    },
  },
  {
    name: 'PATCH /{project}/api {slug}',
    customWith: (p) => slugGrants(p, 'projects.admin'),
    customWithout: (p) => slugGrants(p, 'projects.write', 'projects.delete'),
    fresh: true,
    call: (p, as) => stack.http.patch(`/${p.slug}/api`, { slug: `${p.slug}-moved` }, as),
    effect: async (p, response) => {
      expect(response.body.slug).toBe(`${p.slug}-moved`);
      expect((await stack.http.get(`/${p.slug}-moved/api`, { token: owner.token })).status).toBe(200);
      expect((await stack.http.get(`/${p.slug}/api`, { token: owner.token })).status).toBe(404);
    },
    expected: {
      //        anon other owner admin full proj+ proj- cust+ cust- revoked
      public:  [401,  403,  200,  200,  200, 200,  403,  200,  403,  401],
      private: [404,  404,  200,  200,  200, 200,  404,  200,  403,  401],
    },
  },
  {
    name: 'DELETE /{project}/api',
    // The id form of a grant, for once.
    customWith: (p) => [`${p.id}.projects.delete`],
    customWithout: (p) => slugGrants(p, 'projects.write', 'projects.admin'),
    fresh: true,
    call: (p, as) => stack.http.delete(`/${p.slug}/api`, as),
    effect: async (p, response) => {
      expect(response.body).toEqual({ status: 'ok' });
      expect((await stack.http.get(`/${p.id}/api`, { token: owner.token })).status).toBe(404);
    },
    expected: {
      //        anon other owner admin full proj+ proj- cust+ cust- revoked
      public:  [401,  403,  200,  200,  200, 200,  403,  200,  403,  401],
      private: [404,  404,  200,  200,  200, 200,  404,  200,  403,  401],
    },
  },
  {
    name: 'GET /api/projects (is the project listed?)',
    customWith: (p) => slugGrants(p, 'projects.read'),
    customWithout: elsewhere,
    fresh: false,
    call: (_p, as) => stack.http.get('/api/projects?limit=200', as),
    expected: {
      //        anon  other  owner  admin  full   proj+  proj-  cust+  cust-  revoked
      public:  ['in', 'in',  'in',  'in',  'in',  'in',  'in',  'in',  'in',  401],
      private: ['out','out', 'in',  'in',  'in',  'in',  'out', 'in',  'out', 401],
    },
  },
];

/** Credentials of a subject for a project; keys that name the project are made for it. */
async function credentialsFor(subject: SubjectName, route: Route, project: Project): Promise<Credentials> {
  switch (subject) {
    case 'anonymous':
      return {};
    case 'other user':
      return { token: otherUser.token };
    case 'owner':
      return { token: owner.token };
    case 'admin':
      return { token: admin.token };
    case 'full key':
      return { apiKey: fullKey };
    case 'projects key with it':
      return { apiKey: (await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [project.id, decoy.id] })).secret };
    case 'projects key without it':
      return { apiKey: keyWithoutProject };
    case 'custom key with':
      return { apiKey: (await createApiKey(stack, owner.token, { accessType: 'custom', permissions: route.customWith(project) })).secret };
    case 'custom key without':
      return {
        apiKey: (await createApiKey(stack, owner.token, { accessType: 'custom', permissions: route.customWithout(project) })).secret,
      };
    case 'revoked key':
      return { apiKey: revokedKey };
  }
}

beforeAll(async () => {
  // Routes that change a project get a fresh project of the owner per cell: more than an account's
  // default quota of projects (docs/quotas.md), which is not what this matrix checks.
  stack = await startTestStack({ PROJECTS_PER_ACCOUNT: '1000' });
  owner = await registerUser(stack);
  otherUser = await registerUser(stack);
  admin = await registerUser(stack, { email: 'admin@example.test' });
  // The shared projects come first, so they are on the first page of every listing.
  sharedProjects.public = { ...(await createProject(stack, owner.token, { public: true })), visibility: 'public' };
  sharedProjects.private = { ...(await createProject(stack, owner.token, { public: false })), visibility: 'private' };
  decoy = { ...(await createProject(stack, owner.token)), visibility: 'private' };
  fullKey = (await createApiKey(stack, owner.token, { accessType: 'full' })).secret;
  keyWithoutProject = (await createApiKey(stack, owner.token, { accessType: 'projects', projectIds: [decoy.id] })).secret;
  const revoked = await createApiKey(stack, owner.token, { accessType: 'full' });
  expect((await stack.http.delete(`/api/api-keys/${revoked.id}`, { token: owner.token })).status).toBe(200);
  revokedKey = revoked.secret;
});

afterAll(async () => {
  await stack?.close();
});

function expectErrorBody(response: HttpResponse) {
  expect(Object.keys(response.body).sort()).toEqual(['code', 'message', 'status']);
  expect(response.body.status).toBe('error');
}

describe.each(routes)('$name', (route) => {
  describe.each(['public', 'private'] as const)('%s project', (visibility) => {
    const cells = subjects.map((subject, index) => ({ subject, expected: route.expected[visibility][index] as Cell }));

    it.each(cells)('$subject → $expected', async ({ subject, expected }) => {
      const project = route.fresh
        ? { ...(await createProject(stack, owner.token, { public: visibility === 'public' })), visibility }
        : sharedProjects[visibility];
      const as = await credentialsFor(subject, route, project);
      const before = await stack.http.get(`/${project.id}/api`, { token: owner.token });
      expect(before.status, before.text).toBe(200);
      const response = await route.call(project, as);

      if (expected === 'in' || expected === 'out') {
        expect(response.status, response.text).toBe(200);
        const slugs = (response.body as { slug: string }[]).map((listed) => listed.slug);
        if (expected === 'in') expect(slugs).toContain(project.slug);
        else expect(slugs).not.toContain(project.slug);
        return;
      }
      expect(response.status, response.text).toBe(expected);
      if (expected === 200) {
        await route.effect?.(project, response);
      } else {
        expectErrorBody(response);
        // Nothing changed: the owner still sees the project as it was.
        const after = await stack.http.get(`/${project.id}/api`, { token: owner.token });
        expect(after.status).toBe(200);
        expect(after.body).toMatchObject({ slug: project.slug, visibility: project.visibility });
        expect(after.body).toEqual(before.body);
      }
    });
  });
});
