import { z } from 'zod';
import type { Config } from '../../config.ts';
import { ConfigError } from '../../config.ts';
import {
  proxyHostnameSchema,
  proxyPasswordSchema,
  proxyPortSchema,
  proxyProtocolSchema,
  proxyUsernameSchema,
  refineSocks5Credentials,
} from './sessionProxies.ts';

/**
 * Proxies that are not rows of the project (spec 4.7: GET …/proxies without `source=db`): an
 * operator's pool, a vendor's rotating endpoints. A provider answers per user and project.
 */
export type DynamicProxy = {
  /** Optional (spec 2, Proxy); with one, a session can name the proxy by `proxyId`. */
  id?: string;
  name?: string;
  protocol: string;
  hostname: string;
  port: number;
  username: string | null;
  /** Used at launch; never shown. */
  password: string | null;
  metadata: Record<string, unknown>;
};

export type ProxyProvider = {
  readonly name: string;
  listDynamicProxies(scope: { userId: string | null; projectId: string }): Promise<DynamicProxy[]>;
};

/** The default: no dynamic proxies. */
export const noDynamicProxies: ProxyProvider = {
  name: 'none',
  listDynamicProxies: async () => [],
};

const configEntry = z
  .strictObject({
    id: z.string().trim().min(1).max(100).optional(),
    name: z.string().max(200).optional(),
    protocol: proxyProtocolSchema,
    hostname: proxyHostnameSchema,
    port: proxyPortSchema,
    username: proxyUsernameSchema.optional(),
    password: proxyPasswordSchema.optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    /** Project ids this proxy is offered to; every project when left out. */
    projects: z.array(z.uuid()).optional(),
  })
  .superRefine(refineSocks5Credentials);

/**
 * Reads `PROXY_LIST`: a JSON array of `{id?, name?, protocol, hostname, port, username?,
 * password?, metadata?, projects?}`. A bad value is a configuration error naming the entry.
 */
export function parseProxyList(value: string) {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new ConfigError('Invalid configuration:\n  PROXY_LIST: not valid JSON');
  }
  const parsed = z.array(configEntry).max(10_000).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`Invalid configuration:\n  PROXY_LIST: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const ids = parsed.data.flatMap((entry) => (entry.id ? [entry.id] : []));
  if (new Set(ids).size !== ids.length) throw new ConfigError('Invalid configuration:\n  PROXY_LIST: ids must be unique');
  return parsed.data;
}

/** Hands out the proxies listed in the configuration. */
export function configProxyProvider(value: string): ProxyProvider {
  const entries = parseProxyList(value);
  return {
    name: 'config',
    async listDynamicProxies({ projectId }) {
      return entries
        .filter((entry) => !entry.projects || entry.projects.includes(projectId))
        .map((entry) => ({
          ...(entry.id ? { id: entry.id } : {}),
          ...(entry.name !== undefined ? { name: entry.name } : {}),
          protocol: entry.protocol,
          hostname: entry.hostname,
          port: entry.port,
          username: entry.username ?? null,
          password: entry.password ?? null,
          metadata: entry.metadata ?? {},
        }));
    },
  };
}

const providers = new WeakMap<Config, ProxyProvider>();

/**
 * The provider the configuration selects, built once per config. Processes call it at start-up so
 * a bad `PROXY_LIST` stops them with a clear message; the routers call it per request.
 */
export function proxyProviderFor(config: Pick<Config, 'proxyList'>): ProxyProvider {
  const key = config as Config;
  let provider = providers.get(key);
  if (!provider) {
    provider = config.proxyList ? configProxyProvider(config.proxyList) : noDynamicProxies;
    providers.set(key, provider);
  }
  return provider;
}
