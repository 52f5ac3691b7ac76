import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { PipelineFunction } from './PipelineFunction.ts';
import { Project } from './Project.ts';

/** An MCP server: a set of the project's functions offered as tools to MCP clients. */
export const McpServer = defineEntity({
  name: 'McpServer',
  tableName: 'mcp_servers',
  uniques: [{ properties: ['project', 'slug'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200),
    slug: p.string().length(64),
    description: p.text().default(''),
    functions: () => p.manyToMany(PipelineFunction).pivotTable('mcp_server_functions'),
    created: created(),
    updated: updated(),
  },
});

export type McpServer = InferEntity<typeof McpServer>;
