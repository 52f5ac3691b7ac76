import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    pool: 'forks',
    // Each file brings up its own app, worker and database; two at a time fit two cores.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll's own default (1 s) is too short for a suite that shares two cores with Chromium
    // and Temporal: a poll that names no timeout waits this long.
    expect: { poll: { timeout: 10_000 } },
    server: {
      deps: {
        // The page model's in-page code is sent to pages as its functions' text
        // (server/agents/page/collect/inPage.ts): loaded natively, as in production, since Vite's
        // module transform would rewrite the names they import inside that text.
        external: [/\/server\/agents\/page\/collect\//],
      },
    },
  },
});
