import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod';
import { ApiKey, McpClientConfig, McpServer } from '../../../db/entities/index.ts';
import { BadRequest, Conflict } from '../../errors.ts';
import { announceMcpToolsChanged } from '../../mcp/buildMcpServer.ts';
import { canUseApiKeyOf, mcpActions } from '../../permissions/permissions.ts';
import { isUuid } from '../../projects/projectRepository.ts';
import { findChild, findInProject, listReadable } from '../../projects/projectRows.ts';
import { iso, pagination, statusOk } from '../../wireShapes.ts';
import { type ProjectContext, projectProcedure, router } from '../base.ts';

/**
 * MCP client configs (spec 4.8, 5.11): each links one API key to one MCP server of the project;
 * only linked keys may use that server's MCP endpoint. The key must be the caller's own (global
 * admins excepted). Deleting a config severs the key's access at once: the endpoint checks the
 * link on every request and closes open sessions of that key.
 */

const projectParam = z.string().max(100);
const idParam = z.string().max(100);
const tags = ['mcp-client-configs'];
const base = '/{project}/api/mcp-client-configs';

const fields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000),
  mcpServerId: z.string().max(100),
  apiKeyId: z.string().max(100),
};

/** The detail view: exactly the spec's fields (5.11: nothing beyond them is shown). */
const configView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  mcpServerId: z.string(),
  apiKeyId: z.string(),
});

/** The list view adds the linked server and a summary of the key (never its secret). */
const configListView = configView.extend({
  mcpServer: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
  apiKey: z.object({ id: z.string(), name: z.string(), keyPrefix: z.string() }),
  created: z.string(),
  updated: z.string(),
});

function present(config: McpClientConfig) {
  return {
    id: config.id,
    name: config.name,
    description: config.description,
    mcpServerId: config.mcpServer.id,
    apiKeyId: config.apiKey.id,
  };
}

function presentListed(config: McpClientConfig) {
  return {
    ...present(config),
    mcpServer: { id: config.mcpServer.id, name: config.mcpServer.name, slug: config.mcpServer.slug },
    apiKey: { id: config.apiKey.id, name: config.apiKey.name, keyPrefix: config.apiKey.keyPrefix },
    created: iso(config.created),
    updated: iso(config.updated),
  };
}

function findConfig(ctx: ProjectContext, configId: string, action: string) {
  return findInProject(ctx, McpClientConfig, configId, action, 'MCP client config');
}

/** 5.11: a server of this project (that the caller may read). */
async function serverFor(ctx: ProjectContext, serverId: string) {
  const server = await findChild(ctx.em, McpServer, serverId, { project: ctx.project.id });
  if (!server || !ctx.can(mcpActions.read, server.id)) {
    throw new BadRequest('invalid_mcp_server', 'mcpServerId must name an MCP server of this project', {
      issues: [{ path: ['mcpServerId'], message: 'not an MCP server of this project', code: 'invalid_mcp_server' }],
    });
  }
  return server;
}

/** 5.11: an API key of the current user (global admins may link anyone's). */
async function apiKeyFor(ctx: ProjectContext, apiKeyId: string) {
  const id = apiKeyId.toLowerCase();
  const key = isUuid(id) ? await ctx.em.findOne(ApiKey, { id }) : null;
  // Someone else's key and a missing one answer alike: key ids of other users are not confirmed.
  if (!key || !canUseApiKeyOf(ctx.subject, key.user.id)) {
    throw new BadRequest('invalid_api_key', 'apiKeyId must name one of your API keys', {
      issues: [{ path: ['apiKeyId'], message: 'not an API key of the current user', code: 'invalid_api_key' }],
    });
  }
  return key;
}

async function nameTaken(ctx: ProjectContext, name: string, exceptId?: string) {
  const other = await ctx.em.findOne(McpClientConfig, { project: ctx.project.id, name }, { fields: ['id'] });
  return !!other && other.id !== exceptId;
}

