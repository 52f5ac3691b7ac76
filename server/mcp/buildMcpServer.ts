import { EventEmitter } from 'node:events';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { FunctionVersion, McpServer, type PipelineFunction, Project } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import { asDomainError, type ErrorCode, type ErrorIssue, errorBody } from '../errors.ts';
import { executeFunction } from '../functions/execute.ts';
import { optionalParameters } from '../functions/functionVersions.ts';
import { functionInputJsonSchema, functionOutputJsonSchema } from '../functions/schemas.ts';
import { can, functionActions, projectRef } from '../permissions/permissions.ts';
import type { Plan } from '../pipelines/engine/plan.ts';
import { mcpAuthOf } from './mcpAuth.ts';

/**
 * One MCP server per client session (spec 4.8): each function assigned to the stored MCP server
 * is a tool named by its slug. The tool list is read from the database on every `tools/list`,
 * so it is never stale; `notifications/tools/list_changed` tells connected clients to ask again
 * (sent by server/http/mcpRoutes.ts when the assignments or the functions change).
 *
 * The caller is not fixed per session: every HTTP request that carries MCP messages is
 * authenticated anew and hands its caller to the handlers (`McpAuth`, ./mcpAuth.ts), so a revoked
 * key or permission fails on the next call.
 */

/**
 * Process-local "the tools of MCP server X may have changed". Routers that change assignments fire
 * it for an immediate notice; the endpoint also polls (so other replicas' changes and function
 * edits made elsewhere arrive within a few seconds).
 */
export const mcpToolChanges = new EventEmitter<{ changed: [serverId: string] }>();
mcpToolChanges.setMaxListeners(0);

export function announceMcpToolsChanged(serverId: string) {
  mcpToolChanges.emit('changed', serverId);
}

/** Ajv in MCP clients does not know the 2020-12 meta-schema URI; the dialect is MCP's default anyway. */
function withoutDialect(schema: Record<string, unknown>) {
  const { $schema: _dialect, ...rest } = schema;
  return rest as Tool['inputSchema'];
}

type AssignedFunction = { fn: PipelineFunction; version: Pick<FunctionVersion, 'id' | 'parameters' | 'outputs' | 'plan'> | null };

/** The functions assigned to the server, with their current versions (source excluded). */
async function assignedFunctions(em: EntityManager, serverId: string): Promise<AssignedFunction[]> {
  const server = await em.findOne(McpServer, { id: serverId }, { populate: ['functions'] });
  if (!server) return [];
  const fns = server.functions.getItems();
  const versionIds = fns.map((fn) => fn.currentVersion?.id).filter((id): id is string => !!id);
  const versions = versionIds.length
    ? await em.find(FunctionVersion, { id: { $in: versionIds } }, { exclude: ['source'], populate: ['plan'] })
    : [];
  const byId = new Map(versions.map((version) => [version.id, version]));
  return fns
    .map((fn) => ({ fn, version: byId.get(fn.currentVersion?.id ?? '') ?? null }))
    .sort((a, b) => a.fn.slug.localeCompare(b.fn.slug));
}

type SignedFunction = { id: string; slug: string; name: string; description: string; current_version_id: string | null };

/**
 * What a client would see change, per server: used to decide when to send `tools/list_changed`.
 * A tool's schemas come from its function's current version, so the version id stands for them:
 * the endpoint computes this every few seconds for every open server, from the function rows
 * alone (never the versions' plans or sources).
 */
export async function toolsSignatures(em: EntityManager, serverIds: string[]) {
  const signatures = new Map<string, string>(serverIds.map((id) => [id, '[]']));
  if (!serverIds.length) return signatures;
  const rows: (SignedFunction & { server_id: string })[] = await em.getConnection().execute(
    `select msf.mcp_server_id as server_id, f.id, f.slug, f.name, f.description, f.current_version_id
         from mcp_server_functions msf join functions f on f.id = msf.pipeline_function_id
        where msf.mcp_server_id in (${serverIds.map(() => '?').join(', ')})`,
    serverIds,
  );
  const byServer = new Map<string, SignedFunction[]>();
  for (const row of rows) byServer.set(row.server_id, [...(byServer.get(row.server_id) ?? []), row]);
  for (const [serverId, fns] of byServer) {
    fns.sort((a, b) => a.slug.localeCompare(b.slug));
    signatures.set(serverId, JSON.stringify(fns.map((fn) => [fn.id, fn.slug, fn.name, fn.description, fn.current_version_id])));
  }
  return signatures;
}

