import { describe, expect, it } from 'vitest';
import {
  acceptLanguages,
  canonicalLocale,
  canonicalTimezone,
  defaultLaunchFingerprint,
  fingerprintFlags,
} from '../../../server/browsers/launch/fingerprint.ts';
import { defaultLaunchSettings, launchSignature } from '../../../server/browsers/launch/launchSignature.ts';

describe('a session’s locale and timezone', () => {
  it('are taken in any case and stored canonical', () => {
    expect(canonicalLocale('de-de')).toBe('de-DE');
    expect(canonicalLocale('zh-hant-tw')).toBe('zh-Hant-TW');
    expect(canonicalLocale('en')).toBe('en');
    expect(canonicalTimezone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimezone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(canonicalTimezone('utc')).toBe('UTC');
  });

  it('refuse what is no tag or no zone, and anything that could be a path or a flag', () => {
    for (const bad of ['', 'not a locale', 'de_DE', '--lang=x', 'x'.repeat(40), 'de-DE,en']) expect(canonicalLocale(bad)).toBeNull();
    for (const bad of ['', 'Mars/Olympus_Mons', '../../etc/passwd', '/etc/localtime', 'Europe/Berlin\n'])
      expect(canonicalTimezone(bad)).toBeNull();
  });
});

describe('the launch flags of a fingerprint', () => {
  it('hide automation and name the real major version for desktop; only the languages for automation', () => {
    const desktop = fingerprintFlags({ mode: 'desktop', locale: 'de-DE', timezone: 'Europe/Berlin' }, '156');
    expect(desktop).toContain('--disable-blink-features=AutomationControlled');
    expect(desktop).toContain(
      '--user-agent=Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
    );
    expect(desktop).toEqual(expect.arrayContaining(['--lang=de-DE', '--accept-lang=de-DE,de']));
    expect(fingerprintFlags({ mode: 'automation', locale: 'de-DE', timezone: 'UTC' }, '156')).toEqual([
      '--lang=de-DE',
      '--accept-lang=de-DE,de',
    ]);
    expect(acceptLanguages('en')).toEqual(['en']);
  });

  it('are part of the warm-browser signature, the default equal to none given', () => {
    const settings = { ...defaultLaunchSettings, fingerprint: undefined };
    expect(launchSignature(settings)).toBe(launchSignature({ ...settings, fingerprint: defaultLaunchFingerprint }));
    expect(launchSignature({ ...settings, fingerprint: { ...defaultLaunchFingerprint, locale: 'de-DE' } })).not.toBe(
      launchSignature(settings),
    );
    expect(launchSignature({ ...settings, fingerprint: { ...defaultLaunchFingerprint, mode: 'automation' } })).not.toBe(
      launchSignature(settings),
    );
  });
});