function nameConflict(name: string) {
  return new Conflict('name_taken', `An MCP client config named \`${name}\` exists in this project`);
}

async function flushUnique(ctx: ProjectContext, name: string) {
  try {
    await ctx.em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw nameConflict(name);
    throw error;
  }
}

export const mcpClientConfigsRouter = router({
  list: projectProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: 'MCP client configs with their linked servers and API keys' } })
    .input(z.strictObject({ project: projectParam, ...pagination }))
    .output(z.array(configListView))
    .query(async ({ ctx, input }) => {
      const configs = await listReadable(ctx, McpClientConfig, mcpActions.readConfigs, {
        page: input,
        populate: ['mcpServer', 'apiKey'],
      });
      return configs.map(presentListed);
    }),

  create: projectProcedure
    .meta({
      openapi: { method: 'PUT', path: base, tags, summary: 'Link one of your API keys to an MCP server of this project' },
    })
    .input(
      z.strictObject({
        project: projectParam,
        name: fields.name,
        description: fields.description.default(''),
        mcpServerId: fields.mcpServerId,
        apiKeyId: fields.apiKeyId,
      }),
    )
    .output(z.object({ id: z.string() }))
    .mutation(async ({ ctx, input }) => {
      ctx.authorize(mcpActions.writeConfigs);
      if (await nameTaken(ctx, input.name)) throw nameConflict(input.name);
      const server = await serverFor(ctx, input.mcpServerId);
      const apiKey = await apiKeyFor(ctx, input.apiKeyId);
      const config = ctx.em.create(McpClientConfig, {
        project: ctx.project,
        name: input.name,
        description: input.description,
        mcpServer: server,
        apiKey,
      });
      await flushUnique(ctx, input.name);
      return { id: config.id };
    }),

  get: projectProcedure
    .meta({ openapi: { method: 'GET', path: `${base}/{configId}`, tags, summary: 'One MCP client config' } })
    .input(z.strictObject({ project: projectParam, configId: idParam }))
    .output(configView)
    .query(async ({ ctx, input }) => present(await findConfig(ctx, input.configId, mcpActions.readConfigs))),

  update: projectProcedure
    .meta({ openapi: { method: 'PATCH', path: `${base}/{configId}`, tags, summary: 'Change an MCP client config (same rules as create)' } })
    .input(
      z.strictObject({
        project: projectParam,
        configId: idParam,
        name: fields.name.optional(),
        description: fields.description.optional(),
        mcpServerId: fields.mcpServerId.optional(),
        apiKeyId: fields.apiKeyId.optional(),
      }),
    )
    .output(configView)
    .mutation(async ({ ctx, input }) => {
      const config = await findConfig(ctx, input.configId, mcpActions.writeConfigs);
      const previousServer = config.mcpServer.id;
      if (input.name !== undefined && input.name !== config.name) {
        if (await nameTaken(ctx, input.name, config.id)) throw nameConflict(input.name);
        config.name = input.name;
      }
      if (input.description !== undefined) config.description = input.description;
      if (input.mcpServerId !== undefined) config.mcpServer = await serverFor(ctx, input.mcpServerId);
      if (input.apiKeyId !== undefined) config.apiKey = await apiKeyFor(ctx, input.apiKeyId);
      await flushUnique(ctx, config.name);
      // A key moved off a server loses its open sessions there.
      announceMcpToolsChanged(previousServer);
      return present(config);
    }),

  delete: projectProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${base}/{configId}`,
        tags,
        summary: "Delete an MCP client config: severs that key's access to the server",
      },
    })
    .input(z.strictObject({ project: projectParam, configId: idParam }))
    .output(statusOk)
    .mutation(async ({ ctx, input }) => {
      const config = await findConfig(ctx, input.configId, mcpActions.writeConfigs);
      await ctx.em.nativeDelete(McpClientConfig, { id: config.id });
      // Open sessions of that key on that server close now (the endpoint re-checks links).
      announceMcpToolsChanged(config.mcpServer.id);
      return { status: 'ok' as const };
    }),
});
