import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { McpClientConfig, McpServer } from '../../db/entities/index.ts';
import type { AppDeps } from '../appDeps.ts';
import type { Config } from '../config.ts';
import { BadRequest, errorBody, httpAnswer, NotFound, PermissionDenied, Unauthenticated } from '../errors.ts';
import { buildMcpServer, mcpToolChanges, toolsSignatures } from '../mcp/buildMcpServer.ts';
import { McpAuth, withMcpAuth } from '../mcp/mcpAuth.ts';
import { loadChild } from '../projects/projectRows.ts';
import { enterProject, header, resolveCaller } from '../requestEdge.ts';
import { type RawApp, rawRouteGroup, routesOf } from './rawRoute.ts';

/**
 * The MCP endpoint of a stored MCP server (spec 4.8, 5.10), on both transports:
 * - the legacy HTTP+SSE transport: `GET …/mcp` (Accept: text/event-stream, no `mcp-session-id`)
 *   opens the stream, whose `endpoint` event names `POST …/mcp?sessionId=…` for the messages;
 * - Streamable HTTP: `POST …/mcp` (initialize, then with `mcp-session-id`), `GET` with
 *   `mcp-session-id` for the server's stream, `DELETE` to end the session.
 *
 * Every request needs an API key (a browser cookie is not enough) that a client config links to
 * this server; it is checked on every request, so a deleted config refuses the next message. A
 * session belongs to the key that opened it. Transports live in this process (a load balancer
 * must keep a session on one replica: sticky by `mcp-session-id` / `sessionId`).
 *
 * Sessions end: on DELETE; when the SSE stream closes; when the key loses its link; after
 * `MCP_SESSION_IDLE_SECONDS` with no request in flight and no stream open (SDK clients' close()
 * aborts their streams but sends no DELETE, so without this every connection would leave a
 * session behind); and, beyond MAX_SESSIONS_PER_KEY open sessions of one key, the least recently
 * used one. Closing a session aborts its running tool calls, which stops their runs.
 */

type McpParams = { project: string; serverId: string };

const path = '/{project}/api/mcp-servers/{serverId}/mcp';
/** How often open sessions re-check their key's link and their server's tool list. */
const SYNC_INTERVAL_MS = 2_000;
/** Open sessions one API key may hold in this process; a new one evicts the least recently used. */
export const MAX_SESSIONS_PER_KEY = 16;

const authNote = 'API key in `x-api-key` or `Authorization: Bearer`; the key must be linked to the server by an MCP client config.';

type Transport = SSEServerTransport | StreamableHTTPServerTransport;
type Session = {
  transport: Transport;
  mcp: Server;
  serverId: string;
  apiKeyId: string;
  signature?: string;
  /** HTTP responses of this session still open: requests in flight, and streams. */
  open: number;
  /** When the last request arrived or the last open response ended (ms). */
  lastActive: number;
};

const loopbackHosts = ['localhost', '127.0.0.1', '[::1]', '::1'];

/**
 * DNS-rebinding protection (the MCP transport guidance): a web page must not drive the endpoint
 * through a visitor's browser under a name that resolves to this server. Browsers always say where
 * a page came from (`Origin`), so a request with an Origin is let through only from the
 * `PUBLIC_URL` host, loopback or `MCP_ALLOWED_HOSTS` — never merely because Origin matches Host,
 * which is exactly what a rebound name looks like. Agents send no Origin: on a self-hosted server
 * they reach it by whatever name the network gives (a LAN address, a container name, a proxy), and
 * their API key is what lets them in, so Host is only pinned when `MCP_ALLOWED_HOSTS` is set.
 */
export function mcpRequestAllowed(config: Config, request: { hostname: string; origin?: string }) {
  const configured = config.mcp.allowedHosts;
  const allowed = new Set([...loopbackHosts, new URL(config.publicUrl).hostname.toLowerCase(), ...(configured ?? [])]);
  if (configured && !allowed.has(request.hostname.toLowerCase())) return false;
  if (request.origin === undefined) return true;
  try {
    return allowed.has(new URL(request.origin).hostname.toLowerCase());
  } catch {
    // `Origin: null` (sandboxed frames, file pages) and garbage.
    return false;
  }
}

