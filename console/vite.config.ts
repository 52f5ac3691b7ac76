import path from 'node:path';
import { defineConfig } from 'vite';

/**
 * The web console (docs/console.md): built into console/dist, which the service serves at `/`
 * (server/http/consoleRoutes.ts). JSX goes through Vite's own transform (React's automatic
 * runtime); nothing is loaded from a CDN. `scripts/setup.sh` builds it when dist is missing or
 * older than its sources.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: path.join(import.meta.dirname, 'dist'),
    emptyOutDir: true,
    // Served by the same process with a strict CSP: one script file, no inline script.
    assetsInlineLimit: 0,
    sourcemap: false,
    rolldownOptions: {
      // React Query marks its modules "use client" for server components; a browser bundle has none.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
