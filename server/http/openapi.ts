import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import { appRouter } from '../trpc/router.ts';
import { API_VERSION } from '../trpc/routers/root.ts';
import { withExactErrors, withNulRefused } from './openapiContract.ts';
import { withWaitingAnswers } from './openapiWaiting.ts';
import { documentRoutes } from './rawRoute.ts';
import { rawRoutes } from './routes.ts';

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
  const procedures = renameForkParameter(document.paths ?? {});
  document.paths = { ...procedures };
  // A path may have procedures and raw routes (a download's DELETE and its GET): their methods merge.
  for (const [path, item] of Object.entries(documentRoutes(rawRoutes.flatMap((group) => group.routes)))) {
    document.paths[path] = { ...procedures[path], ...item };
  }
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
