import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BrowserSession, SessionResource } from '../../../db/entities/index.ts';
import {
  defaultFingerprintMode,
  defaultLocale,
  defaultTimezone,
  fingerprintModeSchema,
  localeSchema,
  timezoneSchema,
} from '../../browsers/launch/fingerprint.ts';
import { defaultBrowserImage } from '../../browsers/launch/images.ts';
import { checkImage, defaultScreen, maxLaunchArgsLength, parseLaunchArgs, screenSchema } from '../../browsers/launch/launchSettings.ts';
import { presentProxyEndpoint, proxyEndpointView, sessionProxySchema } from '../../browsers/proxies/sessionProxies.ts';
import { chooseSessionProxy } from '../../browsers/proxies/sessionProxyChoice.ts';
import { waitUntilStopped } from '../../browsers/sessions/browserSessions.ts';
import { activeResourceStatuses, inUseResourceStatuses } from '../../browsers/sessions/resourceStatus.ts';
import { presentResource, resourceView } from '../../browsers/sessions/resourceView.ts';
import { cookiesSchema, cookieView } from '../../browsers/sessions/sessionCookies.ts';
import { deleteSessionProfile } from '../../browsers/sessions/sessionProfiles.ts';
import { Conflict } from '../../errors.ts';
import { sessionActions } from '../../permissions/permissions.ts';
import { findInProject, listReadable } from '../../projects/projectRows.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * Sessions CRUD (spec 4.4). A session is a browser definition; starting it (the browser half,
 * elsewhere) creates resources. Every check goes to the permission module, per session id.
 */

/** How long a delete waits for the session's stopping browsers to finish stopping. */
const STOPPING_WAIT_MS = 15_000;

const projectParam = z.string().max(100);
const sessionIdParam = z.string().max(100);

const sessionFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000),
  screen: screenSchema,
  args: z.string().max(maxLaunchArgsLength),
  image: z.string().trim().min(1).max(100),
  cookies: cookiesSchema,
  /** Inline proxy; null removes it. */
  proxy: sessionProxySchema.nullable(),
  /** A stored proxy of the project (or a dynamic one with an id, copied inline); null removes it. */
  proxyId: z.string().trim().min(1, 'a proxy id; null removes the proxy').max(100).nullable(),
  /** Keep the browser's profile (cookies, localStorage, IndexedDB, service workers) across starts. */
  persist: z.boolean(),
  /** BCP 47 tag: navigator.languages, Accept-Language and Intl of the session's browser. */
  locale: localeSchema,
  /** IANA time zone name of the session's browser. */
  timezone: timezoneSchema,
  /** `desktop`: a browser sites do not flag; `automation`: Chromium's honest headless defaults. */
  fingerprint: fingerprintModeSchema,
  /** Record every page of its browsers with rrweb (docs/browsers.md, Recordings). */
  record: z.boolean(),
};

const managerView = z.object({
  runningResources: z.number().int(),
  lastStarted: z.string().nullable(),
});

const sessionView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  image: z.string(),
  args: z.string(),
  screen: z.object({ width: z.number().int(), height: z.number().int() }),
  status: z.enum(['idle', 'running']),
  proxy: proxyEndpointView.nullable(),
  proxyId: z.string().nullable(),
  persist: z.boolean(),
  locale: z.string(),
  timezone: z.string(),
  fingerprint: fingerprintModeSchema,
  manager: managerView,
  record: z.boolean(),
  created: z.string(),
  updated: z.string(),
});

/** The output schema is the guard: cookies and resources appear only when the router adds them. */
const sessionDetailView = sessionView.extend({
  cookies: z.array(cookieView).optional(),
  resources: z.array(resourceView).optional(),
});

type ResourceStats = { runningResources: number; lastStarted: string | null };

/** Running resources and last start per session, in one query for a page of sessions. */
async function resourceStats(em: EntityManager, sessionIds: string[]) {
  const stats = new Map<string, ResourceStats>();
  if (sessionIds.length === 0) return stats;
  const rows = await em.getConnection().execute<{ session_id: string; running: number; last_started: Date | string | null }[]>(
    `select session_id, count(*) filter (where status in (${inUseResourceStatuses.map(() => '?').join(', ')}))::int as running,
            max(started_at) as last_started
       from session_resources where session_id in (${sessionIds.map(() => '?').join(', ')}) group by session_id`,
    [...inUseResourceStatuses, ...sessionIds],
    'all',
  );
  for (const row of rows) {
    stats.set(row.session_id, {
      runningResources: Number(row.running),
      lastStarted: row.last_started ? new Date(row.last_started).toISOString() : null,
    });
  }
  return stats;
}

