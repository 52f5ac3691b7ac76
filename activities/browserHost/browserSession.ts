import type { BrowserPool } from '../../server/browsers/host/pool/browserPool.ts';
import { recordAdopted, recordLaunched } from '../../server/browsers/sessions/resourceStatus.ts';
import { keepSessionProfile } from '../../server/browsers/sessions/sessionProfiles.ts';
import type { BrowserSessionHostActivities } from '../../workflows/contracts/browserSession.ts';
import { type HostActivityDeps, type HostBrowsers, launchFailure } from './hostBrowsers.ts';

/** The host's side of a browser session (workflows/browserSession.ts): launch or adopt, check and stop its browser. */
export function createBrowserSessionHostActivities({ orm, serviceSecret }: HostActivityDeps, { pool, loadLaunch }: HostBrowsers) {
  return {
    /**
     * Takes over the warm browser the api claimed for this resource (the api already answered
     * with its endpoint and applied the cookies): log capture, usage, and its place in the pool.
     */
    async adoptWarmBrowser(resourceId: string, warmId: string) {
      const { resource, spec } = await loadLaunch(resourceId);
      try {
        await pool.adoptWarm(warmId, spec);
      } catch (error) {
        throw launchFailure(error);
      }
      await recordAdopted(orm.em.fork(), resource);
    },

    async launchBrowser(resourceId: string) {
      const { em, resource, spec } = await loadLaunch(resourceId);
      let launched: Awaited<ReturnType<BrowserPool['launch']>>;
      try {
        launched = await pool.launch(spec);
      } catch (error) {
        throw launchFailure(error);
      }
      // Recorded here rather than by a further activity: one round trip less before the api answers.
      await recordLaunched(em, resource, launched);
      return launched;
    },

    /** A persisted session's browser leaves its profile and cookies to the session (sessionProfiles.ts). */
    async stopBrowser(resourceId: string) {
      return pool.stop(resourceId, (saved) => keepSessionProfile(orm, serviceSecret, resourceId, saved));
    },

    async checkBrowser(resourceId: string) {
      return pool.check(resourceId);
    },
  } satisfies BrowserSessionHostActivities;
}
