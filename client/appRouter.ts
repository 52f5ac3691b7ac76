/**
 * The router's type as the client sees it. From source (the repository's own tests and scripts) it
 * is the server's type itself. The package's build (client/build.ts) writes dist/appRouter.d.ts in
 * its place: the same procedures with their input and output types printed as plain types, and
 * none of the server's context, metadata or modules, so an installed SDK needs nothing of the server.
 */
export type { AppRouter } from '../server/trpc/router.ts';
