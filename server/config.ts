import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { defaultBrowsersPerHost, MAX_BROWSERS_PER_HOST } from './browsers/hosts/hostCapacity.ts';
import { currencyOf, PRICE_DIGITS, parseDecimal, type Scaled } from './decimals.ts';
import { parseAllowedDestinations } from './net/egressPolicy.ts';

/**
 * The one place that reads the environment. Everything else receives a `Config`.
 * Parsed once at start-up; a bad value stops the process with a message naming the variable.
 */

const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

const oidcProvider = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9_-]+$/i, 'provider names are alphanumerics, dashes, underscores')
    // These are path segments of their own under /api/auth/external/.
    .refine((name) => !['providers', 'register'].includes(name.toLowerCase()), 'provider names "providers" and "register" are reserved'),
  issuer: z.url(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
});

/**
 * One model the analysis and generation jobs may use (`MODELS`). `builtin`, the rule-based
 * proposer, is always there and needs no entry. Keys are read from the variable `apiKeyEnv` names.
 */
const modelEntry = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'model ids are letters, digits, . _ : - (at most 64)')
    .refine((id) => id !== 'builtin' && id !== 'local', 'the ids "builtin" and "local" are the service’s own models'),
  provider: z.enum(['openai', 'anthropic', 'openai-compatible']),
  model: z.string().min(1),
  baseUrl: z.url().optional(),
  apiKeyEnv: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name')
    .optional(),
  roles: z.array(z.enum(['analysis', 'generation'])).min(1),
  vision: z.boolean().optional(),
  /** Prices per million tokens, in the default currency's minor units (decimal strings allowed). */
  inputPricePerMTok: z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d+)?$/)]).optional(),
  outputPricePerMTok: z.union([z.number().nonnegative(), z.string().regex(/^\d+(\.\d+)?$/)]).optional(),
});
export type ModelEntry = z.infer<typeof modelEntry>;

const minorUnits = z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,15}$/)]).transform((value) => BigInt(value));
const bonusAmount = z.union([z.number().nonnegative(), z.string().regex(/^\d{1,15}(\.\d{1,6})?$/)]).transform(String);

/** A plan users may subscribe to (`BILLING_PLANS`): one Stripe price, and its bonus pools per period. */
const planEntry = z.strictObject({
  planId: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'plan ids are letters, digits, . _ - (at most 100)'),
  priceId: z.string().min(1).max(255),
  name: z.string().min(1).max(100),
  currency: z
    .string()
    .regex(/^[a-z]{3}$/i)
    .transform((code) => code.toLowerCase())
    .optional(),
  /** Minor units a month (2900 is 29.00). */
  monthlyPrice: minorUnits,
  /** Minor units off the monthly price, shown on the card. */
  discount: minorUnits.optional(),
  headline: z.string().max(200).default(''),
  subheading: z.string().max(300).default(''),
  features: z.array(z.string().max(200)).max(30).default([]),
  /** Included each period: network bytes, CPU seconds, model tokens. */
  bonuses: z.strictObject({ network: bonusAmount.optional(), cpu: bonusAmount.optional(), tokens: bonusAmount.optional() }).default({}),
});
export type PlanEntry = Omit<z.infer<typeof planEntry>, 'currency' | 'discount'> & { currency: string; discount: bigint };

/** Prices per unit of usage in minor units of the default currency, as decimals (`USAGE_PRICING`). */
const usagePricingOverrides = z.strictObject({
  cpu: z.string().optional(),
  network: z.string().optional(),
  tokens: z.string().optional(),
});

/**
 * Default usage prices, minor units per unit: a CPU second 0.0014 (about 0.05 a CPU-hour), a
 * network byte 0.00000001 (0.10 a GB), a model token 0.0001 (1.00 a million tokens).
 */
const defaultUsagePricing = { cpu: '0.0014', network: '0.00000001', tokens: '0.0001' } as const;

/** What rate-limited routes count against (the routes: `rateLimitedRoutes`, server/auth/rateLimits.ts); limits per client IP and per account. */
export const rateLimitedActions = ['login', 'register', 'resetRequest', 'verifySubmit', 'twoFactor', 'externalFlow'] as const;
export type RateLimitedAction = (typeof rateLimitedActions)[number];
/**
 * `0` means no limit on that dimension. `perAccountAllIps` (login only): failed attempts on one
 * account from every address together; with it, `perAccount` counts per account and address.
 */
export type RateLimitRule = { perIp: number; perAccount: number; perAccountAllIps?: number; windowSeconds: number };

