import type { Subject } from '../auth/subject.ts';
import { PermissionDenied, projectNotFound, Unauthenticated } from '../errors.ts';

/**
 * The one place that decides who may do what in a project.
 *
 * Permission strings are `<project>.<area>.<action>[.<id>]`, where `<project>` is the project's
 * slug or id. `*` matches exactly one segment, except as the last segment of a grant, where it
 * matches everything that follows (so the owner's `<slug>.*` covers every area and action).
 * A grant without an id (`<slug>.pipelines.read`) covers the action on every id; one with an
 * id (`<slug>.pipelineRuns.execute.<versionId>`) covers that id only. The project segment
 * compares case-insensitively, as slugs do. Any grant in a project lets a key read the project's
 * metadata (`projects.read`): a key that may read pipelines must be able to reach the project.
 */

export type ProjectRef = { id: string; slug: string; visibility: 'public' | 'private'; ownerId: string };

/** What the rules need of a project row: the one way a loaded project becomes a ProjectRef. */
export function projectRef(project: { id: string; slug: string; visibility: 'public' | 'private'; owner: { id: string } }): ProjectRef {
  return { id: project.id, slug: project.slug, visibility: project.visibility, ownerId: project.owner.id };
}

/** Actions on a project. Areas added by later capabilities follow the same shape. */
export const projectActions = {
  read: 'projects.read',
  write: 'projects.write',
  /** Changing `public` or `slug`: the owner's decision. */
  admin: 'projects.admin',
  delete: 'projects.delete',
} as const;

/** Actions of the browser-session area. Resource ids refine them (`….sessions.read.<sessionId>`). */
export const sessionActions = {
  read: 'sessions.read',
  write: 'sessions.write',
  /** Session cookies, and capturing a running browser's cookies. */
  readCookies: 'cookies.read',
} as const;

/** Pipelines and their versions; runs are started per version (`….pipelineRuns.execute.<versionId>`). */
export const pipelineActions = {
  read: 'pipelines.read',
  write: 'pipelines.write',
  execute: 'pipelineRuns.execute',
} as const;

/**
 * Functions. Executing one needs `functions.read` on it and execute on what it runs: the
 * pipeline version it was imported from (`pipelineRuns.execute.<pipelineVersionId>`), or, for a
 * function whose source was given directly, `functions.execute.<functionId>`.
 */
export const functionActions = {
  read: 'functions.read',
  write: 'functions.write',
  execute: 'functions.execute',
} as const;

export const mcpActions = {
  read: 'mcpServers.read',
  write: 'mcpServers.write',
  readConfigs: 'mcpClientConfigs.read',
  writeConfigs: 'mcpClientConfigs.write',
} as const;

export const proxyActions = {
  read: 'proxies.read',
  write: 'proxies.write',
} as const;

/** Webhook endpoints and their deliveries (`….webhooks.read.<webhookId>` for one endpoint). */
export const webhookActions = {
  read: 'webhooks.read',
  write: 'webhooks.write',
} as const;

/** What a public project grants everyone, signed in or not. Never write, cookies or secrets. */
const publicReadActions = ['projects.read', 'pipelines.read', 'functions.read'];

/**
 * A permission string: 2 to 6 dot-separated segments of letters, digits, dashes and underscores,
 * or `*`. At least `<project>.<area or *>`: a lone segment would be a grant that covers nothing.
 * A regular expression, so the OpenAPI document states it as the request schema's `pattern`.
 */
export const permissionPattern = /^(?:[A-Za-z0-9_-]+|\*)(?:\.(?:[A-Za-z0-9_-]+|\*)){1,5}$/;

export function isValidPermission(permission: string) {
  return permissionPattern.test(permission);
}

export function grantCovers(grant: string, required: string) {
  const granted = grant.split('.');
  const needed = required.split('.');
  for (let i = 0; i < granted.length; i++) {
    const segment = granted[i];
    if (segment === '*' && i === granted.length - 1) return needed.length > i;
    if (i >= needed.length) return false;
    if (segment !== '*' && segment !== needed[i]) return false;
  }
  // `<project>.<area>.<action>` also covers that action on each id: `….<action>.<id>`.
  return granted.length === needed.length || (granted.length === 3 && needed.length === 4);
}

/** The permission strings naming `action` in `project`, by slug and by id. */
function requiredForms(project: ProjectRef, action: string, resourceId?: string) {
  const suffix = resourceId ? `${action}.${resourceId}` : action;
  return [`${project.slug}.${suffix}`, `${project.id}.${suffix}`];
}

/** Slugs and ids are stored lower-case; a grant written `MyProject.…` means the same project. */
function normalizeGrant(grant: string) {
  const dot = grant.indexOf('.');
  return dot < 0 ? grant : grant.slice(0, dot).toLowerCase() + grant.slice(dot);
}

function grantReachesProject(grant: string, project: ProjectRef) {
  const first = grant.split('.', 1)[0];
  return first === '*' || first === project.slug || first === project.id;
}

