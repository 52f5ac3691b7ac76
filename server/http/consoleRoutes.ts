import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { RawApp } from './rawRoutes.ts';

/** Where `vite build` puts the console (console/vite.config.ts); scripts/setup.sh builds it. */
export const consoleDist = path.join(import.meta.dirname, '..', '..', 'console', 'dist');

/**
 * The console's page and assets come from this origin only; it calls the API here, shows live
 * views it links to in a tab of their own, and is never framed.
 */
const consoleSecurity = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/**
 * The web console at `/` (docs/console.md): its index and its hashed assets, from console/dist.
 * Its own routes live in the URL's fragment, so only `/`, `/index.html` and `/assets/…` are
 * served here (`assets` is a reserved slug). The files are those built when the service started
 * (a rebuild needs a restart, which `scripts/start.sh` does anyway). The index is never cached; the
 * assets' names change with their content, so they are cached for good. Without a build, `/` says
 * how to make one.
 */
export async function registerConsoleRoutes(app: RawApp) {
  if (!existsSync(path.join(consoleDist, 'index.html'))) {
    app.get('/', async (_req, reply) =>
      reply
        .code(503)
        .headers({ ...consoleSecurity, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        .send('The web console is not built: run `bash scripts/setup.sh` (or `npx vite build --config console/vite.config.ts`).\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: consoleDist,
    prefix: '/',
    // Routes for the files there are now, not a wildcard that would answer every unknown path.
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    setHeaders: (reply, filePath) => {
      reply.headers(consoleSecurity);
      reply.header('cache-control', filePath.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