/** A mebibyte: the size settings are given in MB and applied in bytes. */
const MB = 1024 * 1024;
const MINUTE = 60;
const defaultRateLimits: Record<RateLimitedAction, RateLimitRule> = {
  login: { perIp: 100, perAccount: 10, perAccountAllIps: 100, windowSeconds: 15 * MINUTE },
  register: { perIp: 20, perAccount: 5, windowSeconds: 60 * MINUTE },
  resetRequest: { perIp: 20, perAccount: 5, windowSeconds: 60 * MINUTE },
  verifySubmit: { perIp: 50, perAccount: 10, windowSeconds: 15 * MINUTE },
  twoFactor: { perIp: 50, perAccount: 5, windowSeconds: 15 * MINUTE },
  /** External sign-in's browser steps (`…/init`, `…/redirect`): per address only. */
  externalFlow: { perIp: 60, perAccount: 0, windowSeconds: 15 * MINUTE },
};

const rateLimitOverrides = z.partialRecord(
  z.enum(rateLimitedActions),
  z.strictObject({
    perIp: z.number().int().min(0).optional(),
    perAccount: z.number().int().min(0).optional(),
    perAccountAllIps: z.number().int().min(0).optional(),
    windowSeconds: z.number().int().min(1).optional(),
  }),
);

// ---- Quotas per account (docs/quotas.md) ----------------------------------------
// What one tenant may hold and run, so that no account takes the whole machine. Things kept until
// deleted (projects, webhook endpoints) are refused with 409 at the bound; things that end by
// themselves (browsers) with 429; webhook deliveries past theirs wait their turn, never dropped.

const quotaVariables = {
  /** Projects one account may own; creating one more answers 409 `project_limit_reached`. */
  PROJECTS_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(50),
  /**
   * Browsers (`starting` or `running`) one account's projects may run together; one more answers
   * 429 `account_browser_limit_reached`. Unset: twice BROWSERS_PER_PROJECT, at least 8.
   */
  BROWSERS_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Webhook endpoints one project may have; adding one more answers 409 `webhook_endpoint_limit_reached`. */
  WEBHOOK_ENDPOINTS_PER_PROJECT: z.coerce.number().int().min(1).max(10_000).default(25),
  /**
   * Webhook deliveries of one project being tried or waiting to be retried at once; later ones are
   * queued in order and start as earlier ones end (docs/webhooks.md, Deliveries in flight).
   */
  WEBHOOK_DELIVERIES_IN_FLIGHT_PER_PROJECT: z.coerce.number().int().min(1).max(100_000).default(100),
};

const quotaSchema = z.object(quotaVariables);

function parseQuotas(e: z.infer<typeof quotaSchema> & { BROWSERS_PER_PROJECT: number }) {
  return {
    projectsPerAccount: e.PROJECTS_PER_ACCOUNT,
    browsersPerAccount: e.BROWSERS_PER_ACCOUNT ?? Math.max(8, 2 * e.BROWSERS_PER_PROJECT),
    webhookEndpointsPerProject: e.WEBHOOK_ENDPOINTS_PER_PROJECT,
    webhookDeliveriesInFlightPerProject: e.WEBHOOK_DELIVERIES_IN_FLIGHT_PER_PROJECT,
  };
}
// ---- end of quotas -----------------------------------------------------------------------------

const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((value) => value === 'true' || value === '1');

