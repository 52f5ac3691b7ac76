import { z } from 'zod';
import { StoredProxy } from '../../../db/entities/index.ts';
import { sealProxyPassword } from '../../browsers/proxies/proxyPasswords.ts';
import { type DynamicProxy, proxyProviderFor } from '../../browsers/proxies/proxyProviders.ts';
import {
  proxyHostnameSchema,
  proxyPasswordSchema,
  proxyPortSchema,
  proxyProtocolSchema,
  proxyUsernameSchema,
  refineSocks5Credentials,
  socks5CredentialsField,
  socks5CredentialsMessage,
} from '../../browsers/proxies/sessionProxies.ts';
import { BadRequest, NotFound } from '../../errors.ts';
import { proxyActions } from '../../permissions/permissions.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { findInProject, listReadable } from '../../projects/projectRows.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * Proxies (spec 4.7): records of the project (`source: db`) and, in the list, the dynamic ones
 * a provider offers. A password is written (sealed, server/browsers/proxies/proxyPasswords.ts), opened
 * only at launch, and never answered or logged: responses say `hasPassword` instead.
 */

const projectParam = z.string().max(100);
const proxyIdParam = z.string().max(100);

const maxMetadataBytes = 16 * 1024;
const metadataSchema = z
  .record(z.string(), z.unknown())
  .refine((metadata) => JSON.stringify(metadata).length <= maxMetadataBytes, `at most ${maxMetadataBytes} bytes of JSON`);

/** Optional display name; empty means none. */
const nameSchema = z
  .string()
  .trim()
  .max(200)
  .nullable()
  .transform((name) => (name ? name : null));

const proxyView = z.object({
  id: z.string().optional(),
  name: z.string().nullable(),
  hostname: z.string(),
  port: z.number().int(),
  protocol: z.string(),
  username: z.string().nullable(),
  hasPassword: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  /** `db`: a record of the project; `dynamic`: offered by the configured provider. */
  source: z.enum(['db', 'dynamic']),
  created: z.string().optional(),
  updated: z.string().optional(),
});

function presentStored(proxy: StoredProxy) {
  return {
    id: proxy.id,
    name: proxy.name ?? null,
    hostname: proxy.hostname,
    port: proxy.port,
    protocol: proxy.protocol,
    username: proxy.username ?? null,
    hasPassword: proxy.password != null,
    metadata: proxy.metadata,
    source: 'db' as const,
    created: iso(proxy.created),
    updated: iso(proxy.updated),
  };
}

function presentDynamic(proxy: DynamicProxy) {
  return {
    ...(proxy.id ? { id: proxy.id } : {}),
    name: proxy.name ?? null,
    hostname: proxy.hostname,
    port: proxy.port,
    protocol: proxy.protocol,
    username: proxy.username,
    hasPassword: proxy.password !== null,
    metadata: proxy.metadata,
    source: 'dynamic' as const,
  };
}

function dynamicProxies(ctx: ProjectContext) {
  const userId = ctx.subject.kind === 'session' || ctx.subject.kind === 'apiKey' ? ctx.subject.user.id : null;
  return proxyProviderFor(ctx.deps.config).listDynamicProxies({ userId, projectId: ctx.project.id });
}

function findStored(ctx: ProjectContext, proxyId: string, action: string) {
  return findInProject(ctx, StoredProxy, proxyId, action, 'Proxy');
}

const tags = ['proxies'];