function present(session: BrowserSession, stats: ResourceStats | undefined) {
  const manager = stats ?? { runningResources: 0, lastStarted: null };
  return {
    id: session.id,
    name: session.name,
    description: session.description,
    image: session.image,
    args: session.args,
    screen: { width: session.screen.width, height: session.screen.height },
    status: manager.runningResources > 0 ? ('running' as const) : ('idle' as const),
    proxy: session.proxy ? presentProxyEndpoint(session.proxy) : null,
    proxyId: session.storedProxy?.id ?? null,
    persist: session.persist,
    locale: session.locale,
    timezone: session.timezone,
    fingerprint: session.fingerprint === 'automation' ? ('automation' as const) : ('desktop' as const),
    manager,
    record: session.record,
    created: iso(session.created),
    updated: iso(session.updated),
  };
}

/** Authorises first (so a missing id and a forbidden one look alike), then loads. */
function findSession(ctx: ProjectContext, sessionId: string, action: string) {
  return findInProject(ctx, BrowserSession, sessionId, action, 'Session');
}

async function presentDetail(ctx: ProjectContext, session: BrowserSession) {
  const [stats, resources] = await Promise.all([
    resourceStats(ctx.em, [session.id]),
    ctx.em.find(
      SessionResource,
      { session: session.id, status: { $in: [...activeResourceStatuses] } },
      { orderBy: { created: 'asc', id: 'asc' } },
    ),
  ]);
  const detail: z.input<typeof sessionDetailView> = present(session, stats.get(session.id));
  // Reaching here took `sessions.read` on this id, which is what reading its resources needs.
  if (ctx.can(sessionActions.read, session.id)) {
    detail.resources = await Promise.all(
      resources.map((resource) => presentResource(ctx.deps, ctx.project, resource, { withUrls: true, subject: ctx.subject })),
    );
  }
  if (ctx.can(sessionActions.readCookies, session.id)) detail.cookies = session.cookies;
  return detail;
}

function checkLaunchFields(fields: { args?: string; image?: string }) {
  if (fields.args !== undefined) parseLaunchArgs(fields.args);
  if (fields.image !== undefined) checkImage(fields.image);
}

const tags = ['sessions'];

