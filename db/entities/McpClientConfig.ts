import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { ApiKey } from './ApiKey.ts';
import { created, id, updated } from './common.ts';
import { McpServer } from './McpServer.ts';
import { Project } from './Project.ts';

/** Links an API key to an MCP server: that key may use that server's endpoint. */
export const McpClientConfig = defineEntity({
  name: 'McpClientConfig',
  tableName: 'mcp_client_configs',
  uniques: [{ properties: ['project', 'name'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().default(''),
    mcpServer: () => p.manyToOne(McpServer).deleteRule('cascade').index(),
    apiKey: () => p.manyToOne(ApiKey).deleteRule('cascade').index(),
    created: created(),
    updated: updated(),
  },
});

export type McpClientConfig = InferEntity<typeof McpClientConfig>;
