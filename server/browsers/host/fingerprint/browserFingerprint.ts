import type { EntityManager } from '@mikro-orm/postgresql';
import type { StoredFingerprint } from '../../../../db/entities/BrowserSession.ts';
import { BrowserSession } from '../../../../db/entities/index.ts';
import { defaultLaunchFingerprint } from '../../launch/fingerprint.ts';
import type { LaunchSettings } from '../../launch/launchSettings.ts';
import { FingerprintInjector } from './fingerprintInjector.ts';

/**
 * The host's side of a session's fingerprint (docs/sessions-and-proxies.md, "Fingerprint"): the
 * launch flags and the timezone are set at launch (server/browsers/launch/fingerprint.ts,
 * chromiumProcess.ts); this attaches the injector to a `desktop` browser as it launches, and tells
 * it whose browser it is once that is known (a cold start at once, a warm browser at adoption).
 */

/** Attaches the injector to a browser launched with `settings`; none for `automation`. */
export async function attachFingerprint(cdpEndpoint: string, settings: LaunchSettings) {
  if ((settings.fingerprint ?? defaultLaunchFingerprint).mode !== 'desktop') return undefined;
  return FingerprintInjector.attach(cdpEndpoint);
}

/**
 * Every target of `browser` from now on (and those held so far) gets the session's fingerprint.
 * `stored`: the session's generated part (`sessionFingerprint`, read by the launch). A browser
 * launched without one (a launch not of a session's start: the host's own tests) gets the launch's
 * part and its screen only: nothing is generated here, so a session's browsers never show a
 * fingerprint other than its stored one.
 */
export function applyFingerprint(
  browser: { fingerprint?: FingerprintInjector; settings: LaunchSettings },
  stored: StoredFingerprint | null | undefined,
) {
  if (!browser.fingerprint) return;
  const { locale } = browser.settings.fingerprint ?? defaultLaunchFingerprint;
  browser.fingerprint.apply({ ...stored, screen: browser.settings.screen }, locale);
}

/**
 * The session's generated fingerprint, generated (`generateFingerprint`, the only caller) and
 * stored at its first `desktop` start. Two starts at once (two hosts) may both generate one: the
 * first written wins, and both use it.
 */
export async function sessionFingerprint(em: EntityManager, session: Pick<BrowserSession, 'id' | 'fingerprintData'>) {
  if (session.fingerprintData) return session.fingerprintData;
  const generated = await generateFingerprint();
  await em.nativeUpdate(BrowserSession, { id: session.id, fingerprintData: null }, { fingerprintData: generated });
  const stored = await em.fork().findOne(BrowserSession, { id: session.id }, { fields: ['fingerprintData'] });
  return stored?.fingerprintData ?? generated;
}

let generator: Promise<{ getFingerprint(options: object): { fingerprint: GeneratedFingerprint } }> | undefined;
type GeneratedFingerprint = {
  videoCard?: { vendor?: string; renderer?: string } | null;
  navigator: { hardwareConcurrency?: number; deviceMemory?: number | null };
};

/**
 * A fingerprint for a session, drawn by Apify's `fingerprint-generator` from its model of real
 * desktop Chrome on Linux (the platform the browser really runs): a GPU's WebGL vendor and
 * renderer, the CPU count and memory that go with it. Loaded at the first call (about 0.4 s).
 */
async function generateFingerprint(): Promise<StoredFingerprint> {
  generator ??= import('fingerprint-generator').then(({ FingerprintGenerator }) => new FingerprintGenerator());
  const { fingerprint } = (await generator).getFingerprint({
    browsers: ['chrome'],
    operatingSystems: ['linux'],
    devices: ['desktop'],
  });
  const card = fingerprint.videoCard;
  return {
    webgl: {
      vendor: card?.vendor || 'Google Inc. (Intel)',
      renderer: card?.renderer || 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)',
    },
    hardwareConcurrency: fingerprint.navigator.hardwareConcurrency || 8,
    deviceMemory: fingerprint.navigator.deviceMemory || 8,
  };
}
