import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { OpenAPIObject } from 'trpc-to-openapi';
import { htmlAnswer, jsonAnswer } from './rawAnswers.ts';
import { rawRouteGroup, routesOf } from './rawRoute.ts';

const route = routesOf<OpenAPIObject>();

/**
 * The reference page: Swagger UI, a plugin that serves the page at this path and its files under
 * it, so this entry has no handler; the group's setup registers the plugin at its path.
 */
const reference = route({
  method: 'GET',
  path: '/api/docs',
  doc: {
    operationId: 'docs-reference',
    summary: 'The API reference (Swagger UI, served from this host): every operation, with try-it-out and an API key',
    tags: ['docs'],
    responses: htmlAnswer(),
  },
});

/**
 * This document and its reference page. The document is made from the route list that lists
 * these (openapi.ts), so the group is handed it by app.ts rather than importing it.
 */
export const docsRoutes = rawRouteGroup(
  async (app, _deps, { openApiDocument }) => {
    const document = openApiDocument();
    // Rendered by Swagger UI from node_modules (no CDN): try-it-out with an API key.
    await app.register(fastifySwagger, { mode: 'static', specification: { document: document as never } });
    await app.register(fastifySwaggerUi, {
      routePrefix: reference.path,
      uiConfig: { deepLinking: true, persistAuthorization: false, displayRequestDuration: true },
    });
    return document;
  },
  [
    route({
      method: 'GET',
      path: '/api/openapi.json',
      doc: { operationId: 'docs-openapi', summary: 'This OpenAPI 3.1 document', tags: ['docs'], responses: jsonAnswer('The document') },
      serve: (document) => async () => document,
    }),
    reference,
  ],
);
