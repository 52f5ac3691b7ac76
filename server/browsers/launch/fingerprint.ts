import { z } from 'zod';

/**
 * What a session's browser shows sites (docs/sessions-and-proxies.md, "Fingerprint"): by default
 * (`desktop`) a desktop Chromium that does not say it is headless or automated, speaking the
 * session's `locale` in the session's `timezone`; `automation` keeps Chromium's honest defaults.
 * The api checks these fields; the host launches with `fingerprintFlags` and injects the rest
 * (server/browsers/host/fingerprint/).
 */

export const fingerprintModes = ['desktop', 'automation'] as const;
export type FingerprintMode = (typeof fingerprintModes)[number];

export const defaultFingerprintMode: FingerprintMode = 'desktop';
export const defaultLocale = 'en-US';
export const defaultTimezone = 'UTC';

/** What the launch of a browser carries of its fingerprint: all of it is fixed at launch (flags, environment). */
export type LaunchFingerprint = { mode: FingerprintMode; locale: string; timezone: string };

export const defaultLaunchFingerprint: LaunchFingerprint = {
  mode: defaultFingerprintMode,
  locale: defaultLocale,
  timezone: defaultTimezone,
};

/** A BCP 47 tag in its canonical form (`de-de` → `de-DE`), or null when it is none. */
export function canonicalLocale(tag: string): string | null {
  if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}$/.test(tag)) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

let timezones: Map<string, string> | undefined;
/** ICU's own names, by lower case. */
function knownTimezones() {
  timezones ??= new Map(['UTC', ...Intl.supportedValuesOf('timeZone')].map((name) => [name.toLowerCase(), name]));
  return timezones;
}

/** An IANA time zone name in its canonical form (`europe/berlin` → `Europe/Berlin`), or null when ICU knows none. */
export function canonicalTimezone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name) || name.includes('..')) return null;
  const known = knownTimezones().get(name.toLowerCase());
  if (known) return known;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // A newer name ICU keeps as an alias (`Asia/Kolkata` for `Asia/Calcutta`) stays as written
    // when written as the tz database spells it; otherwise ICU's spelling (the TZ file's name).
    return name.split('/').every((part) => /^[A-Z]/.test(part)) ? name : resolved;
  } catch {
    return null;
  }
}

export const localeSchema = z
  .string()
  .trim()
  .max(35)
  .transform((tag, ctx) => {
    const canonical = canonicalLocale(tag);
    if (!canonical) {
      ctx.addIssue({ code: 'custom', message: 'a BCP 47 language tag such as en-US, de-DE or zh-Hant-TW' });
      return z.NEVER;
    }
    return canonical;
  });

export const timezoneSchema = z
  .string()
  .trim()
  .max(64)
  .transform((name, ctx) => {
    const canonical = canonicalTimezone(name);
    if (!canonical) {
      ctx.addIssue({ code: 'custom', message: 'an IANA time zone name such as UTC, Europe/Berlin or America/New_York' });
      return z.NEVER;
    }
    return canonical;
  });

export const fingerprintModeSchema = z.enum(fingerprintModes);

/**
 * `Accept-Language` (and `navigator.languages`) for a locale, as a desktop Chrome set to that
 * language sends it: the tag, then its language alone when it has a region (`de-DE,de`).
 */
export function acceptLanguages(locale: string) {
  const language = locale.split('-')[0] as string;
  return language === locale ? [locale] : [locale, language];
}

/** The user agent a desktop Chromium `major` on Linux sends (reduced, as Chrome's own). */
export function desktopUserAgent(major: string) {
  return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

/**
 * The launch flags of a fingerprint, before the session's own (which come after, so a session's
 * `--lang` or `--user-agent` wins). They reach every frame and worker of the browser, which no
 * injected script does by itself. The locale applies in both modes (it is the session's choice,
 * not a disguise); `automation` adds nothing else. `major`: the browser's major version.
 */
export function fingerprintFlags(fingerprint: LaunchFingerprint, major: string): string[] {
  const languages = [`--lang=${fingerprint.locale}`, `--accept-lang=${acceptLanguages(fingerprint.locale).join(',')}`];
  if (fingerprint.mode === 'automation') return languages;
  return ['--disable-blink-features=AutomationControlled', `--user-agent=${desktopUserAgent(major)}`, ...languages];
}
