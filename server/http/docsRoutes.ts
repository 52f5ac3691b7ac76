import type { AppDeps } from '../appDeps.ts';
import { htmlAnswer, jsonAnswer } from './rawAnswers.ts';
import { appDeps, rawRouteGroup, routesOf } from './rawRoute.ts';

const route = routesOf<AppDeps>();

/**
 * This document and its reference page. app.ts serves both: the document is made from the route
 * list that lists these, and Swagger UI is a plugin with routes of its own. So they have no
 * handler here, only their entries.
 */
export const docsRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'GET',
    path: '/api/openapi.json',
    doc: { operationId: 'docs-openapi', summary: 'This OpenAPI 3.1 document', tags: ['docs'], responses: jsonAnswer('The document') },
  }),
  route({
    method: 'GET',
    path: '/api/docs',
    doc: {
      operationId: 'docs-reference',
      summary: 'The API reference (Swagger UI, served from this host): every operation, with try-it-out and an API key',
      tags: ['docs'],
      responses: htmlAnswer(),
    },
  }),
]);