export const proxiesRouter = router({
  list: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/proxies',
        tags,
        summary: 'Proxies: `source=db` for the stored ones only; otherwise the provider’s dynamic ones follow',
      },
    })
    .input(z.strictObject({ project: projectParam, source: z.enum(['db']).optional(), ...pagination }))
    .output(z.array(proxyView))
    .query(async ({ ctx, input }) => {
      // The stored ones the caller may read (grants for single proxies work too), then the
      // provider's: the page is cut from the two together.
      const stored = (await listReadable(ctx, StoredProxy, proxyActions.read)).map(presentStored);
      const dynamic = input.source !== 'db' && ctx.can(proxyActions.read) ? (await dynamicProxies(ctx)).map(presentDynamic) : [];
      return [...stored, ...dynamic].slice(input.offset, input.offset + input.limit);
    }),

  create: projectProcedure
    .meta({ openapi: { method: 'POST', path: '/{project}/api/proxies', tags, summary: 'Store a proxy; answers the created record' } })
    .input(
      z
        .strictObject({
          project: projectParam,
          name: nameSchema.optional(),
          hostname: proxyHostnameSchema,
          port: proxyPortSchema,
          protocol: proxyProtocolSchema,
          username: proxyUsernameSchema.optional(),
          password: proxyPasswordSchema.optional(),
          metadata: metadataSchema.optional(),
        })
        .superRefine(refineSocks5Credentials),
    )
    .output(proxyView)
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(proxyActions.write);
      const proxy = ctx.em.create(StoredProxy, {
        project: ctx.project,
        name: input.name ?? null,
        hostname: input.hostname,
        port: input.port,
        protocol: input.protocol,
        username: input.username ?? null,
        password: sealProxyPassword(ctx.deps.serviceSecret, input.password ?? null),
        metadata: input.metadata ?? {},
      });
      await ctx.em.flush();
      return presentStored(proxy);
    }),

  get: projectProcedure
    .meta({ openapi: { method: 'GET', path: '/{project}/api/proxies/{proxyId}', tags, summary: 'One proxy (404 when missing)' } })
    .input(z.strictObject({ project: projectParam, proxyId: proxyIdParam }))
    .output(proxyView)
    .query(async ({ ctx, input }) => {
      if (isUuid(input.proxyId)) {
        const id = input.proxyId.toLowerCase();
        ctx.authorize(proxyActions.read, id);
        const stored = await ctx.em.findOne(StoredProxy, { id, project: ctx.project.id });
        if (stored) return presentStored(stored);
      }
      // A dynamic proxy with an id can be looked up too; they come with the general read grant.
      if (ctx.can(proxyActions.read)) {
        const dynamic = (await dynamicProxies(ctx)).find((proxy) => proxy.id === input.proxyId);
        if (dynamic) return presentDynamic(dynamic);
      }
      // A UUID id was authorised above; any other id could only name a dynamic proxy, so a missing
      // one is not found, whatever the grants (as in findStored).
      throw new NotFound('Proxy');
    }),

  update: projectProcedure
    .meta({ openapi: { method: 'PATCH', path: '/{project}/api/proxies/{proxyId}', tags, summary: 'Change a stored proxy' } })
    .input(
      z.strictObject({
        project: projectParam,
        proxyId: proxyIdParam,
        name: nameSchema.optional(),
        hostname: proxyHostnameSchema.optional(),
        port: proxyPortSchema.optional(),
        protocol: proxyProtocolSchema.optional(),
        username: proxyUsernameSchema.optional(),
        password: proxyPasswordSchema.optional(),
        metadata: metadataSchema.optional(),
      }),
    )
    .output(proxyView)
    .mutation(async ({ ctx, input }) => {
      const proxy = await findStored(ctx, input.proxyId, proxyActions.write);
      const unusable = socks5CredentialsField({
        protocol: input.protocol ?? proxy.protocol,
        username: input.username !== undefined ? input.username : proxy.username,
        password: input.password !== undefined ? input.password : proxy.password,
      });
      if (unusable) {
        // Name the field this request sent: the new credentials, or the switch to socks5.
        const field = input[unusable] !== undefined ? unusable : input.protocol !== undefined ? 'protocol' : unusable;
        throw new BadRequest('invalid_input', socks5CredentialsMessage, { issues: [{ path: [field], message: socks5CredentialsMessage }] });
      }
      if (input.name !== undefined) proxy.name = input.name;
      if (input.hostname !== undefined) proxy.hostname = input.hostname;
      if (input.port !== undefined) proxy.port = input.port;
      if (input.protocol !== undefined) proxy.protocol = input.protocol;
      if (input.username !== undefined) proxy.username = input.username;
      if (input.password !== undefined) proxy.password = sealProxyPassword(ctx.deps.serviceSecret, input.password);
      if (input.metadata !== undefined) proxy.metadata = input.metadata;
      await ctx.em.flush();
      return presentStored(proxy);
    }),

  delete: projectProcedure
    .meta({ openapi: { method: 'DELETE', path: '/{project}/api/proxies/{proxyId}', tags, summary: 'Delete a stored proxy permanently' } })
    .input(z.strictObject({ project: projectParam, proxyId: proxyIdParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const proxy = await findStored(ctx, input.proxyId, proxyActions.write);
      // Sessions that named it lose the reference (ON DELETE SET NULL) and start without a proxy.
      await ctx.em.nativeDelete(StoredProxy, { id: proxy.id });
      return { status: 'ok' as const };
    }),
});