const environment = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** Set by npm for the scripts it runs (`npm start`): the process then ends with npm (server/main/start.ts). */
  npm_lifecycle_event: optionalString,
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: optionalString.pipe(z.url().optional()),
  DATA_DIR: z.string().default('.data'),
  DATABASE_URL: optionalString,
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  TEMPORAL_DEV_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('control'),
  TEMPORAL_CLI_PATH: optionalString,
  DATABASE_TIMEOUT_SECONDS: z.coerce.number().min(0.5).max(300).default(3),
  TEMPORAL_TIMEOUT_SECONDS: z.coerce.number().min(0.5).max(300).default(3),
  CHROMIUM_PATH: optionalString,
  JWT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('Browserflow <no-reply@localhost>'),
  OIDC_PROVIDERS: optionalString,
  /** JSON list of models for analysis and generation (see `modelEntry`); `builtin` is always there. */
  MODELS: optionalString,
  /**
   * A GGUF for the `local` analysis model (node-llama-cpp, in the worker); `off` for none. Default:
   * the SmolLM2-135M-Instruct file `scripts/setup.sh` fetches, when it is there.
   */
  LOCAL_MODEL: optionalString,
  /** Bounds of one analysis or generation job: model steps, tokens (input + output), seconds. */
  AGENT_MAX_STEPS: z.coerce.number().int().min(1).max(200).default(24),
  AGENT_MAX_TOKENS: z.coerce.number().int().min(1000).default(400_000),
  AGENT_MAX_SECONDS: z.coerce.number().int().min(10).max(7200).default(600),
  /** Lets openid-client talk to an http:// issuer. For tests and local development only. */
  OIDC_ALLOW_INSECURE_REQUESTS: flag,
  /** `off`, or JSON overriding the defaults per action: `{"login": {"perIp": 20, "windowSeconds": 600}}`. */
  RATE_LIMITS: optionalString,
  /** Fastify's `trustProxy`: `true` (trust every hop), or the proxies' addresses/CIDRs, comma-separated. */
  TRUST_PROXY: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /**
   * A request's headers, and then its whole body, must arrive within this (Node's headersTimeout and
   * requestTimeout); a slower one is answered 408 and closed. What the server sends back (a log
   * stream, an MCP stream) and an upgraded WebSocket are not bound by it.
   */
  REQUEST_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(30),
  /**
   * Connections one client address may hold open at once (an IPv6 client: its /64); 0: no cap. One
   * more is reset as it arrives. Counted on the socket's address, so behind a load balancer every
   * client is the balancer: exempt it (CONNECTION_CAP_EXEMPT) and cap at the balancer.
   */
  MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(0).default(256),
  /** Addresses or CIDRs, comma-separated, whose connections are not capped. None by default, loopback included. */
  CONNECTION_CAP_EXEMPT: optionalString,
  ADMIN_EMAILS: optionalString,
  BROWSER_HOST_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,60}$/)
    .default('local'),
  /**
   * Where the host's relay listens and the api dials it: an IP address, a host name, or `auto` (the
   * machine's first non-internal IPv4 address, for containers). Chromium's DevTools stay on 127.0.0.1.
   */
  BROWSER_HOST_ADDRESS: z
    .string()
    .trim()
    .toLowerCase()
    .refine(
      (value) =>
        value === 'auto' ||
        isIP(value) !== 0 ||
        /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(value),
      'an IP address, a host name or "auto"',
    )
    .default('127.0.0.1'),
  /** The relay's port on BROWSER_HOST_ADDRESS; 0: a free one, chosen at start and recorded in `browser_hosts`. */
  BROWSER_RELAY_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  /** Signs the relay's connection tokens; the api and every host need the same. Unset: derived from JWT_SECRET. */
  BROWSER_RELAY_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** Unset: from the machine's memory and cores (server/browsers/hosts/hostCapacity.ts). */
  BROWSERS_PER_HOST: z.coerce.number().int().min(1).max(MAX_BROWSERS_PER_HOST).optional(),
  BROWSERS_PER_PROJECT: z.coerce.number().int().min(1).max(500).default(4),
  /**
   * The warm pool's floor: browsers of the default launch settings a host keeps warm whatever the
   * demand. Above it the pool follows the recent rate of starts, up to BROWSER_WARM_POOL_MAX
   * (docs/browsers.md, Warm pool).
   */
  BROWSER_WARM_POOL: z.coerce.number().int().min(0).max(50).default(1),
  /**
   * The most browsers of the default settings a host keeps warm when starts come fast, as far as
   * its memory holds them. At or below BROWSER_WARM_POOL: a fixed pool of BROWSER_WARM_POOL.
   */
  BROWSER_WARM_POOL_MAX: z.coerce.number().int().min(0).max(100).default(8),
  /** The window over which a host counts starts to size its warm pool: a start stops counting after this. */
  BROWSER_WARM_DEMAND_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** A warm browser above the pool's current target that waited this long unclaimed is closed: the pool shrinks when demand stops. */
  BROWSER_WARM_IDLE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /**
   * Warm browsers a host keeps, beyond BROWSER_WARM_POOL, for launch settings (screen, args, image)
   * it started recently: one per setting, at most this many; kept until none of that setting
   * started for BROWSER_WARM_RECENT_SECONDS.
   */
  BROWSER_WARM_RECENT: z.coerce.number().int().min(0).max(20).default(2),
  BROWSER_WARM_RECENT_SECONDS: z.coerce.number().int().min(1).default(900),
  BROWSER_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(5).default(300),
  BROWSER_MAX_LIFETIME_SECONDS: z.coerce.number().int().min(10).default(3600),
  /**
   * A browser its host runs that nothing can use this long is destroyed: a warm one neither offered
   * nor held by an active resource (and replaced), or one whose resource is no longer active.
   */
  BROWSER_ORPHAN_GRACE_SECONDS: z.coerce.number().int().min(1).default(60),
  /**
   * A host asked to stop (SIGTERM) takes no new browsers and lets its running ones go on this long
   * before it stops them (docs/browsers.md, Draining a host). 0: it stops them at once.
   */
  BROWSER_DRAIN_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  /** How often the control worker looks for resources whose workflow is gone, and how old they must be. */
  BROWSER_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(30),
  BROWSER_SWEEP_GRACE_SECONDS: z.coerce.number().int().min(1).default(120),
  PROXY_LIST: optionalString,
  /**
   * `restricted`: browsers may not reach loopback, private, link-local or CGNAT addresses, nor this
   * machine's (docs/browsers.md, Egress). `open`: anywhere — unsafe with more than one tenant.
   */
  BROWSER_EGRESS_POLICY: z.enum(['restricted', 'open']).default('restricted'),
  /** Exceptions to the egress policy: comma-separated `host`, `host:port` or CIDR entries. */
  BROWSER_ALLOWED_PRIVATE_DESTINATIONS: optionalString,
  /**
   * `on`: every browser runs as BROWSER_SANDBOX_USER in namespaces of its own whose only way out
   * is its egress proxy (docs/browsers.md, Threat model); a host that cannot build the sandbox
   * refuses to start. `off`: Chromium runs as the host's user on its network (development only;
   * the host warns at every start).
   */
  BROWSER_SANDBOX: z.enum(['on', 'off']).default('on'),
  BROWSER_SANDBOX_USER: z
    .string()
    .regex(/^[a-z_][a-z0-9_-]*$/, 'must be a user name')
    .default('browserflow-browser'),
  /**
   * Every browser's memory (its processes, and its disk, which is memory: see BROWSER_DISK_LIMIT_MB)
   * is held to this by a cgroup of its own; a browser past it is ended, `out of memory`.
   */
  BROWSER_MEMORY_LIMIT_MB: z.coerce.number().int().min(256).default(2048),
  /**
   * A browser's profile (and downloads) live on a tmpfs of this size inside its sandbox: a page that
   * writes past it gets a quota error. Counted in BROWSER_MEMORY_LIMIT_MB, so it must be below it.
   */
  BROWSER_DISK_LIMIT_MB: z.coerce.number().int().min(32).default(1024),
  /** Processes and threads of one browser (pids.max): a fork bomb stops here. */
  BROWSER_PIDS_LIMIT: z.coerce.number().int().min(64).default(1024),
  /** One browser's share of the CPU when the machine is busy, against its host's other browsers (cgroup v2 cpu.weight: 1–10000, 100 is the kernel's default). */
  BROWSER_CPU_WEIGHT: z.coerce.number().int().min(1).max(10_000).default(100),
  /**
   * Host names the MCP endpoint may be reached by, comma-separated; also the origins browser
   * pages may call it from. Unset: any Host (see server/http/mcpRoutes.ts, `mcpRequestAllowed`).
   */
  MCP_ALLOWED_HOSTS: optionalString,
  /** An MCP session without a request or an open stream for this long is closed (clients reconnect). */
  MCP_SESSION_IDLE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  /** How long a function execution (POST …/functions/slug/{slug}/execute, MCP tools/call) may take. */
  FUNCTION_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  /**
   * Calls in contexts (docs/browsers.md, Contexts for calls): how many one project runs at once,
   * how many more may wait their turn, and for how long, before a 429 (call_queue_full, call_queue_timeout).
   */
  CALLS_PER_PROJECT: z.coerce.number().int().min(1).max(500).default(5),
  CALL_QUEUE_MAX: z.coerce.number().int().min(0).max(10_000).default(50),
  CALL_QUEUE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  /** A project's browser for calls is replaced after this many contexts, or this age (its calls end first). */
  CALL_BROWSER_MAX_CONTEXTS: z.coerce.number().int().min(1).max(100_000).default(200),
  CALL_BROWSER_MAX_AGE_SECONDS: z.coerce.number().int().min(10).max(86_400).default(1800),
  /** Run screenshots (docs/pipelines.md): the most one run keeps, in bytes, and how many days they are kept. */
  RUN_SCREENSHOTS_MAX_BYTES: z.coerce.number().int().min(0).max(1_000_000_000).default(10_000_000),
  RUN_SCREENSHOT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(14),
  /** The most a persisted session's saved profile may take, compressed (docs/sessions-and-proxies.md, Profiles that persist). */
  PROFILE_MAX_MB: z.coerce.number().int().min(1).max(1024).default(50),
  /** Browser downloads (docs/browsers.md, Downloads): the most one browser may download, in bytes, and how many days files are kept. */
  DOWNLOAD_MAX_BYTES: z.coerce.number().int().min(0).max(1_000_000_000).default(100_000_000),
  DOWNLOAD_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(7),
  /** Browser recordings (docs/browsers.md, Recordings): the most one browser's recording takes, compressed, and how many days they are kept. */
  RECORDING_MAX_BYTES: z.coerce.number().int().min(0).max(10_000_000_000).default(50_000_000),
  RECORDING_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(14),
  /** Webhook retries (docs/webhooks.md): the first wait, the longest, and how long to keep trying. */
  WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  WEBHOOK_RETRY_MAX_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(7200),
  WEBHOOK_RETRY_HOURS: z.coerce.number().min(0).max(168).default(25),
  /** How long an endpoint has to answer one delivery. */
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(60).default(10),
  /** A DNS server (`address` or `address:port`) for endpoint names; unset: the system's resolver. */
  WEBHOOK_DNS_SERVER: optionalString,
  /** The `funds.low` webhook event fires when an account's balance falls below this, in minor units. */
  FUNDS_LOW_THRESHOLD: z.coerce.number().int().min(0).default(500),
  /** The path token of `/api/coordinator/<token>/…` (usage reports); unset: those routes answer 404. */
  COORDINATOR_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** The bearer token of `/api/external-session…`; unset: those routes answer 404. */
  EXTERNAL_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** Billing is on only with this key; without it plans are empty and nobody is cut off. */
  STRIPE_SECRET_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  /** Another host for the Stripe SDK (a local stand-in in tests), e.g. `http://127.0.0.1:12111`. */
  STRIPE_API_BASE: optionalString.pipe(z.url().optional()),
  BILLING_CURRENCY: z
    .string()
    .regex(/^[a-z]{3}$/i, 'an ISO 4217 code such as usd')
    .default('usd')
    .transform((code) => code.toLowerCase())
    .refine((code) => currencyOf(code) !== undefined, 'not a known ISO 4217 currency'),
  /** JSON list of plans (see `planEntry`). */
  BILLING_PLANS: optionalString,
  /** JSON `{cpu?, network?, tokens?}`: minor units per unit as decimal strings. */
  USAGE_PRICING: optionalString,
  ...quotaVariables,
});

