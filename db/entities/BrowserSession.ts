import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id, updated } from './common.ts';
import { Project } from './Project.ts';
import { StoredProxy } from './StoredProxy.ts';

export type Screen = { width: number; height: number };

/** Where a partitioned (CHIPS) cookie lives: the top-level site it was set under. */
export type CookiePartitionKey = { topLevelSite: string; hasCrossSiteAncestor: boolean };

/** A stored cookie: the settable fields of CDP's `Network.CookieParam` (`Storage.setCookies`). */
export type SessionCookie = {
  name: string;
  value: string;
  domain?: string;
  path?: string;
  url?: string;
  expires?: number;
  httpOnly?: boolean;
  secure?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
  priority?: 'Low' | 'Medium' | 'High';
  sourceScheme?: 'Unset' | 'NonSecure' | 'Secure';
  sourcePort?: number;
  partitionKey?: CookiePartitionKey;
};

/**
 * What a session's browser shows sites beyond its launch flags, generated once (at its first start
 * with the `desktop` fingerprint) and kept, so that it is the same at every start on every host.
 */
export type StoredFingerprint = {
  webgl: { vendor: string; renderer: string };
  hardwareConcurrency: number;
  deviceMemory: number;
};

export type SessionProxy = { protocol: string; hostname: string; port: number; username: string | null; password: string | null };

/** A browser definition (spec "Session"); starting it creates a SessionResource. */
export const BrowserSession = defineEntity({
  name: 'BrowserSession',
  tableName: 'browser_sessions',
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    name: p.string().length(200),
    description: p.text().default(''),
    image: p.string().length(100),
    args: p.text().default(''),
    screen: p.json<Screen>(),
    /** Shown only with `cookies.read`. */
    cookies: p.json<SessionCookie[]>().default([]).hidden(),
    /** Inline proxy with credentials; the password is sealed (server/browsers/proxies/proxyPasswords.ts) and never leaves the service. */
    proxy: p.json<SessionProxy>().nullable().hidden(),
    /** Or a stored proxy of the project. */
    storedProxy: () => p.manyToOne(StoredProxy).nullable().deleteRule('set null'),
    /** Its browser's profile is saved at each stop and restored at the next start (server/browsers/sessions/sessionProfiles.ts). */
    persist: p.boolean().default(false),
    /** `desktop` or `automation` (server/browsers/launch/fingerprint.ts); locale and timezone as BCP 47 and IANA names. */
    fingerprint: p.string().length(20).default('desktop'),
    locale: p.string().length(35).default('en-US'),
    timezone: p.string().length(64).default('UTC'),
    /** Generated at the first `desktop` start and kept; never shown. */
    fingerprintData: p.json<StoredFingerprint>().nullable().hidden(),
    /** Its browsers record every page with rrweb (docs/browsers.md, Recordings). */
    record: p.boolean().default(false),
    created: created(),
    updated: updated(),
  },
});

export type BrowserSession = InferEntity<typeof BrowserSession>;
