import { createHash } from 'node:crypto';
import { defaultLaunchFingerprint } from './fingerprint.ts';
import { defaultBrowserImage } from './images.ts';
import { defaultScreen, type LaunchSettings } from './launchSettings.ts';

/**
 * The key warm browsers are offered and claimed by (`warm_browsers.launch_signature`). Only what
 * is fixed at launch goes in: the screen (Playwright's persistent context fixes the viewport at
 * launch, and resizing a running browser is not reliable), the flags as parsed (so spacing and
 * quoting of the session's `args` do not matter; their order does, for Chromium) and the image.
 * Cookies are applied per start; a proxy is applied at launch too, but a session with one never
 * takes a warm browser, so it is no part of this. The fingerprint's mode, locale and timezone are
 * launch flags and the browser's environment; what is generated per session is injected at
 * adoption, so it is not part of it. Hashed, because `args` may be long.
 */
export function launchSignature(settings: LaunchSettings) {
  const canonical = JSON.stringify([
    settings.image,
    settings.screen.width,
    settings.screen.height,
    settings.args,
    settings.fingerprint ?? defaultLaunchFingerprint,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** The settings every host keeps `BROWSER_WARM_POOL` browsers of. */
export const defaultLaunchSettings: LaunchSettings = {
  image: defaultBrowserImage,
  screen: defaultScreen,
  args: [],
  fingerprint: defaultLaunchFingerprint,
};
export const defaultLaunchSignature = launchSignature(defaultLaunchSettings);