export type Config = ReturnType<typeof parseConfig>;

/**
 * Beside DATA_DIR (which is private, 0700): what other local users must reach, embedded
 * PostgreSQL's cluster and the browsers' folders (server/infra/dataDir.ts).
 */
export function sharedDataDirOf(dataDir: string) {
  return `${dataDir}-shared`;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseConfig(env: Record<string, string | undefined>) {
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.NODE_ENV === 'production' && !e.JWT_SECRET) {
    throw new ConfigError('Invalid configuration:\n  JWT_SECRET: required in production');
  }
  // Without SMTP the mails (one-time tokens in them) stay in the database as a development outbox.
  if (e.NODE_ENV === 'production' && !e.SMTP_URL) {
    throw new ConfigError('Invalid configuration:\n  SMTP_URL: required in production (without it mail is only kept, for development)');
  }
  if (e.NODE_ENV === 'production' && e.OIDC_ALLOW_INSECURE_REQUESTS) {
    throw new ConfigError('Invalid configuration:\n  OIDC_ALLOW_INSECURE_REQUESTS: not allowed in production');
  }
  const rateLimits = parseRateLimits(e.RATE_LIMITS);
  let oidcProviders: z.infer<typeof oidcProvider>[] = [];
  if (e.OIDC_PROVIDERS) {
    let raw: unknown;
    try {
      raw = JSON.parse(e.OIDC_PROVIDERS);
    } catch {
      throw new ConfigError('Invalid configuration:\n  OIDC_PROVIDERS: not valid JSON');
    }
    const providers = z.array(oidcProvider).safeParse(raw);
    if (!providers.success) {
      throw new ConfigError(`Invalid configuration:\n  OIDC_PROVIDERS: ${providers.error.issues[0]?.message}`);
    }
    oidcProviders = providers.data;
  }
  const models = parseModels(e.MODELS, env);
  const billing = parseBilling(e);
  const allowedDestinations = parseAllowedDestinations(e.BROWSER_ALLOWED_PRIVATE_DESTINATIONS);
  if ('invalid' in allowedDestinations) {
    throw new ConfigError(
      `Invalid configuration:\n  BROWSER_ALLOWED_PRIVATE_DESTINATIONS: "${allowedDestinations.invalid}" is not a host, host:port, IP address or CIDR`,
    );
  }
  // The disk is a tmpfs charged to the browser's memory cgroup: a disk as large as the memory would
  // end the browser out of memory instead of giving the page a quota error.
  if (e.BROWSER_DISK_LIMIT_MB >= e.BROWSER_MEMORY_LIMIT_MB) {
    throw new ConfigError(
      `Invalid configuration:\n  BROWSER_DISK_LIMIT_MB: ${e.BROWSER_DISK_LIMIT_MB} must be below BROWSER_MEMORY_LIMIT_MB (${e.BROWSER_MEMORY_LIMIT_MB}): a browser's disk is memory, counted in its memory limit`,
    );
  }
  const localModel = parseLocalModel(e.LOCAL_MODEL);
  const dataDir = path.resolve(e.DATA_DIR);
  return {
    env: e.NODE_ENV,
    /** Started by an npm script: npm stays its parent, and it must not outlive npm. */
    startedByNpm: e.npm_lifecycle_event !== undefined,
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, ''),
    dataDir,
    sharedDataDir: sharedDataDirOf(dataDir),
    databaseUrl: e.DATABASE_URL,
    /**
     * How long a connection from the pool, a connect and a statement may take before the service
     * gives up on the database and answers 503 (db/orm.ts).
     */
    databaseTimeoutMs: e.DATABASE_TIMEOUT_SECONDS * 1000,
    embeddedPostgresPort: e.EMBEDDED_POSTGRES_PORT,
    temporal: {
      devPort: e.TEMPORAL_DEV_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      /** How long one call to the engine may go unanswered before it fails (server/infra/temporalClient.ts). */
      timeoutMs: e.TEMPORAL_TIMEOUT_SECONDS * 1000,
    },
    chromiumPath: e.CHROMIUM_PATH ?? '/usr/bin/chromium',
    jwtSecret: e.JWT_SECRET,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    oidcProviders,
    oidcAllowInsecureRequests: e.OIDC_ALLOW_INSECURE_REQUESTS,
    /** null: rate limiting is off (RATE_LIMITS=off). */
    rateLimits,
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestTimeoutSeconds: e.REQUEST_TIMEOUT_SECONDS,
    /** `perClient` 0: no cap. */
    connectionCap: { perClient: e.MAX_CONNECTIONS_PER_CLIENT, exempt: parseAddressList('CONNECTION_CAP_EXEMPT', e.CONNECTION_CAP_EXEMPT) },
    browsers: {
      hostId: e.BROWSER_HOST_ID,
      hostAddress: resolveHostAddress(e.BROWSER_HOST_ADDRESS),
      relayPort: e.BROWSER_RELAY_PORT,
      /** Unset: the relay key comes from the service secret (server/browsers/tokens/relayTokens.ts). */
      relaySecret: e.BROWSER_RELAY_SECRET,
      perHost: e.BROWSERS_PER_HOST ?? defaultBrowsersPerHost(),
      perProject: e.BROWSERS_PER_PROJECT,
      warmPool: e.BROWSER_WARM_POOL,
      warmPoolMax: e.BROWSER_WARM_POOL_MAX,
      warmDemandSeconds: e.BROWSER_WARM_DEMAND_SECONDS,
      warmIdleSeconds: e.BROWSER_WARM_IDLE_SECONDS,
      warmRecent: e.BROWSER_WARM_RECENT,
      warmRecentSeconds: e.BROWSER_WARM_RECENT_SECONDS,
      idleTimeoutSeconds: e.BROWSER_IDLE_TIMEOUT_SECONDS,
      maxLifetimeSeconds: e.BROWSER_MAX_LIFETIME_SECONDS,
      orphanGraceSeconds: e.BROWSER_ORPHAN_GRACE_SECONDS,
      drainSeconds: e.BROWSER_DRAIN_SECONDS,
      sweepIntervalSeconds: e.BROWSER_SWEEP_INTERVAL_SECONDS,
      sweepGraceSeconds: e.BROWSER_SWEEP_GRACE_SECONDS,
      /** Where browsers may connect (server/net/egressPolicy.ts); null when the policy is open. */
      egress: e.BROWSER_EGRESS_POLICY === 'open' ? null : { allowed: allowedDestinations },
      /** The user sandboxed browsers run as; null: BROWSER_SANDBOX=off. */
      sandboxUser: e.BROWSER_SANDBOX === 'on' ? e.BROWSER_SANDBOX_USER : null,
      /** A persisted session's saved profile at most, compressed. */
      profileMaxBytes: e.PROFILE_MAX_MB * MB,
      /** What each browser may hold (server/browsers/host/chromium/browserCgroups.ts, and its disk in browserSandbox.ts). */
      limits: {
        memoryBytes: e.BROWSER_MEMORY_LIMIT_MB * MB,
        diskBytes: e.BROWSER_DISK_LIMIT_MB * MB,
        pids: e.BROWSER_PIDS_LIMIT,
        cpuWeight: e.BROWSER_CPU_WEIGHT,
      },
    },
    /** JSON list of proxies the `config` provider hands out (GET …/proxies without source=db). */
    proxyList: e.PROXY_LIST,
    functions: { timeoutSeconds: e.FUNCTION_TIMEOUT_SECONDS },
    calls: {
      perProject: e.CALLS_PER_PROJECT,
      queueMax: e.CALL_QUEUE_MAX,
      queueTimeoutSeconds: e.CALL_QUEUE_TIMEOUT_SECONDS,
      browserMaxContexts: e.CALL_BROWSER_MAX_CONTEXTS,
      browserMaxAgeSeconds: e.CALL_BROWSER_MAX_AGE_SECONDS,
    },
    screenshots: { maxBytesPerRun: e.RUN_SCREENSHOTS_MAX_BYTES, retentionDays: e.RUN_SCREENSHOT_RETENTION_DAYS },
    downloads: { maxBytesPerBrowser: e.DOWNLOAD_MAX_BYTES, retentionDays: e.DOWNLOAD_RETENTION_DAYS },
    recordings: { maxBytes: e.RECORDING_MAX_BYTES, retentionDays: e.RECORDING_RETENTION_DAYS },
    /** Models besides `builtin`, and the bounds of one agent job. */
    agents: { models, localModel, maxSteps: e.AGENT_MAX_STEPS, maxTokens: e.AGENT_MAX_TOKENS, maxSeconds: e.AGENT_MAX_SECONDS },
    billing,
    webhooks: {
      /**
       * Exceptions to the egress policy for endpoints: the browsers' (BROWSER_ALLOWED_PRIVATE_DESTINATIONS).
       * BROWSER_EGRESS_POLICY=open does not open webhooks: the service's own network stays out of reach.
       */
      allowedDestinations,
      retryInitialSeconds: e.WEBHOOK_RETRY_INITIAL_SECONDS,
      retryMaxIntervalSeconds: e.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS,
      retryHours: e.WEBHOOK_RETRY_HOURS,
      timeoutSeconds: e.WEBHOOK_TIMEOUT_SECONDS,
      dnsServer: e.WEBHOOK_DNS_SERVER,
    },
    coordinatorToken: e.COORDINATOR_TOKEN,
    externalToken: e.EXTERNAL_TOKEN,
    /** `allowedHosts` null: the MCP endpoint does not check Host (Origin is always checked). */
    mcp: { allowedHosts: parseHostList(e.MCP_ALLOWED_HOSTS), sessionIdleSeconds: e.MCP_SESSION_IDLE_SECONDS },
    /** Quotas per account (docs/quotas.md). */
    quotas: parseQuotas(e),
    adminEmails: (e.ADMIN_EMAILS ?? '')
      .split(',')
      .map((email) => email.trim().toLowerCase())
      .filter(Boolean),
  };
}

