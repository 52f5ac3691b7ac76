import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { BrowserSession, SessionResource } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { browserDialUrl } from '../browsers/cdp/browserDial.ts';
import { CdpClient } from '../browsers/cdp/cdpClient.ts';
import { startBrowser } from '../browsers/sessions/browserSessions.ts';
import { presentResource } from '../browsers/sessions/resourceView.ts';
import { cookiesSchema } from '../browsers/sessions/sessionCookies.ts';
import type { Config } from '../config.ts';
import { Conflict, invalidInput, NotFound, ServiceUnavailable, Unauthenticated } from '../errors.ts';
import { defaultSessionName } from '../projects/defaultSession.ts';
import { findProject } from '../projects/projectRepository.ts';
import { jsonAnswer } from './rawAnswers.ts';
import { appDeps, rawRouteGroup, routesOf, sameSecret } from './rawRoute.ts';

/**
 * External sessions (spec 4.10): a browser running elsewhere joins a project as a session
 * resource, taken over its CDP URL by a browser host (`connectExternal`,
 * server/browsers/host/chromium/chromiumProcess.ts), so runs, analyses, the live view and the CDP proxy
 * use it like any other; its cookies can be
 * captured into the session. The caller is a system with `EXTERNAL_TOKEN` (Bearer, or `token`
 * in the query), not a user: it names the project.
 */

const registration = z.strictObject({
  project: z.string().min(1).max(100),
  /** The session the browser joins; the project's Default session when left out. */
  session: z.uuid().optional(),
  cdpUrl: z
    .url()
    .max(1000)
    .refine((url) => /^(wss?|https?):\/\//i.test(url), 'a ws://, wss://, http:// or https:// URL of the browser’s DevTools endpoint'),
});

const CAPTURE_CONNECT_MS = 5_000;

const tokenParameters = [
  { name: 'Authorization', in: 'header' as const, schema: { type: 'string' as const }, description: 'Bearer EXTERNAL_TOKEN' },
  { name: 'token', in: 'query' as const, schema: { type: 'string' as const }, description: 'EXTERNAL_TOKEN, instead of the header' },
];

/** Unset token: the routes do not exist (false, 404 sent). A wrong or missing one: 401. */
function admitted(config: Config, req: FastifyRequest, reply: FastifyReply) {
  if (!config.externalToken) {
    reply.callNotFound();
    return false;
  }
  const header = req.headers.authorization;
  const given = header?.startsWith('Bearer ') ? header.slice(7).trim() : (req.query as { token?: unknown }).token;
  if (!sameSecret(given, config.externalToken)) throw new Unauthenticated('The external-session token is missing or wrong');
  return true;
}

const route = routesOf<AppDeps>();

export const externalSessionRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'PUT',
    path: '/api/external-session',
    doc: {
      operationId: 'external-sessions-create',
      summary: 'Register a browser running elsewhere, by its CDP URL, as a running resource of a project’s session',
      tags: ['system'],
      parameters: tokenParameters,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['project', 'cdpUrl'],
              additionalProperties: false,
              properties: {
                project: { type: 'string', description: 'Slug or id' },
                session: { type: 'string', format: 'uuid', description: 'Default: the project’s Default session' },
                cdpUrl: { type: 'string', description: 'ws://…/devtools/browser/… or the http:// DevTools address' },
              },
            },
          },
        },
      },
      responses: {
        ...jsonAnswer('The resource, as GET …/sessions/{sessionId}/{resourceId} shows it, with `project`'),
        '401': { description: 'The token is missing or wrong' },
        '404': { description: 'EXTERNAL_TOKEN is unset, or no such project or session' },
        '503': { description: 'The browser could not be reached' },
      },
    },
    serve: (deps) => async (req, reply) => {
      if (!admitted(deps.config, req, reply)) return reply;
      const parsed = registration.safeParse(req.body ?? {});
      if (!parsed.success) throw invalidInput(parsed.error);
      const em = deps.orm.em.fork();
      const project = await findProject(deps.access, em, parsed.data.project);
      if (!project) throw new NotFound(`Project ${parsed.data.project}`);
      const session = parsed.data.session
        ? await em.findOne(BrowserSession, { id: parsed.data.session, project })
        : await em.findOne(BrowserSession, { project, name: defaultSessionName });
      if (!session) throw new NotFound('Session');
      const resource = await startBrowser(deps, em, project, session, { cdpUrl: parsed.data.cdpUrl });
      return reply.send({ project: project.id, ...(await presentResource(deps, project, resource, { withUrls: false })) });
    },
  }),
  route({
    method: 'POST',
    path: '/api/external-session/{id}/capture',
    doc: {
      operationId: 'external-sessions-capture',
      summary: 'Copy the external browser’s cookies into its session (answers how many; the values stay secret)',
      tags: ['system'],
      parameters: tokenParameters,
      responses: {
        ...jsonAnswer('{session, resource, cookies: <count>}', {
          type: 'object',
          properties: { session: { type: 'string' }, resource: { type: 'string' }, cookies: { type: 'integer' } },
          required: ['session', 'resource', 'cookies'],
        }),
        '404': { description: 'EXTERNAL_TOKEN is unset, or no such external resource' },
        '409': { description: 'The external browser is not connected' },
      },
    },
    serve: (deps) => async (req, reply) => {
      if (!admitted(deps.config, req, reply)) return reply;
      const em = deps.orm.em.fork();
      const id = req.params.id.toLowerCase();
      const resource = z.uuid().safeParse(id).success
        ? await em.findOne(SessionResource, { id, externalCdpUrl: { $ne: null } }, { populate: ['session'] })
        : null;
      if (!resource) throw new NotFound('External session');
      if (resource.status !== 'running' || !resource.cdpEndpoint) {
        throw new Conflict('browser_not_running', 'The external browser is not connected');
      }
      let cookies: unknown[];
      try {
        // Its own CDP URL: an external browser is behind no host's relay (browserDialUrl).
        const cdp = await CdpClient.connect(await browserDialUrl(deps, em, resource), CAPTURE_CONNECT_MS);
        try {
          cookies = (await cdp.send<{ cookies: unknown[] }>('Storage.getCookies')).cookies;
        } finally {
          cdp.close();
        }
      } catch (error) {
        throw new ServiceUnavailable('The external browser did not answer', error);
      }
      const stored = cookiesSchema.safeParse(cookies);
      if (!stored.success) throw new Conflict('too_many_cookies', 'The browser holds more cookies than a session keeps');
      const session = resource.session as BrowserSession;
      session.cookies = stored.data;
      await em.flush();
      // The values are secrets: the answer counts them, GET …/sessions/{id} shows them to cookies.read.
      return reply.send({ session: session.id, resource: resource.id, cookies: stored.data.length });
    },
  }),
]);