/** This process's MCP sessions, and what the routes do with them; closed with the app. */
function mcpSessions(app: RawApp, deps: AppDeps) {
  const sessions = new Map<string, Session>();

  async function closeSession(id: string) {
    const session = sessions.get(id);
    if (!session) return;
    // Out of the map before the await: a request arriving meanwhile gets 404, not a closing transport.
    sessions.delete(id);
    await session.mcp.close().catch(() => {});
  }

  /** Counts `res` as the session's activity until it ends. */
  function track(session: Session, res: FastifyReply['raw']) {
    session.open++;
    session.lastActive = Date.now();
    res.once('close', () => {
      session.open--;
      session.lastActive = Date.now();
    });
  }

  /** A new session of `apiKeyId`: past the cap, its least recently used sessions are closed. */
  function admit(id: string, session: Session) {
    const ofKey = [...sessions.entries()]
      .filter(([, other]) => other.apiKeyId === session.apiKeyId)
      // Idle ones first, then the least recently active.
      .sort(([, a], [, b]) => Number(a.open > 0) - Number(b.open > 0) || a.lastActive - b.lastActive);
    for (const [oldId] of ofKey.slice(0, Math.max(0, ofKey.length - MAX_SESSIONS_PER_KEY + 1))) void closeSession(oldId);
    sessions.set(id, session);
  }

  /** Authenticates one request: an API key linked to this server of this project. */
  async function authenticate(req: FastifyRequest<{ Params: McpParams }>): Promise<{ auth: McpAuth; server: McpServer }> {
    if (!mcpRequestAllowed(deps.config, { hostname: req.hostname, origin: header(req, 'origin') })) {
      throw new PermissionDenied('Host or Origin not allowed (see MCP_ALLOWED_HOSTS)', 'host_not_allowed');
    }
    const em = deps.orm.em.fork();
    const subject = await resolveCaller(deps, em, req, 'headers');
    if (subject.kind !== 'apiKey')
      throw new Unauthenticated('The MCP endpoint needs an API key (x-api-key or Authorization)', 'api_key_required');
    const { project } = await enterProject(deps, em, subject, req.params.project);
    const server = await loadChild(em, McpServer, req.params.serverId, { project: project.id }, 'MCP server');
    const linked = await em.count(McpClientConfig, { mcpServer: server.id, apiKey: subject.apiKey.id });
    if (!linked) throw new PermissionDenied('This API key is not linked to the MCP server by a client config', 'api_key_not_linked');
    return { auth: new McpAuth({ subject, projectId: project.id, serverId: server.id, apiKeyId: subject.apiKey.id }), server };
  }

  /** The session the request names, if it is this server's and this key's; else 404 (as the MCP spec asks). */
  /** The caller's open session of this id, on the transport the request speaks; 404 otherwise. */
  function sessionFor<T extends object>(
    id: string | undefined,
    auth: { serverId: string; apiKeyId: string },
    transportKind: abstract new (...args: never[]) => T,
  ) {
    const session = id ? sessions.get(id) : undefined;
    if (!session || session.serverId !== auth.serverId || session.apiKeyId !== auth.apiKeyId) {
      throw new NotFound('MCP session', 'session_not_found');
    }
    const transport: object = session.transport;
    if (!(transport instanceof transportKind)) throw new NotFound('MCP session', 'session_not_found');
    return { session, transport };
  }

  /** Errors after the reply was hijacked are written by hand. */
  async function hijacked(reply: FastifyReply, run: () => Promise<void>) {
    reply.hijack();
    try {
      await run();
    } catch (error) {
      deps.log.error({ err: error }, 'MCP request failed');
      const res = reply.raw;
      if (!res.headersSent) {
        const { status, body } = httpAnswer(error);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody(body.code, 'MCP request failed')));
      } else if (!res.writableEnded) res.end();
    }
  }

  /**
   * Keeps open sessions true to the database: a session whose key lost its link (config deleted
   * or moved) is closed, and a session whose server's tools changed is told `tools/list_changed`.
   * Idle sessions are closed first. `only` limits the pass to one server (an immediate notice
   * from this process).
   */
  const idleMs = deps.config.mcp.sessionIdleSeconds * 1000;
  let syncing = Promise.resolve();
  function sync(only?: string) {
    syncing = syncing.then(async () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (session.open === 0 && now - session.lastActive > idleMs) await closeSession(id);
      }
      const open = [...sessions.entries()].filter(([, session]) => !only || session.serverId === only);
      if (!open.length) return;
      const em = deps.orm.em.fork();
      const serverIds = [...new Set(open.map(([, session]) => session.serverId))];
      const links = await em.find(McpClientConfig, { mcpServer: { $in: serverIds } }, { fields: ['mcpServer', 'apiKey'] });
      const linked = new Set(links.map((link) => `${link.mcpServer.id}/${link.apiKey.id}`));
      const signatures = await toolsSignatures(em, serverIds);
      for (const [id, session] of open) {
        if (!linked.has(`${session.serverId}/${session.apiKeyId}`)) {
          await closeSession(id);
          continue;
        }
        const signature = signatures.get(session.serverId);
        if (session.signature === undefined || session.signature === signature) {
          session.signature ??= signature;
          continue;
        }
        session.signature = signature;
        await session.mcp.sendToolListChanged().catch(() => {});
      }
    });
    syncing = syncing.catch((error) => deps.log.warn({ err: error }, 'MCP session sync failed'));
    return syncing;
  }

  const onChanged = (serverId: string) => void sync(serverId);
  mcpToolChanges.on('changed', onChanged);
  const timer = setInterval(() => void sync(), SYNC_INTERVAL_MS);
  timer.unref();

  // Open streams would hold the server's close: end every session first.
  app.addHook('preClose', async () => {
    clearInterval(timer);
    mcpToolChanges.off('changed', onChanged);
    await Promise.all([...sessions.keys()].map(closeSession));
  });

  return { deps, sessions, closeSession, track, admit, authenticate, sessionFor, hijacked };
}

