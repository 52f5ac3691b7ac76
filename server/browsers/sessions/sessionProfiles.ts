import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { SessionCookie } from '../../../db/entities/BrowserSession.ts';
import { BrowserSession, SessionResource } from '../../../db/entities/index.ts';
import { PostgresBlobStore, sealedBlobs } from '../../blobs/blobStore.ts';
import { cookieSchema, maxCookiesPerSession } from './sessionCookies.ts';

/**
 * A persisted session's profile (`persist: true`, docs/sessions-and-proxies.md, "Profiles that
 * persist"): the archive its browser's host made of the profile's cookies, localStorage, IndexedDB
 * and service workers at the last stop, sealed under the service secret in the blob store, so that
 * whichever host starts the session next finds it. It goes with the session.
 */

/** Sealing purpose: a profile's key is derived for profiles only. */
const PURPOSE = 'session-profile';
const prefixOf = (sessionId: string) => `profiles/${sessionId}/`;
/** The blob key of a session's saved profile (a gzip'd tar of the parts the host keeps). */
export const profileKey = (sessionId: string) => `${prefixOf(sessionId)}profile.tar.gz`;

/** The session's saved profiles, sealed at rest. */
export function sessionProfiles(orm: MikroORM, serviceSecret: string) {
  const blobs = sealedBlobs(new PostgresBlobStore(orm), serviceSecret, PURPOSE);
  return {
    /** The archive saved at the last stop; undefined when none was saved yet (or it reads under another secret). */
    load: (sessionId: string) => blobs.get(profileKey(sessionId)),
    save: (sessionId: string, archive: Uint8Array) => blobs.put(profileKey(sessionId), archive),
  };
}

/** Deletes what a session's profile left in the blob store (with the session). Needs no secret. */
export function deleteSessionProfile(orm: MikroORM, sessionId: string) {
  return new PostgresBlobStore(orm).deleteUnder(prefixOf(sessionId));
}

/**
 * The cookies a browser had at its stop (`Storage.getCookies`), as a session stores them: each
 * checked as a client's would be, those that cannot be set again (an opaque partition's) left out,
 * at most `maxCookiesPerSession`.
 */
export function storableCookies(captured: readonly unknown[]): SessionCookie[] {
  const kept: SessionCookie[] = [];
  for (const cookie of captured) {
    const parsed = cookieSchema.safeParse(cookie);
    if (parsed.success) kept.push(parsed.data);
    if (kept.length >= maxCookiesPerSession) break;
  }
  return kept;
}

/**
 * Keeps what a persisted session's browser left at its stop: the archive (when it was made and
 * within the bound) replaces the one saved before, and the browser's cookies become the session's
 * stored `cookies` (for readers with `cookies.read`, and applied at the next start over the
 * restored profile). Nothing when the session no longer persists (turned off while it ran).
 */
export async function keepSessionProfile(
  orm: MikroORM,
  serviceSecret: string,
  resourceId: string,
  saved: { archive?: Buffer; cookies?: readonly unknown[] },
) {
  const em: EntityManager = orm.em.fork();
  const resource = await em.findOne(SessionResource, { id: resourceId }, { populate: ['session'] });
  // `persist` turned off while the browser ran: nothing of it is kept.
  if (!resource?.session.persist) return;
  const sessionId = resource.session.id;
  if (saved.archive) await sessionProfiles(orm, serviceSecret).save(sessionId, saved.archive);
  if (saved.cookies) await em.nativeUpdate(BrowserSession, { id: sessionId }, { cookies: storableCookies(saved.cookies) });
}
