import { chromium } from 'playwright-core';
import { CHROMIUM_FLAGS } from '../../server/browsers/launch/chromiumFlags.ts';

/** Debian's Chromium (or CHROMIUM_PATH) with the flags this machine needs. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export { CHROMIUM_FLAGS };

/** A headless Chromium for a test to drive as a user would. */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}
