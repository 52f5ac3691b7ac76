import { authPageRoutes } from './authPages.ts';
import { billingPageRoutes } from './billingPage.ts';
import { billingRoutes } from './billingRoutes.ts';
import { browserRoutes } from './browsers/index.ts';
import { consoleRoutes } from './consoleRoutes.ts';
import { docsRoutes } from './docsRoutes.ts';
import { downloadRoutes } from './downloadRoutes.ts';
import { externalSessionRoutes } from './externalSessionRoutes.ts';
import { logRoutes } from './logRoutes.ts';
import { mcpRoutes } from './mcpRoutes.ts';
import { oidcSignInRoutes } from './oidcSignInRoutes.ts';
import type { RawRouteGroup } from './rawRoute.ts';
import { screenshotRoutes } from './screenshotRoutes.ts';

/**
 * Every raw route (server/http/rawRoute.ts), in the order app.ts registers them; the OpenAPI
 * document (openapi.ts) lists the same routes after the procedures, so it names every endpoint.
 */
export const rawRoutes: readonly RawRouteGroup[] = [
  oidcSignInRoutes,
  authPageRoutes,
  consoleRoutes,
  browserRoutes,
  logRoutes,
  screenshotRoutes,
  downloadRoutes,
  billingRoutes,
  billingPageRoutes,
  externalSessionRoutes,
  mcpRoutes,
  docsRoutes,
];