const route = routesOf<ReturnType<typeof mcpSessions>>();

export const mcpRoutes = rawRouteGroup(mcpSessions, [
  route({
    method: 'GET',
    path,
    doc: {
      operationId: 'mcp-servers-stream',
      summary: `MCP endpoint. Without \`mcp-session-id\` (Accept: text/event-stream): the SSE transport's stream, whose \`endpoint\` event names the POST URL for messages. With \`mcp-session-id\`: the Streamable HTTP session's stream. ${authNote}`,
      tags: ['mcp-servers'],
      parameters: [{ name: 'mcp-session-id', in: 'header', schema: { type: 'string' } }],
      responses: { '200': { description: 'text/event-stream of MCP JSON-RPC messages' } },
    },
    serve:
      ({ deps, sessions, closeSession, track, admit, authenticate, sessionFor, hijacked }) =>
      async (req, reply) => {
        const { auth, server } = await authenticate(req);
        const sessionId = header(req, 'mcp-session-id');
        if (sessionId) {
          const { session, transport } = sessionFor(sessionId, auth, StreamableHTTPServerTransport);
          track(session, reply.raw);
          return hijacked(reply, () => transport.handleRequest(withMcpAuth(req.raw, auth), reply.raw));
        }
        if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
          throw new BadRequest(
            'event_stream_required',
            'Open the MCP SSE stream with Accept: text/event-stream, or POST for Streamable HTTP',
          );
        }
        return hijacked(reply, async () => {
          // The endpoint event names this same path; the client resolves it against the stream's URL.
          const transport = new SSEServerTransport(req.url.split('?')[0] as string, reply.raw);
          const mcp = buildMcpServer(deps, server);
          const session: Session = { transport, mcp, serverId: auth.serverId, apiKeyId: auth.apiKeyId, open: 0, lastActive: Date.now() };
          admit(transport.sessionId, session);
          track(session, reply.raw);
          transport.onclose = () => {
            sessions.delete(transport.sessionId);
          };
          // The session is the stream: a closed connection ends it.
          reply.raw.on('close', () => void closeSession(transport.sessionId));
          await mcp.connect(transport);
          session.signature = (await toolsSignatures(deps.orm.em.fork(), [auth.serverId])).get(auth.serverId);
        });
      },
  }),
  route({
    method: 'POST',
    path,
    doc: {
      operationId: 'mcp-servers-message',
      summary: `MCP messages: with \`?sessionId=\` for an SSE session (answers 202, replies on the stream); otherwise Streamable HTTP (initialize without \`mcp-session-id\`, then with it). ${authNote}`,
      tags: ['mcp-servers'],
      parameters: [
        { name: 'sessionId', in: 'query', schema: { type: 'string' } },
        { name: 'mcp-session-id', in: 'header', schema: { type: 'string' } },
      ],
      requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': { description: 'JSON-RPC response (application/json or text/event-stream)' },
        '202': { description: 'accepted' },
      },
    },
    serve:
      ({ deps, sessions, track, admit, authenticate, sessionFor, hijacked }) =>
      async (req, reply) => {
        const { auth, server } = await authenticate(req);
        const sseSessionId = req.query.sessionId;
        if (sseSessionId) {
          const { session, transport } = sessionFor(sseSessionId, auth, SSEServerTransport);
          track(session, reply.raw);
          return hijacked(reply, () => transport.handlePostMessage(withMcpAuth(req.raw, auth), reply.raw, req.body));
        }
        const sessionId = header(req, 'mcp-session-id');
        if (sessionId) {
          const { session, transport } = sessionFor(sessionId, auth, StreamableHTTPServerTransport);
          track(session, reply.raw);
          return hijacked(reply, () => transport.handleRequest(withMcpAuth(req.raw, auth), reply.raw, req.body));
        }
        if (!isInitializeRequest(req.body)) {
          throw new BadRequest('mcp_session_required', 'Start with an initialize request (no mcp-session-id), or send mcp-session-id');
        }
        return hijacked(reply, async () => {
          const mcp = buildMcpServer(deps, server);
          const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => {
              admit(id, { transport, mcp, serverId: auth.serverId, apiKeyId: auth.apiKeyId, open: 0, lastActive: Date.now() });
            },
          });
          transport.onclose = () => {
            if (transport.sessionId) sessions.delete(transport.sessionId);
          };
          await mcp.connect(transport);
          await transport.handleRequest(withMcpAuth(req.raw, auth), reply.raw, req.body);
          const session = transport.sessionId ? sessions.get(transport.sessionId) : undefined;
          if (session) session.signature = (await toolsSignatures(deps.orm.em.fork(), [auth.serverId])).get(auth.serverId);
        });
      },
  }),
  route({
    method: 'DELETE',
    path,
    doc: {
      operationId: 'mcp-servers-end-session',
      summary: `Ends a Streamable HTTP MCP session (\`mcp-session-id\`). ${authNote}`,
      tags: ['mcp-servers'],
      parameters: [{ name: 'mcp-session-id', in: 'header', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: 'session ended' } },
    },
    serve:
      ({ authenticate, sessionFor, hijacked }) =>
      async (req, reply) => {
        const { auth } = await authenticate(req);
        const { transport } = sessionFor(header(req, 'mcp-session-id'), auth, StreamableHTTPServerTransport);
        return hijacked(reply, () => transport.handleRequest(withMcpAuth(req.raw, auth), reply.raw));
      },
  }),
]);