function isAdmin(subject: Subject) {
  return (subject.kind === 'session' || subject.kind === 'apiKey') && subject.account.isAdmin && subject.account.emailVerified;
}

/** What the user behind a subject may do, before any key narrows it. */
function userMay(subject: Subject, project: ProjectRef) {
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') return false;
  return isAdmin(subject) || subject.account.id === project.ownerId;
}

/** Whether the key (if any) lets its user's permission through for this action. */
function keyAllows(subject: Subject, project: ProjectRef, action: string, resourceId?: string) {
  if (subject.kind !== 'apiKey') return true;
  const { accessType, projectIds, permissions } = subject.apiKey;
  if (accessType === 'full') return true;
  if (accessType === 'projects') return projectIds.includes(project.id);
  const grants = permissions.map(normalizeGrant);
  if (action === projectActions.read) return grants.some((grant) => grantReachesProject(grant, project));
  const forms = requiredForms(project, action, resourceId);
  return grants.some((grant) => forms.some((required) => grantCovers(grant, required)));
}

export function can(subject: Subject, project: ProjectRef, action: string, resourceId?: string) {
  if (project.visibility === 'public' && publicReadActions.includes(action)) return true;
  return userMay(subject, project) && keyAllows(subject, project, action, resourceId);
}

/**
 * Throws unless `subject` may do `action`. A project the subject cannot even read answers 404,
 * so private projects do not reveal that they exist; otherwise 401 for anonymous, 403 for others.
 */
export function authorize(subject: Subject, project: ProjectRef, action: string, resourceId?: string) {
  if (can(subject, project, action, resourceId)) return;
  if (!can(subject, project, projectActions.read)) throw projectNotFound(subject);
  if (subject.kind === 'anonymous' || subject.kind === 'pending2fa') throw new Unauthenticated();
  throw new PermissionDenied(`Missing permission ${project.slug}.${action}${resourceId ? `.${resourceId}` : ''}`);
}

/**
 * Starting a pipeline run on a session the caller names, beside execute on the version: the run
 * drives the session's browser and may launch one, so it needs what starting that browser needs
 * (`sessions.write` on the session, as POST …/sessions/{id}/start), and a plan that reads cookies
 * also needs `cookies.read` on the session. (A function runs on the session its author chose, so
 * its callers need only what spec 4.6 names: read on it and execute on what it runs.)
 */
export function authorizeRunOnSession(subject: Subject, project: ProjectRef, sessionId: string, run: { readsCookies: boolean }) {
  authorize(subject, project, sessionActions.write, sessionId);
  if (run.readsCookies) authorize(subject, project, sessionActions.readCookies, sessionId);
}

/**
 * Analysis and generation jobs (server/agents/, docs/analysis-generation.md). Starting an analysis,
 * or accepting one (which starts a generation that dry-runs on the session), changes the pipeline
 * and drives the session's browser: pipelines.write on the pipeline and sessions.write on the
 * session. Stopping, rejecting, deleting, and accepting a generation (a new version) need
 * pipelines.write. Reading a job shows what the session's pages showed: pipelines.read and
 * sessions.read on its session, so a public project's readers never see them.
 */
export const agentJobRights = {
  start(subject: Subject, project: ProjectRef, pipelineId: string, sessionId: string) {
    authorize(subject, project, pipelineActions.write, pipelineId);
    authorize(subject, project, sessionActions.write, sessionId);
  },
  review(subject: Subject, project: ProjectRef, pipelineId: string) {
    authorize(subject, project, pipelineActions.write, pipelineId);
  },
  read(subject: Subject, project: ProjectRef, pipelineId: string, sessionId: string | null) {
    return can(subject, project, pipelineActions.read, pipelineId) && can(subject, project, sessionActions.read, sessionId ?? undefined);
  },
};

/**
 * What a running browser's URLs may give a caller who may read its session. `remoteUrl` is CDP:
 * whoever holds it can drive the browser and read every cookie (Storage.getCookies), so it needs
 * `sessions.write` and `cookies.read` on the session. The live view shows the screen to readers;
 * its mouse and keyboard reach the page only for callers who may write the session.
 */
export function browserUrlRights(subject: Subject, project: ProjectRef, sessionId: string) {
  const control = can(subject, project, sessionActions.write, sessionId);
  return { remote: control && can(subject, project, sessionActions.readCookies, sessionId), control };
}

/** A run's error message in place of the one withheld from a caller `canSeeRunOutputs` refuses. */
export const RUN_WITHHELD_MESSAGE = 'withheld: the run read cookies, and the message may hold them (needs cookies.read on the session)';

/** A run's log line (its message and context) in place of one withheld from such a caller. */
export const RUN_LOG_WITHHELD_MESSAGE = 'withheld: the run read cookies, and this line may hold them (needs cookies.read on the session)';

/** A browser's log line naming an address it opened or requested, in place of one withheld from a caller without cookies.read. */
export const BROWSER_LOG_WITHHELD_MESSAGE =
  'withheld: an address the browser opened or requested, which may hold its cookies (needs cookies.read on the session)';