/** How often a running tool call reports progress to a client that asked for it (a `progressToken`). */
export const TOOL_PROGRESS_EVERY_MS = 5_000;

function describeTool({ fn, version }: AssignedFunction): Tool {
  const parameters = version?.parameters ?? [];
  const outputs = version?.outputs ?? [];
  return {
    name: fn.slug,
    title: fn.name,
    description: fn.description || fn.name,
    inputSchema: withoutDialect(
      functionInputJsonSchema(parameters, { optional: optionalParameters(version?.plan as unknown as Plan | null) }),
    ),
    outputSchema: withoutDialect(functionOutputJsonSchema(outputs)),
    // A function drives a browser against the outside world and may change things there.
    annotations: { title: fn.name, readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  };
}

/** A domain miss is a tool result the model can read (the API's error body as text), not a protocol error. */
function failure(code: ErrorCode, message: string, issues?: ErrorIssue[]): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorBody(code, message, issues)) }] };
}

export function buildMcpServer(deps: AppDeps, server: { id: string; slug: string; name: string; description: string }) {
  const mcp = new Server(
    { name: server.slug, title: server.name, version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } }, ...(server.description ? { instructions: server.description } : {}) },
  );

  mcp.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const auth = mcpAuthOf(extra.authInfo);
    const em = deps.orm.em.fork();
    const project = await em.findOneOrFail(Project, { id: auth.projectId });
    const ref = projectRef(project);
    // Only what the key may read: the permission module decides per function.
    const tools = (await assignedFunctions(em, server.id)).filter(({ fn }) => can(auth.subject, ref, functionActions.read, fn.id));
    return { tools: tools.map(describeTool) };
  });

  mcp.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const auth = mcpAuthOf(extra.authInfo);
    const em = deps.orm.em.fork();
    const project = await em.findOneOrFail(Project, { id: auth.projectId });
    const name = request.params.name;
    // The function rows only: executeFunction loads the one version it runs.
    const stored = await em.findOne(McpServer, { id: server.id }, { populate: ['functions'] });
    const fn = stored?.functions.getItems().find((candidate) => candidate.slug === name);
    if (!fn) return failure('unknown_tool', `Unknown tool \`${name}\``);
    const progressToken = request.params._meta?.progressToken;
    // Progress keeps a client that passes `resetTimeoutOnProgress` from timing out a long call.
    const onProgress =
      progressToken === undefined
        ? undefined
        : (elapsedMs: number) =>
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: Math.floor(elapsedMs / 1000), message: `running for ${Math.floor(elapsedMs / 1000)} s` },
              })
              .catch(() => {});
    try {
      // executeFunction checks read/execute permissions and validates the arguments. The signal
      // aborts on the client's `notifications/cancelled` and when the session closes: the run is
      // stopped then, so an abandoned call does not hold a browser until the timeout.
      const execution = await executeFunction(deps, em, auth.subject, project, fn.slug, request.params.arguments ?? {}, {
        signal: extra.signal,
        onProgress,
        progressEveryMs: TOOL_PROGRESS_EVERY_MS,
      });
      return {
        content: [{ type: 'text', text: JSON.stringify(execution.outputs) }],
        structuredContent: execution.outputs,
        _meta: { identifier: execution.identifier },
      };
    } catch (error) {
      const domain = asDomainError(error);
      if (domain) return failure(domain.code, domain.message, domain.issues);
      deps.log.error({ err: error, tool: name, mcpServer: server.id }, 'MCP tool call failed');
      return failure('internal_error', 'Internal error while running the function');
    }
  });

  return mcp;
}
