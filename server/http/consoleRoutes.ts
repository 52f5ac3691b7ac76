import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../appDeps.ts';
import { rawRouteGroup, routesOf } from './rawRoute.ts';

/** Where `vite build` puts the console (console/vite.config.ts); scripts/setup.sh builds it. */
export const consoleDist = path.join(import.meta.dirname, '..', '..', 'console', 'dist');

/**
 * The console's page and assets come from this origin only; it calls the API here, shows live
 * views it links to in a tab of their own, and is never framed. Inline styles are allowed for the
 * replay of recordings: rrweb's player rebuilds a recorded page (its `<style>` elements and `style`
 * attributes) in an iframe of the console's own document, which has the console's policy. No
 * script runs there (its sandbox, and `script-src 'self'`), and its images and fonts load from
 * this origin only, so a replayed page calls out nowhere.
 */
const consoleSecurity = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/** Answered at `/` until `vite build` has written the console. */
const notBuilt = 'The web console is not built: run `bash scripts/setup.sh` (or `npx vite build --config console/vite.config.ts`).\n';

const route = routesOf<AppDeps>();

/** The console's index, or how to build it. */
const index = async (_req: FastifyRequest, reply: FastifyReply) => {
  if (existsSync(path.join(consoleDist, 'index.html'))) return reply.sendFile('index.html');
  return reply
    .code(503)
    .headers({ ...consoleSecurity, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
    .send(notBuilt);
};

/**
 * The web console at `/` (docs/console.md): its index and its hashed assets, from console/dist.
 * Its own routes live in the URL's fragment, so only `/`, `/index.html` and `/assets/…` are
 * served here (`assets` is a reserved slug). Files are looked up when asked for, so a rebuild
 * (or a first build) is served without a restart. The index is never cached; the assets' names
 * change with their content, so they are cached for good. Without a build, `/` says how to make
 * one; an unknown asset is the API's 404.
 */
export const consoleRoutes = rawRouteGroup(
  async (app, deps) => {
    await app.register(fastifyStatic, {
      root: consoleDist,
      // No route per file found at start: the three routes below, which read what is there now.
      serve: false,
      // console/dist may not be built yet: `/` says so.
      suppressWarning: true,
      cacheControl: false,
      setHeaders: (reply, filePath) => {
        reply.headers(consoleSecurity);
        reply.header(
          'cache-control',
          filePath.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    });
    return deps;
  },
  [
    route({ method: 'GET', path: '/', serve: () => index }),
    route({ method: 'GET', path: '/index.html', serve: () => index }),
    route({
      method: 'GET',
      path: '/assets/*',
      serve: () => async (req, reply) => {
        const name = (req.params as { '*': string })['*'];
        // A name of its own inside assets/, nothing that climbs out of it or names a folder.
        if (!name || name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) return reply.callNotFound();
        return reply.sendFile(path.posix.join('assets', name));
      },
    }),
  ],
);
