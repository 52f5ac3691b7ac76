import { describe, expect, it } from 'vitest';
import type { User } from '../../db/entities/index.ts';
import type { Subject } from '../../server/auth/subject.ts';
import { NotFound, PermissionDenied, Unauthenticated } from '../../server/errors.ts';
import {
  authorize,
  authorizeAccountBilling,
  can,
  canCreateProjects,
  canSeeUserEmails,
  grantCovers,
  isValidPermission,
  type ProjectRef,
  projectActions,
} from '../../server/permissions/permissions.ts';

/** The permission module is pure: these subjects and projects are plain values, no database. */

const OWNER_ID = '11111111-1111-4111-8111-111111111111';
const OTHER_ID = '22222222-2222-4222-8222-222222222222';
const ADMIN_ID = '33333333-3333-4333-8333-333333333333';
const PROJECT_ID = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const OTHER_PROJECT_ID = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

function user(id: string, options: { isAdmin?: boolean; emailVerified?: boolean } = {}) {
  return { id, isAdmin: options.isAdmin ?? false, emailVerified: options.emailVerified ?? true } as User;
}

const owner = user(OWNER_ID);
const other = user(OTHER_ID);
const admin = user(ADMIN_ID, { isAdmin: true });

function session(of: User): Subject {
  return { kind: 'session', account: of, user: of, session: {} as never, claims: { sub: of.id, sid: 'sid', kind: 'full' } };
}

function key(of: User, accessType: 'full' | 'projects' | 'custom', scope: { projectIds?: string[]; permissions?: string[] } = {}): Subject {
  return {
    kind: 'apiKey',
    account: of,
    user: of,
    apiKey: {
      id: 'key',
      name: 'key',
      keyPrefix: 'bfk_test0000',
      accessType,
      projectIds: scope.projectIds ?? [],
      permissions: scope.permissions ?? [],
    },
  };
}

const anonymous: Subject = { kind: 'anonymous' };
const pending2fa: Subject = { kind: 'pending2fa', account: owner, user: owner, session: {} as never };

function project(visibility: 'public' | 'private', overrides: Partial<ProjectRef> = {}): ProjectRef {
  return { id: PROJECT_ID, slug: 'shop', visibility, ownerId: OWNER_ID, ...overrides };
}

const privateProject = project('private');
const publicProject = project('public');

/** Every action the tests ask about, from the project area and the areas later capabilities use. */
const everyAction = [
  'projects.read',
  'projects.write',
  'projects.admin',
  'projects.delete',
  'pipelines.read',
  'pipelines.write',
  'functions.read',
  'functions.write',
  'sessions.read',
  'sessions.write',
  'proxies.write',
  'cookies.read',
];

