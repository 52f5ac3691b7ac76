import { describe, expect, it } from 'vitest';
import { CLEANUP_BOUND_MS, LAUNCH_BOUND_MS } from '../../../server/browsers/host/chromium/chromiumProcess.ts';
import { LAUNCH_TIMEOUT_MS } from '../../../workflows/browserSession.ts';

/**
 * A launch that cannot finish (a Chromium slow to answer, a first tab that never loads) fails on
 * the host with its reason, which the resource's stop reason shows: the host's own bound, its
 * cleanup included, ends well before the workflow's launch activity times out, which would say
 * only "timed out" and have its retry join the same launch. test/browsers/sandbox/launch-escapes.test.ts
 * holds a real launch to it.
 */
describe('a launch that cannot finish', () => {
  it('fails on the host, with its reason, at least 10 s before the workflow stops waiting for it', () => {
    expect(LAUNCH_BOUND_MS + CLEANUP_BOUND_MS + 10_000).toBeLessThanOrEqual(LAUNCH_TIMEOUT_MS);
  });
});
