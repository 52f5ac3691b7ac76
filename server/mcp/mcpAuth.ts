import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Subject } from '../auth/subject.ts';

/**
 * The caller of one MCP HTTP request, as the edge (server/http/mcpRoutes.ts) authenticated it.
 * The caller is not fixed per MCP session: every request is authenticated anew, so a revoked key
 * or permission fails on the next call. It rides to the handlers inside the SDK's `AuthInfo`
 * (`withMcpAuth`), and `mcpAuthOf` takes it out again, checked.
 */
export class McpAuth {
  readonly subject: Subject;
  readonly projectId: string;
  readonly serverId: string;
  readonly apiKeyId: string;

  constructor(given: { subject: Subject; projectId: string; serverId: string; apiKeyId: string }) {
    this.subject = given.subject;
    this.projectId = given.projectId;
    this.serverId = given.serverId;
    this.apiKeyId = given.apiKeyId;
  }
}

/** `raw` carrying `auth`: the SDK's transports hand a request's `auth` to every handler as `extra.authInfo`. */
export function withMcpAuth(raw: IncomingMessage, auth: McpAuth): IncomingMessage & { auth: AuthInfo } {
  return Object.assign(raw, { auth: { token: '', clientId: auth.apiKeyId, scopes: [], extra: { mcpAuth: auth } } });
}

/** The caller of the message a handler serves. The edge always sets it: a message without it did not come through mcpRoutes. */
export function mcpAuthOf(authInfo: AuthInfo | undefined): McpAuth {
  const auth = authInfo?.extra?.mcpAuth;
  if (!(auth instanceof McpAuth)) throw new Error('MCP message without authentication');
  return auth;
}
