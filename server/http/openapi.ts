import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { appRouter } from '../trpc/router.ts';
import { API_VERSION } from '../trpc/routers/root.ts';
import { authPagePaths } from './authPages.ts';
import { billingPagePaths } from './billingPage.ts';
import { billingRoutePaths } from './billingRoutes.ts';
import { browserRoutePaths } from './browsers/index.ts';
import { externalSessionRoutePaths } from './externalSessionRoutes.ts';
import { logRoutePaths } from './logRoutes.ts';
import { mcpRoutePaths } from './mcpRoutes.ts';
import { withExactErrors, withNulRefused } from './openapiContract.ts';
import { withWaitingAnswers } from './openapiWaiting.ts';
import { htmlAnswer, jsonAnswer } from './rawAnswers.ts';
import { screenshotRoutePaths } from './screenshotRoutes.ts';

/** OpenAPI entries of routes that are not JSON-in, JSON-out procedures (streams, webhooks, WebSockets, these docs). */
export type RawRoutePaths = Record<string, NonNullable<OpenAPIObject['paths']>[string]>;

/** These docs and the external sign-in redirects (oidcSignInRoutes.ts). */
const servedHerePaths: RawRoutePaths = {
  '/api/openapi.json': {
    get: { summary: 'This OpenAPI 3.1 document', tags: ['docs'], responses: jsonAnswer('The document') },
  },
  '/api/docs': {
    get: {
      summary: 'The API reference (Swagger UI, served from this host): every operation, with try-it-out and an API key',
      tags: ['docs'],
      responses: htmlAnswer(),
    },
  },
  '/api/auth/external/{provider}/init': {
    get: {
      summary: 'Start signing in (or linking) with an external OpenID Connect provider',
      description:
        'Redirects the browser to the provider (authorization code flow with PKCE S256, state and nonce, kept in HttpOnly cookies for ten minutes). Signed in, the flow links the provider to the account once the user confirms it; signed out, it signs in or registers. `returnUrl` (same origin) is where the browser lands at the end; `remember` asks for a long-lived session.',
      tags: ['auth'],
      parameters: [
        {
          name: 'provider',
          in: 'path',
          required: true,
          schema: { type: 'string' },
          description: 'A name from GET /api/auth/external/providers',
        },
        { name: 'returnUrl', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'remember', in: 'query', required: false, schema: { type: 'boolean' } },
      ],
      responses: {
        '302': { description: 'To the provider' },
        '404': { description: 'Unknown provider' },
        '503': { description: 'The provider cannot be reached' },
      },
    },
  },
  '/api/auth/external/{provider}/redirect': {
    get: {
      summary: 'The provider sends the browser back here',
      description:
        'Checks state, nonce and the PKCE verifier and exchanges the code. Then: a flow /init started signed in → only when the same session completes it (400 `external_flow_mismatch` otherwise, nothing linked), and the identity can be linked (409 if it is linked to another user, or the account has another identity of this provider), redirects to /auth/external-link/<token>, where the user confirms (POST /api/auth/external/link/confirm) or cancels; nothing is linked before that (an identity linked to this account already is refreshed and the browser goes to returnUrl); a flow started signed out never links, whoever is signed in by then: identity linked to an account → signs it in (cookie) and redirects to returnUrl, or to /auth/2fa?returnUrl=… when the account has two-factor sign-in; unknown identity → redirects to /auth/external-register/<token> (see POST /api/auth/external/register).',
      tags: ['auth'],
      parameters: [
        { name: 'provider', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'state', in: 'query', required: true, schema: { type: 'string' } },
      ],
      responses: {
        '302': { description: 'To /auth/external-link/<token>, returnUrl, /auth/2fa or /auth/external-register/<token>' },
        '400': {
          description:
            'No flow in progress, state mismatch, a link flow completed by another session than the one that started it, or the provider refused the code or the verifier',
        },
        '409': {
          description: 'A link flow: the identity is linked to another account, or the account has another identity of this provider',
        },
      },
    },
  },
};

/**
 * Every raw route module exports its entries beside its routes; they are listed here, after the
 * procedures, so the document names every endpoint.
 */
const rawRoutePaths: RawRoutePaths = {
  ...servedHerePaths,
  ...authPagePaths,
  ...logRoutePaths,
  ...screenshotRoutePaths,
  ...browserRoutePaths,
  ...mcpRoutePaths,
  ...billingRoutePaths,
  ...billingPagePaths,
  ...externalSessionRoutePaths,
};

/**
 * The raw routes' operation ids, in the procedures' style (`area-verb`): what a generated client
 * names its methods (`logs-pipeline-run` becomes `logsPipelineRun`, `logs_pipeline_run`).
 */