function parseRateLimits(value: string | undefined): Record<RateLimitedAction, RateLimitRule> | null {
  if (value === 'off') return null;
  if (!value) return defaultRateLimits;
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new ConfigError('Invalid configuration:\n  RATE_LIMITS: neither "off" nor valid JSON');
  }
  const parsed = rateLimitOverrides.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`Invalid configuration:\n  RATE_LIMITS: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const limits = { ...defaultRateLimits };
  for (const action of rateLimitedActions) limits[action] = { ...defaultRateLimits[action], ...parsed.data[action] };
  return limits;
}

function parseModels(value: string | undefined, env: Record<string, string | undefined>): (ModelEntry & { apiKey?: string })[] {
  if (!value) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    throw new ConfigError('Invalid configuration:\n  MODELS: not valid JSON');
  }
  const parsed = z.array(modelEntry).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`Invalid configuration:\n  MODELS: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const seen = new Set<string>();
  for (const model of parsed.data) {
    if (seen.has(model.id)) throw new ConfigError(`Invalid configuration:\n  MODELS: the id "${model.id}" appears twice`);
    seen.add(model.id);
    if (model.provider === 'openai-compatible' && !model.baseUrl) {
      throw new ConfigError(`Invalid configuration:\n  MODELS: "${model.id}": an openai-compatible model needs a baseUrl`);
    }
    if (model.apiKeyEnv && !env[model.apiKeyEnv]) {
      throw new ConfigError(`Invalid configuration:\n  MODELS: "${model.id}": the variable ${model.apiKeyEnv} (its key) is not set`);
    }
  }
  // The key itself, read here like every other variable; it is only ever handed to the provider.
  return parsed.data.map((model) => (model.apiKeyEnv ? { ...model, apiKey: env[model.apiKeyEnv] } : model));
}

