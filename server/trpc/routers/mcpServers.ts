import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { McpServer, PipelineFunction } from '../../../db/entities/index.ts';
import { BadRequest, Conflict } from '../../errors.ts';
import { announceMcpToolsChanged } from '../../mcp/buildMcpServer.ts';
import { functionActions, mcpActions } from '../../permissions/permissions.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { findInProject, listReadable } from '../../projects/projectRows.ts';
import { slugSchema } from '../../projects/slugs.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * MCP servers (spec 4.8): a named set of the project's functions, offered as tools at
 * `…/mcp-servers/{serverId}/mcp` (server/http/mcpRoutes.ts). `functionIds` replaces all
 * assignments; connected clients are told their tool list changed.
 */

const projectParam = z.string().max(100);
const idParam = z.string().max(100);
const tags = ['mcp-servers'];
const base = '/{project}/api/mcp-servers';

const fields = {
  name: z.string().trim().min(1).max(200),
  slug: slugSchema,
  description: z.string().max(10_000),
  functionIds: z.array(z.string().max(100)).max(500),
};

const functionSummary = z.object({ id: z.string(), name: z.string(), slug: z.string(), description: z.string() });
const serverView = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  /** The assigned functions, each a tool named by its slug. */
  functions: z.array(functionSummary),
  created: z.string(),
  updated: z.string(),
});

/**
 * The list view (spec 4.8). `functions` names only the assigned functions the caller may read
 * (`functions.read.<id>`): a key that may read MCP servers but not a function does not learn
 * its name or description here either (the MCP endpoint's tools/list filters the same way).
 */
function present(ctx: ProjectContext, server: McpServer) {
  return {
    id: server.id,
    name: server.name,
    slug: server.slug,
    description: server.description,
    functions: server.functions
      .getItems()
      .filter((fn) => ctx.can(functionActions.read, fn.id))
      .map((fn) => ({ id: fn.id, name: fn.name, slug: fn.slug, description: fn.description }))
      .sort((a, b) => a.slug.localeCompare(b.slug)),
    created: iso(server.created),
    updated: iso(server.updated),
  };
}

function findServer(ctx: ProjectContext, serverId: string, action: string) {
  return findInProject(ctx, McpServer, serverId, action, 'MCP server', { populate: ['functions'] });
}

/** The functions to assign: all of this project, and readable by the caller; else 400 naming each. */
async function functionsFor(ctx: ProjectContext, ids: string[]) {
  const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
  const valid = unique.filter(isUuid);
  const found = valid.length ? await ctx.em.find(PipelineFunction, { id: { $in: valid }, project: ctx.project.id }) : [];
  const usable = new Map(found.filter((fn) => ctx.can(functionActions.read, fn.id)).map((fn) => [fn.id, fn]));
  const missing = unique.filter((id) => !usable.has(id));
  if (missing.length) {
    throw new BadRequest('unknown_function', `No function of this project with id ${missing.join(', ')}`, {
      issues: missing.map((id) => ({
        path: ['functionIds', ids.findIndex((given) => given.toLowerCase() === id)],
        message: 'not a function of this project',
        code: 'unknown_function',
      })),
    });
  }
  return unique.map((id) => usable.get(id) as PipelineFunction);
}

async function slugTaken(ctx: ProjectContext, slug: string, exceptId?: string) {
  const other = await ctx.em.findOne(McpServer, { project: ctx.project.id, slug }, { fields: ['id'] });
  return !!other && other.id !== exceptId;
}

function slugConflict(slug: string) {
  return new Conflict('slug_taken', `An MCP server with slug \`${slug}\` exists in this project`);
}

async function flushUnique(ctx: ProjectContext, slug: string) {
  try {
    await ctx.em.flush();
  } catch (error) {
    // Two creates racing past the check: the unique index decides.
    if (error instanceof UniqueConstraintViolationException) throw slugConflict(slug);
    throw error;
  }
}

export const mcpServersRouter = router({
  list: projectProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'MCP servers of the project the caller may read, with their functions' } })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(serverView))
    .query(async ({ ctx, input }) => {
      const servers = await listReadable(ctx, McpServer, mcpActions.read, { page: input, populate: ['functions'] });
      return servers.map((server) => present(ctx, server));
    }),

  create: projectProcedure
    .meta({
      openapi: { method: 'PUT', path: base, tags, summary: 'Create an MCP server; `functionIds` assigns functions of this project' },
    })
    .input(
      z.strictObject({
        project: projectParam,
        name: fields.name,
        slug: fields.slug,
        description: fields.description.default(''),
        functionIds: fields.functionIds.optional(),
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(mcpActions.write);
      if (await slugTaken(ctx, input.slug)) throw slugConflict(input.slug);
      const functions = input.functionIds ? await functionsFor(ctx, input.functionIds) : [];
      const server = ctx.em.create(McpServer, {
        project: ctx.project,
        name: input.name,
        slug: input.slug,
        description: input.description,
      });
      server.functions.set(functions);
      await flushUnique(ctx, input.slug);
      return { id: server.id };
    }),

  get: projectProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{serverId}`, tags, summary: 'One MCP server (the list view shape)' } })
    .input(z.strictObject({ project: projectParam, serverId: idParam }))
    .output(serverView)
    .query(async ({ ctx, input }) => present(ctx, await findServer(ctx, input.serverId, mcpActions.read))),

  update: projectProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: `${base}/{serverId}`,
        tags,
        summary: 'Change an MCP server; `functionIds` replaces all assignments (connected clients get tools/list_changed)',
      },
    })
    .input(
      z.strictObject({
        project: projectParam,
        serverId: idParam,
        name: fields.name.optional(),
        slug: fields.slug.optional(),
        description: fields.description.optional(),
        functionIds: fields.functionIds.optional(),
      }),
    )
    .output(serverView)
    .mutation(async ({ ctx, input }) => {
      const server = await findServer(ctx, input.serverId, mcpActions.write);
      if (input.slug !== undefined && input.slug !== server.slug) {
        if (await slugTaken(ctx, input.slug, server.id)) throw slugConflict(input.slug);
        server.slug = input.slug;
      }
      if (input.name !== undefined) server.name = input.name;
      if (input.description !== undefined) server.description = input.description;
      if (input.functionIds !== undefined) server.functions.set(await functionsFor(ctx, input.functionIds));
      await flushUnique(ctx, server.slug);
      if (input.functionIds !== undefined) announceMcpToolsChanged(server.id);
      return present(ctx, server);
    }),

  delete: projectProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{serverId}`,
        tags,
        summary: 'Delete an MCP server, its function assignments and the client configs that link keys to it',
      },
    })
    .input(z.strictObject({ project: projectParam, serverId: idParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const server = await findServer(ctx, input.serverId, mcpActions.write);
      // Assignments (pivot rows) and client configs go with it (ON DELETE CASCADE).
      await ctx.em.nativeDelete(McpServer, { id: server.id });
      // Open sessions find their link gone and close.
      announceMcpToolsChanged(server.id);
      return { status: 'ok' as const };
    }),
});