const rawOperationIds: Record<string, string> = {
  'get /api/openapi.json': 'docs-openapi',
  'get /api/docs': 'docs-reference',
  'get /api/auth/external/{provider}/init': 'auth-external-init',
  'get /api/auth/external/{provider}/redirect': 'auth-external-redirect',
  'get /auth/verify': 'pages-verify-email',
  'get /auth/reset': 'pages-reset-password',
  'get /auth/external-register/{token}': 'pages-external-register',
  'get /auth/external-link/{token}': 'pages-external-link',
  'get /auth/2fa': 'pages-two-factor',
  'get /{project}/api/analysis/{analysisId}/logs': 'logs-analysis',
  'get /{project}/api/generation/{generationId}/logs': 'logs-generation',
  'get /{project}/api/sessions/{sessionId}/{resourceId}/logs': 'logs-session-resource',
  'get /{project}/api/pipelines/{pipelineId}/{runId}/logs': 'logs-pipeline-run',
  'get /{project}/api/screenshots/{screenshotId}': 'pipelines-screenshot',
  'get /{project}/api/sessions/{sessionId}/{resourceId}/capture': 'sessions-capture',
  'get /{project}/api/sessions/{sessionId}/{resourceId}/cdp': 'sessions-cdp',
  'get /{project}/api/sessions/{sessionId}/{resourceId}/live': 'sessions-live-view',
  'get /{project}/api/sessions/{sessionId}/{resourceId}/live/ws': 'sessions-live-socket',
  'get /{project}/api/mcp-servers/{serverId}/mcp': 'mcp-servers-stream',
  'post /{project}/api/mcp-servers/{serverId}/mcp': 'mcp-servers-message',
  'delete /{project}/api/mcp-servers/{serverId}/mcp': 'mcp-servers-end-session',
  'post /api/stripe/webhook': 'billing-stripe-webhook',
  'post /api/coordinator/{token}/usage': 'billing-coordinator-usage',
  'get /billing': 'pages-billing',
  'put /api/external-session': 'external-sessions-create',
  'post /api/external-session/{id}/capture': 'external-sessions-capture',
};

/** Each raw operation with its id: a name from the list above, else one made from its method and path. */
function withOperationIds(paths: RawRoutePaths): RawRoutePaths {
  const named: RawRoutePaths = {};
  for (const [path, item] of Object.entries(paths)) {
    const entry: Record<string, unknown> = { ...item };
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method) || (operation as { operationId?: string }).operationId) continue;
      const made = `${method}-${path
        .replace(/\{[^}]+\}/g, '')
        .split(/[^a-zA-Z0-9]+/)
        .filter(Boolean)
        .join('-')}`;
      entry[method] = { ...(operation as object), operationId: rawOperationIds[`${method} ${path}`] ?? made };
    }
    named[path] = entry as RawRoutePaths[string];
  }
  return named;
}

export function buildOpenApiDocument(baseUrl: string): OpenAPIObject {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Browserflow API',
    version: API_VERSION,
    baseUrl,
    description:
      'Browser sessions, pipelines, functions and MCP servers. Errors share one body: `{status: "error", code, message, issues?}`; validation messages name each field in plain words (`name: required`). A known path asked with a method it does not take answers 405 `method_not_allowed` with an `Allow` header (the `Error405` response); a private project asked without credentials answers 404 whose message says no credentials were sent. The same procedures are served as tRPC at `/trpc`.',
    securitySchemes: {
      cookie: { type: 'apiKey', in: 'cookie', name: 'token' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      bearer: { type: 'http', scheme: 'bearer', description: 'A session JWT or an API key' },
    },
  });
  document.openapi = '3.1.0';
  document.paths = { ...renameForkParameter(document.paths ?? {}), ...withOperationIds(rawRoutePaths) };
  return withNulRefused(withExactErrors(withWaitingAnswers(document)));
}

/**
 * Fork's procedure names its path's project `sourceProject`, because the REST adapter would let a
 * `{project}` path parameter overwrite the body's `project` (the target). On the wire the segment is
 * the same, so the document shows the spec's `{project}`: a path parameter and a body field may
 * share a name in OpenAPI.
 */
function renameForkParameter(paths: NonNullable<OpenAPIObject['paths']>) {
  const renamed: NonNullable<OpenAPIObject['paths']> = {};
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/{sourceProject}/')) {
      renamed[path] = item;
      continue;
    }
    const operations = Object.entries(item).map(([method, operation]) => [
      method,
      {
        ...operation,
        parameters: operation.parameters?.map((parameter: { name?: string }) =>
          parameter.name === 'sourceProject' ? { ...parameter, name: 'project' } : parameter,
        ),
      },
    ]);
    renamed[path.replace('{sourceProject}', '{project}')] = Object.fromEntries(operations);
  }
  return renamed;
}