/**
 * May a caller who sees a run also see its node outputs and result? A run whose plan reads
 * cookies holds cookie values there: only for callers who may read that session's cookies (a
 * run whose session was deleted: cookies.read on every session). Public readers never may.
 */
export function canSeeRunOutputs(subject: Subject, project: ProjectRef, run: { sessionId: string | null; readsCookies: boolean }) {
  return !run.readsCookies || can(subject, project, sessionActions.readCookies, run.sessionId ?? undefined);
}

/**
 * Which action reading a browser's recording takes (docs/browsers.md, Recordings): `sessions.read`
 * on its session, as the browser itself; and `cookies.read` there too where the browser was fed
 * cookies (the session stores some) or a run on it read them: its pages show what they unlocked.
 */
export function recordingActions(browser: { sessionHasCookies: boolean; runsReadCookies: boolean }) {
  return browser.sessionHasCookies || browser.runsReadCookies ? [sessionActions.read, sessionActions.readCookies] : [sessionActions.read];
}

/**
 * May this subject attach an API key owned by `keyOwnerId` to something (MCP client configs,
 * spec 5.11): its own keys only, global admins excepted.
 */
export function canUseApiKeyOf(subject: Subject, keyOwnerId: string) {
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') return false;
  return isAdmin(subject) || subject.account.id === keyOwnerId;
}

/**
 * Operating the service itself (GET /api/admin/hosts: every host, whoever's browsers it runs) is
 * for global admins (ADMIN_EMAILS, address verified): signed in, or with a full-access key of
 * theirs; a key narrowed to projects or grants is not a key to the whole service. 401 for
 * anonymous callers, 403 for everyone else.
 */
export function authorizeServiceOperation(subject: Subject) {
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') throw new Unauthenticated();
  if (!isAdmin(subject)) throw new PermissionDenied('Only global admins may operate the service');
  if (subject.kind === 'apiKey' && subject.apiKey.accessType !== 'full') {
    throw new PermissionDenied('Operating the service needs a full-access API key');
  }
}

/**
 * Billing (balances, transactions, usage of every project with its sessions' names, and the Stripe
 * checkout and portal pages) is the account's own: a signed-in session or a full-access key. A key
 * narrowed to projects or to grants (an MCP Link key pasted into a third-party client is one) is
 * lent to do a part of the account's work, not to read or spend its money.
 */
export function authorizeAccountBilling(subject: Subject) {
  if (subject.kind === 'apiKey' && subject.apiKey.accessType !== 'full') {
    throw new PermissionDenied('Billing is for the account itself: a signed-in session or a full-access API key');
  }
}

/**
 * May this subject see other accounts' e-mail addresses (GET /api/users)? A verified account,
 * signed in or through a full-access key. An unverified sign-up is one registration away for
 * anyone, and a narrowed key is not the account: through either, the list would be a harvest.
 */
export function canSeeUserEmails(subject: Subject) {
  if (subject.kind === 'session') return subject.account.emailVerified;
  if (subject.kind === 'apiKey') return subject.apiKey.accessType === 'full' && subject.account.emailVerified;
  return false;
}

/** May this subject create projects at all (before the e-mail check)? Narrowed keys may not. */
export function canCreateProjects(subject: Subject) {
  if (subject.kind === 'session') return true;
  if (subject.kind === 'apiKey') return subject.apiKey.accessType === 'full';
  return false;
}

/**
 * May this subject limit an API key to `project` (accessType `projects`): the projects its user
 * may use, i.e. their own, or any for a global admin (with a verified address).
 */
export function canScopeApiKeyTo(subject: Subject, project: ProjectRef) {
  return userMay(subject, project);
}

/**
 * The projects `projects.read` lets the subject see, as a filter a list query can apply in the
 * database (it must agree with `can`): public ones, plus, when `privateScope` is not null, the
 * ones its user may use (`ownerId`, unset for an admin) that its key reaches (`ids`/`slugs`,
 * unset when the key does not narrow).
 */
export type ReadableProjects = {
  privateScope: null | { ownerId?: string; ids?: string[]; slugs?: string[] };
};

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function readableProjects(subject: Subject): ReadableProjects {
  if (subject.kind !== 'session' && subject.kind !== 'apiKey') return { privateScope: null };
  const ownerId = isAdmin(subject) ? undefined : subject.account.id;
  if (subject.kind === 'session' || subject.apiKey.accessType === 'full') return { privateScope: { ownerId } };
  if (subject.apiKey.accessType === 'projects') return { privateScope: { ownerId, ids: subject.apiKey.projectIds, slugs: [] } };
  const reached = subject.apiKey.permissions.map((grant) => normalizeGrant(grant).split('.', 1)[0] ?? '');
  if (reached.includes('*')) return { privateScope: { ownerId } };
  return {
    privateScope: {
      ownerId,
      ids: reached.filter((ref) => uuidShape.test(ref)),
      slugs: reached.filter((ref) => !uuidShape.test(ref)),
    },
  };
}