describe('permission string grammar', () => {
  it.each([
    'shop.pipelines.read',
    'shop.*',
    '*.*',
    '*.pipelines.read',
    'shop.*.read',
    'shop.pipelines.*',
    'my_shop-2.functions.write',
    `${PROJECT_ID}.projects.write`,
    `shop.pipelineRuns.execute.${OTHER_PROJECT_ID}`,
    'a.b.c.d.e.f',
  ])('accepts %s', (permission) => {
    expect(isValidPermission(permission)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['shop', 'a lone segment grants nothing'],
    ['*', 'a lone star'],
    ['shop..read', 'an empty segment'],
    ['.shop.read', 'a leading dot'],
    ['shop.read.', 'a trailing dot'],
    ['shop.pipe lines.read', 'a space'],
    ['shop.pipe*.read', 'a star inside a segment'],
    ['shop.**', 'a double star'],
    ['shop.pipelines/read', 'a slash'],
    ['shöp.pipelines.read', 'a non-ASCII letter'],
    ['a.b.c.d.e.f.g', 'more than six segments'],
  ])('rejects %j (%s)', (permission) => {
    expect(isValidPermission(permission)).toBe(false);
  });
});

describe('grant matching', () => {
  it.each([
    ['shop.pipelines.read', 'shop.pipelines.read', true],
    ['shop.pipelines.read', 'shop.pipelines.write', false],
    ['shop.pipelines.read', 'other.pipelines.read', false],
    // `*` in any one segment
    ['*.pipelines.read', 'shop.pipelines.read', true],
    ['shop.*.read', 'shop.functions.read', true],
    ['shop.*.read', 'shop.functions.write', false],
    ['*.*.read', 'shop.pipelines.read', true],
    // a trailing `*` covers everything below it, but not the prefix itself
    ['shop.*', 'shop.projects.delete', true],
    ['shop.*', 'shop.pipelineRuns.execute.run-1', true],
    ['shop.*', 'shop', false],
    ['shop.*', 'other.projects.read', false],
    ['*.*', 'any.thing.at.all', true],
    ['shop.pipelines.*', 'shop.pipelines.read', true],
    ['shop.pipelines.*', 'shop.functions.read', false],
    // a `*` that is not last matches exactly one segment
    ['shop.*.read', 'shop.pipelineRuns.execute.read', false],
    // a grant without an id covers each id; one with an id covers that id only
    ['shop.pipelines.read', 'shop.pipelines.read.p-1', true],
    ['shop.pipelines.read.p-1', 'shop.pipelines.read.p-1', true],
    ['shop.pipelines.read.p-1', 'shop.pipelines.read.p-2', false],
    ['shop.pipelines.read.p-1', 'shop.pipelines.read', false],
    ['shop.pipelines.read.*', 'shop.pipelines.read.p-9', true],
    // an area alone is not a grant of its actions
    ['shop.pipelines', 'shop.pipelines.read', false],
    ['shop.pipelines.read.p-1.extra', 'shop.pipelines.read.p-1', false],
  ] as const)('%s covers %s: %s', (grant, required, expected) => {
    expect(grantCovers(grant, required)).toBe(expected);
  });
});

describe('the owner', () => {
  it.each(everyAction)('may %s in a private project (holds <slug>.*)', (action) => {
    expect(can(session(owner), privateProject, action)).toBe(true);
    expect(can(session(owner), privateProject, action, 'resource-1')).toBe(true);
  });

  it('has no rights in a project owned by someone else', () => {
    const foreign = project('private', { ownerId: OTHER_ID });
    expect(can(session(owner), foreign, projectActions.read)).toBe(false);
    expect(() => authorize(session(owner), foreign, projectActions.write)).toThrow(NotFound);
  });
});

describe('a global admin', () => {
  it.each(everyAction)('may %s in any private project', (action) => {
    expect(can(session(admin), privateProject, action)).toBe(true);
  });

  it('keeps admin rights through a full key, and is narrowed by a projects key', () => {
    expect(can(key(admin, 'full'), privateProject, projectActions.delete)).toBe(true);
    expect(can(key(admin, 'projects', { projectIds: [OTHER_PROJECT_ID] }), privateProject, projectActions.read)).toBe(false);
    expect(can(key(admin, 'projects', { projectIds: [PROJECT_ID] }), privateProject, projectActions.delete)).toBe(true);
  });

  it('is not an admin until the e-mail address is verified', () => {
    const unverified = user(ADMIN_ID, { isAdmin: true, emailVerified: false });
    expect(can(session(unverified), privateProject, projectActions.read)).toBe(false);
    expect(can(session(unverified), publicProject, projectActions.write)).toBe(false);
  });
});

describe('public projects', () => {
  const readers: [string, Subject][] = [
    ['anonymous', anonymous],
    ['another user', session(other)],
    ['a pending 2FA login', pending2fa],
    ["another user's custom key for other projects", key(other, 'custom', { permissions: ['elsewhere.*'] })],
  ];

  it.each(readers)('grant %s read of project metadata, pipelines and functions', (_name, subject) => {
    for (const action of ['projects.read', 'pipelines.read', 'functions.read']) {
      expect(can(subject, publicProject, action), action).toBe(true);
      expect(can(subject, publicProject, action, 'some-id'), `${action} on an id`).toBe(true);
    }
  });

  it.each(readers)('grant %s nothing else: no write, no sessions, no cookies, no secrets', (_name, subject) => {
    for (const action of everyAction.filter((a) => !['projects.read', 'pipelines.read', 'functions.read'].includes(a))) {
      expect(can(subject, publicProject, action), action).toBe(false);
    }
  });

  it('answer a write by an anonymous caller with 401 and by another user with 403', () => {
    expect(() => authorize(anonymous, publicProject, projectActions.write)).toThrow(Unauthenticated);
    expect(() => authorize(pending2fa, publicProject, projectActions.write)).toThrow(Unauthenticated);
    expect(() => authorize(session(other), publicProject, projectActions.write)).toThrow(PermissionDenied);
    expect(() => authorize(session(other), publicProject, 'cookies.read')).toThrow(PermissionDenied);
  });
});

describe('private projects', () => {
  it.each([
    ['anonymous', anonymous],
    ['another user', session(other)],
    ['a pending 2FA login of the owner', pending2fa],
  ] as [string, Subject][])('are invisible to %s (404, whatever the action)', (_name, subject) => {
    for (const action of everyAction) {
      expect(can(subject, privateProject, action), action).toBe(false);
      expect(() => authorize(subject, privateProject, action)).toThrow(NotFound);
    }
  });
});

describe('API keys', () => {
  it('full: exactly the owner’s rights', () => {
    for (const action of everyAction) expect(can(key(owner, 'full'), privateProject, action)).toBe(true);
    expect(can(key(other, 'full'), privateProject, projectActions.read)).toBe(false);
  });

  it('projects: the owner’s rights in the listed projects, nothing in the others', () => {
    const listed = key(owner, 'projects', { projectIds: [PROJECT_ID] });
    for (const action of everyAction) expect(can(listed, privateProject, action)).toBe(true);
    const unlisted = key(owner, 'projects', { projectIds: [OTHER_PROJECT_ID] });
    expect(can(unlisted, privateProject, projectActions.read)).toBe(false);
    expect(() => authorize(unlisted, privateProject, projectActions.write)).toThrow(NotFound);
    // A public project still reads, as for everyone, but the key cannot write it.
    expect(can(unlisted, publicProject, projectActions.read)).toBe(true);
    expect(() => authorize(unlisted, publicProject, projectActions.write)).toThrow(PermissionDenied);
  });

  it('projects: listing a project of another user gives nothing (intersection with the owner)', () => {
    const foreign = project('private', { ownerId: OTHER_ID });
    expect(can(key(owner, 'projects', { projectIds: [PROJECT_ID] }), foreign, projectActions.read)).toBe(false);
  });

  describe('custom', () => {
    const custom = (...permissions: string[]) => key(owner, 'custom', { permissions });

    it('grants what the strings name, by slug or by id', () => {
      expect(can(custom('shop.projects.write'), privateProject, projectActions.write)).toBe(true);
      expect(can(custom(`${PROJECT_ID}.projects.write`), privateProject, projectActions.write)).toBe(true);
      expect(can(custom('shop.projects.write'), privateProject, projectActions.delete)).toBe(false);
      expect(can(custom(`${OTHER_PROJECT_ID}.projects.write`), privateProject, projectActions.write)).toBe(false);
    });

    it('matches the project segment case-insensitively, like slugs and ids', () => {
      expect(can(custom('Shop.projects.write'), privateProject, projectActions.write)).toBe(true);
      expect(can(custom(`${PROJECT_ID.toUpperCase()}.projects.write`), privateProject, projectActions.write)).toBe(true);
      // The area and action stay exact.
      expect(can(custom('shop.Projects.write'), privateProject, projectActions.write)).toBe(false);
    });

    it('honours `*` in any segment and a trailing `*`', () => {
      expect(can(custom('*.projects.write'), privateProject, projectActions.write)).toBe(true);
      expect(can(custom('shop.*.write'), privateProject, 'pipelines.write')).toBe(true);
      expect(can(custom('shop.*.write'), privateProject, 'pipelines.read')).toBe(false);
      expect(can(custom('shop.*'), privateProject, projectActions.delete)).toBe(true);
      expect(can(custom('*.*'), privateProject, projectActions.admin)).toBe(true);
    });

    it('grants ids: per id, or every id when the grant names none', () => {
      expect(can(custom('shop.pipelineRuns.execute.v-1'), privateProject, 'pipelineRuns.execute', 'v-1')).toBe(true);
      expect(can(custom('shop.pipelineRuns.execute.v-1'), privateProject, 'pipelineRuns.execute', 'v-2')).toBe(false);
      expect(can(custom('shop.pipelines.read'), privateProject, 'pipelines.read', 'p-7')).toBe(true);
    });

    it('lets any grant in the project read its metadata, so the key can reach its routes', () => {
      const pipelinesOnly = custom('shop.pipelines.read');
      expect(can(pipelinesOnly, privateProject, projectActions.read)).toBe(true);
      expect(() => authorize(pipelinesOnly, privateProject, projectActions.write)).toThrow(PermissionDenied);
      const elsewhere = custom('elsewhere.*');
      expect(can(elsewhere, privateProject, projectActions.read)).toBe(false);
      expect(() => authorize(elsewhere, privateProject, projectActions.write)).toThrow(NotFound);
    });

    it('never exceeds the key owner’s rights', () => {
      const foreign = project('private', { ownerId: OTHER_ID });
      expect(can(custom('*.*'), foreign, projectActions.read)).toBe(false);
      expect(can(custom('shop.*'), foreign, projectActions.write)).toBe(false);
      expect(() => authorize(custom('shop.*'), foreign, projectActions.write)).toThrow(NotFound);
      // On someone else's public project, the grant adds nothing to what everyone has.
      const foreignPublic = project('public', { ownerId: OTHER_ID });
      expect(can(custom('shop.*'), foreignPublic, projectActions.read)).toBe(true);
      expect(() => authorize(custom('shop.*'), foreignPublic, projectActions.write)).toThrow(PermissionDenied);
    });

    it('keeps the owner-only actions for keys that list them', () => {
      expect(can(custom('shop.projects.write'), privateProject, projectActions.admin)).toBe(false);
      expect(can(custom('shop.projects.admin'), privateProject, projectActions.admin)).toBe(true);
      expect(can(custom('shop.projects.admin'), privateProject, projectActions.delete)).toBe(false);
      expect(can(custom('shop.projects.delete'), privateProject, projectActions.delete)).toBe(true);
    });

    it('gives a key with no grants nothing beyond public read', () => {
      expect(can(custom(), privateProject, projectActions.read)).toBe(false);
      expect(can(custom(), publicProject, projectActions.read)).toBe(true);
      expect(can(custom(), publicProject, projectActions.write)).toBe(false);
    });
  });
});

describe('authorize', () => {
  it('passes silently when allowed', () => {
    expect(() => authorize(session(owner), privateProject, projectActions.delete)).not.toThrow();
  });

  it('names the missing permission in a 403', () => {
    const subject = key(owner, 'custom', { permissions: ['shop.pipelines.read'] });
    expect(() => authorize(subject, privateProject, projectActions.delete)).toThrow(/shop\.projects\.delete/);
    expect(() => authorize(subject, privateProject, 'pipelineRuns.execute', 'v-1')).toThrow(/shop\.pipelineRuns\.execute\.v-1/);
  });
});

describe('who may create projects', () => {
  it.each([
    ['a session', session(owner), true],
    ['a full key', key(owner, 'full'), true],
    ['a projects key', key(owner, 'projects', { projectIds: [PROJECT_ID] }), false],
    ['a custom key', key(owner, 'custom', { permissions: ['*.*'] }), false],
    ['anonymous', anonymous, false],
    ['a pending 2FA login', pending2fa, false],
  ] as [string, Subject, boolean][])('%s: %s', (_name, subject, expected) => {
    expect(canCreateProjects(subject)).toBe(expected);
  });
});

describe('whose billing a caller reaches', () => {
  it.each([
    ['a session', session(owner), true],
    ['a full key', key(owner, 'full'), true],
    ['a projects key', key(owner, 'projects', { projectIds: [PROJECT_ID] }), false],
    ['a one-grant key', key(owner, 'custom', { permissions: ['shop.functions.read'] }), false],
    ['a custom key granted everything', key(owner, 'custom', { permissions: ['*.*'] }), false],
  ] as [string, Subject, boolean][])('%s: %s', (_name, subject, allowed) => {
    if (allowed) expect(() => authorizeAccountBilling(subject)).not.toThrow();
    else expect(() => authorizeAccountBilling(subject)).toThrow(PermissionDenied);
  });
});

describe('who sees other accounts’ e-mail', () => {
  const unverified = user(OTHER_ID, { emailVerified: false });
  it.each([
    ['a verified session', session(owner), true],
    ['a full key of a verified account', key(owner, 'full'), true],
    ['an unverified session', session(unverified), false],
    ['a full key of an unverified account', key(unverified, 'full'), false],
    ['a projects key', key(owner, 'projects', { projectIds: [PROJECT_ID] }), false],
    ['a custom key', key(owner, 'custom', { permissions: ['*.*'] }), false],
    ['anonymous', anonymous, false],
    ['a pending 2FA login', pending2fa, false],
  ] as [string, Subject, boolean][])('%s: %s', (_name, subject, expected) => {
    expect(canSeeUserEmails(subject)).toBe(expected);
  });
});