function parseJson(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new ConfigError(`Invalid configuration:\n  ${name}: not valid JSON`);
  }
}

type BillingEnv = Pick<
  z.infer<typeof environment>,
  | 'STRIPE_SECRET_KEY'
  | 'STRIPE_WEBHOOK_SECRET'
  | 'STRIPE_API_BASE'
  | 'BILLING_CURRENCY'
  | 'BILLING_PLANS'
  | 'USAGE_PRICING'
  | 'FUNDS_LOW_THRESHOLD'
>;

/**
 * Billing: on only with a Stripe key (then the webhook secret is required too). Plans and prices
 * are read either way; with billing off the plans are not offered and nobody is cut off.
 */
function parseBilling(e: BillingEnv) {
  const enabled = Boolean(e.STRIPE_SECRET_KEY);
  if (enabled && !e.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError('Invalid configuration:\n  STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set');
  }
  const currency = e.BILLING_CURRENCY;
  const overrides = e.USAGE_PRICING ? usagePricingOverrides.safeParse(parseJson('USAGE_PRICING', e.USAGE_PRICING)) : undefined;
  if (overrides && !overrides.success) {
    const issue = overrides.error.issues[0];
    throw new ConfigError(`Invalid configuration:\n  USAGE_PRICING: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  const pricing = {} as Record<'cpu' | 'network' | 'tokens', Scaled>;
  for (const unit of ['cpu', 'network', 'tokens'] as const) {
    const text = overrides?.data?.[unit] ?? defaultUsagePricing[unit];
    const price = parseDecimal(text, PRICE_DIGITS);
    if (!price) {
      throw new ConfigError(
        `Invalid configuration:\n  USAGE_PRICING: ${unit}: "${text}" is not a non-negative decimal with at most ${PRICE_DIGITS} decimals`,
      );
    }
    pricing[unit] = price;
  }
  let plans: PlanEntry[] = [];
  if (e.BILLING_PLANS) {
    const parsed = z.array(planEntry).safeParse(parseJson('BILLING_PLANS', e.BILLING_PLANS));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ConfigError(`Invalid configuration:\n  BILLING_PLANS: ${issue?.path.join('.')}: ${issue?.message}`);
    }
    plans = parsed.data.map((plan) => ({ ...plan, currency: plan.currency ?? currency, discount: plan.discount ?? 0n }));
    const seen = new Set<string>();
    for (const plan of plans) {
      for (const key of [`plan ${plan.planId}`, `price ${plan.priceId}`]) {
        if (seen.has(key)) throw new ConfigError(`Invalid configuration:\n  BILLING_PLANS: the ${key} appears twice`);
        seen.add(key);
      }
      if (!currencyOf(plan.currency)) {
        throw new ConfigError(`Invalid configuration:\n  BILLING_PLANS: ${plan.planId}: "${plan.currency}" is not a known currency`);
      }
    }
  }
  return {
    enabled,
    stripe: enabled
      ? { secretKey: e.STRIPE_SECRET_KEY as string, webhookSecret: e.STRIPE_WEBHOOK_SECRET as string, apiBase: e.STRIPE_API_BASE }
      : null,
    currency,
    plans,
    pricing,
    /** `funds.low` (docs/webhooks.md) fires when a balance falls below this, in minor units. */
    fundsLowThreshold: BigInt(e.FUNDS_LOW_THRESHOLD),
  };
}

const DEFAULT_LOCAL_MODEL = '.models/SmolLM2-135M-Instruct.Q4_1.gguf';

function parseLocalModel(value: string | undefined): { path: string; name: string } | null {
  if (value === 'off') return null;
  const file = path.resolve(value ?? DEFAULT_LOCAL_MODEL);
  if (!existsSync(file)) {
    if (value) throw new ConfigError(`Invalid configuration:\n  LOCAL_MODEL: no file at ${file}`);
    return null;
  }
  return { path: file, name: path.basename(file).replace(/\.gguf$/i, '') };
}

function parseHostList(value: string | undefined): string[] | null {
  if (!value) return null;
  const hosts = value
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  const bad = hosts.find((host) => !/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)$/.test(host));
  if (bad) throw new ConfigError(`Invalid configuration:\n  MCP_ALLOWED_HOSTS: "${bad}" is not a host name (no scheme, port or path)`);
  return hosts.length ? hosts : null;
}

/** `auto`: the machine's first non-internal IPv4 address (a container's own), read once at start. */
function resolveHostAddress(value: string) {
  if (value !== 'auto') return value;
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  if (!address)
    throw new ConfigError('Invalid configuration:\n  BROWSER_HOST_ADDRESS: "auto" found no non-internal IPv4 address on this machine');
  return address;
}

/** Comma-separated IP addresses and CIDRs (`10.0.0.0/8`, `fd00::/8`). */
function parseAddressList(name: string, value: string | undefined) {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || rest.length > 0) {
      throw new ConfigError(`Invalid configuration:\n  ${name}: "${entry}" is not an IP address or CIDR`);
    }
  }
  return entries;
}

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  return value
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

export function loadConfig(overrides: Record<string, string | undefined> = {}): Config {
  return parseConfig({ ...process.env, ...overrides });
}