export const sessionsRouter = router({
  list: projectProcedure
    .meta({ openapi: { method: 'GET', path: '/{project}/api/sessions', tags, summary: 'Sessions of the project the caller may read' } })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(sessionView))
    .query(async ({ ctx, input }) => {
      const sessions = await listReadable(ctx, BrowserSession, sessionActions.read, { page: input });
      const stats = await resourceStats(
        ctx.em,
        sessions.map((session) => session.id),
      );
      return sessions.map((session) => present(session, stats.get(session.id)));
    }),

  create: projectProcedure
    .meta({ openapi: { method: 'PUT', path: '/{project}/api/sessions', tags, summary: 'Create a session; answers its id' } })
    .input(
      z.strictObject({
        project: projectParam,
        name: sessionFields.name,
        description: sessionFields.description.default(''),
        screen: sessionFields.screen.default(() => ({ ...defaultScreen })),
        args: sessionFields.args.default(''),
        image: sessionFields.image.default(defaultBrowserImage),
        cookies: sessionFields.cookies.default(() => []),
        proxy: sessionFields.proxy.optional(),
        proxyId: sessionFields.proxyId.optional(),
        persist: sessionFields.persist.default(false),
        locale: sessionFields.locale.default(defaultLocale),
        timezone: sessionFields.timezone.default(defaultTimezone),
        fingerprint: sessionFields.fingerprint.default(defaultFingerprintMode),
        record: sessionFields.record.default(false),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(sessionActions.write);
      checkLaunchFields(input);
      const proxy = await chooseSessionProxy(ctx.deps, ctx.em, ctx, input);
      const session = ctx.em.create(BrowserSession, {
        project: ctx.project,
        name: input.name,
        description: input.description,
        image: input.image,
        args: input.args.trim(),
        screen: input.screen,
        cookies: input.cookies,
        proxy: proxy.proxy ?? null,
        storedProxy: proxy.storedProxy ?? null,
        persist: input.persist,
        locale: input.locale,
        timezone: input.timezone,
        fingerprint: input.fingerprint,
        record: input.record,
      });
      await ctx.em.flush();
      return { id: session.id };
    }),

  get: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/sessions/{sessionId}',
        tags,
        summary: 'One session; cookies with cookies.read, running resources with their URLs',
      },
    })
    .input(z.strictObject({ project: projectParam, sessionId: sessionIdParam }))
    .output(sessionDetailView)
    .query(async ({ ctx, input }) => presentDetail(ctx, await findSession(ctx, input.sessionId, sessionActions.read))),

  update: projectProcedure
    .meta({ openapi: { method: 'PATCH', path: '/{project}/api/sessions/{sessionId}', tags, summary: 'Change a session' } })
    .input(
      z.strictObject({
        project: projectParam,
        sessionId: sessionIdParam,
        name: sessionFields.name.optional(),
        description: sessionFields.description.optional(),
        screen: sessionFields.screen.optional(),
        args: sessionFields.args.optional(),
        image: sessionFields.image.optional(),
        cookies: sessionFields.cookies.optional(),
        proxy: sessionFields.proxy.optional(),
        proxyId: sessionFields.proxyId.optional(),
        persist: sessionFields.persist.optional(),
        locale: sessionFields.locale.optional(),
        timezone: sessionFields.timezone.optional(),
        fingerprint: sessionFields.fingerprint.optional(),
        record: sessionFields.record.optional(),
      }),
    )
    .output(sessionDetailView)
    .mutation(async ({ ctx, input }) => {
      const session = await findSession(ctx, input.sessionId, sessionActions.write);
      checkLaunchFields(input);
      const proxy = await chooseSessionProxy(ctx.deps, ctx.em, ctx, input);
      // Field by field: the body is never assigned wholesale.
      if (input.name !== undefined) session.name = input.name;
      if (input.description !== undefined) session.description = input.description;
      if (input.screen !== undefined) session.screen = input.screen;
      if (input.args !== undefined) session.args = input.args.trim();
      if (input.image !== undefined) session.image = input.image;
      if (input.cookies !== undefined) session.cookies = input.cookies;
      if (proxy.proxy !== undefined) session.proxy = proxy.proxy;
      if (proxy.storedProxy !== undefined) session.storedProxy = proxy.storedProxy;
      const forgetsProfile = input.persist === false && session.persist;
      if (input.persist !== undefined) session.persist = input.persist;
      if (input.locale !== undefined) session.locale = input.locale;
      if (input.timezone !== undefined) session.timezone = input.timezone;
      if (input.fingerprint !== undefined) session.fingerprint = input.fingerprint;
      if (input.record !== undefined) session.record = input.record;
      await ctx.em.flush();
      // Turned off: the saved profile is forgotten (a browser running now saves nothing at its stop).
      if (forgetsProfile) await deleteSessionProfile(ctx.deps.orm, session.id);
      // Changes apply at the next start; a running browser keeps what it was launched with.
      return presentDetail(ctx, session);
    }),

  delete: projectProcedure
    .meta({ openapi: { method: 'DELETE', path: '/{project}/api/sessions/{sessionId}', tags, summary: 'Delete a session' } })
    .input(z.strictObject({ project: projectParam, sessionId: sessionIdParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const session = await findSession(ctx, input.sessionId, sessionActions.write);
      // Removing the row would cascade to resources whose browsers still run, leaving them
      // unaccounted for (a stopping browser holds its place on its host until it has stopped); the
      // caller stops them first. A stop answers before the teardown ends, so a delete right after
      // one waits for it.
      const active = () => ctx.em.find(SessionResource, { session: session.id, status: { $in: [...activeResourceStatuses] } });
      let held = await active();
      const stopping = held.filter((resource) => resource.status === 'stopping');
      if (stopping.length === held.length && stopping.length) {
        await waitUntilStopped(ctx.deps, stopping, STOPPING_WAIT_MS);
        held = await active();
      }
      if (held.length > 0) {
        throw new Conflict('session_running', `The session has ${held.length} running browser(s); stop them before deleting it`);
      }
      await ctx.em.nativeDelete(BrowserSession, { id: session.id });
      // Its saved profile goes with it (sessionProfiles.ts).
      await deleteSessionProfile(ctx.deps.orm, session.id);
      return { status: 'ok' as const };
    }),
});
