import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream } from 'pino';
import type { Config } from './config.ts';
import { TOKEN_SHAPES } from './logs/secretRecogniser.ts';

const MARK = '[redacted]';

/**
 * The characters a URL's path segment or query value is read up to. Beyond the URL's own
 * delimiters: a space, a quote or a backslash, where the URL ends inside a log line's JSON (a
 * message, an error's stack), so a replacement never reaches past the JSON string it is in.
 */
const UNTIL = String.raw`[^/?#&\s"'\\<>]`;

/**
 * Query parameters that carry credentials (CDP and live-view URLs, relay URLs, mail links).
 * `input` is a tRPC query's whole input as JSON, which can hold a token (external.registration);
 * sent unencoded, its quotes are `\"` in a log line, and the value goes on past them.
 */
const secretParams = /([?&](?:token|key|secret|password|code|input|access_token|api_key|apikey)=)(?:[^&#\s"\\]|\\")*/gi;

/**
 * Routes whose path holds a credential: the external-registration and link-confirmation tokens
 * (the pages a provider's sign-in lands on, and the API the pages read them from; `link/confirm`
 * and `link/cancel` are routes, not tokens), the coordinator's token (`/api/coordinator/<token>/…`),
 * and a DevTools WebSocket's id (`/devtools/browser/<id>`: whoever reaches the port with it has
 * full CDP).
 */
const secretPathSegments = new RegExp(
  String.raw`(\/auth\/external-register\/|\/api\/auth\/external\/register\/|\/auth\/external-link\/|\/api\/auth\/external\/link\/(?!(?:confirm|cancel)(?:[/?#"\s\\]|$))|\/api\/coordinator\/|\/devtools\/(?:browser|page)\/)${UNTIL}+`,
  'gi',
);

/** Path segments long enough to be a token; each is then judged by `tokenLikeSegment`. */
const longSegments = new RegExp(String.raw`(\/)(${UNTIL}{20,})`, 'g');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a path segment is a token wherever it appears: a JWT, a relay token
 * (`<expiry>.<MAC>`), a long hex run, or a long random-looking run (upper and lower case and
 * digits, as base64url tokens are). Ids (uuids), slugs and words are not.
 */
export function tokenLikeSegment(segment: string) {
  if (UUID.test(segment)) return false;
  if (/^eyJ[\w-]+\.[\w-]+\.[\w-]*$/.test(segment)) return true;
  if (/^\d{1,12}\.[A-Za-z0-9_-]{43}$/.test(segment)) return true;
  if (!/^[A-Za-z0-9_~.+=%-]+$/.test(segment)) return false;
  if (/^[0-9a-f]{32,}$/i.test(segment)) return true;
  return /[A-Z]/.test(segment) && /[a-z]/.test(segment) && /\d/.test(segment);
}

/** A URL (or any text holding URLs) with its credentials blanked: token routes, token-like segments, secret parameters. */
export function redactUrl(url: string) {
  return url
    .replace(secretPathSegments, `$1${MARK}`)
    .replace(longSegments, (whole, slash: string, segment: string) => (tokenLikeSegment(segment) ? `${slash}${MARK}` : whole))
    .replace(secretParams, `$1${MARK}`);
}

const anyTokenShape = new RegExp(TOKEN_SHAPES.map((shape) => `(?:${shape.source})`).join('|'), 'g');

/**
 * Every log line passes this as it is written, whatever wrote it (a request, an error's message
 * or stack, the Temporal SDK, a workflow, an activity): URLs' credentials and token shapes
 * (JWTs, API keys) are blanked. Replacements hold no quote or backslash, so the line stays JSON.
 */
export function redactLogLine(line: string) {
  return redactUrl(line).replace(anyTokenShape, MARK);
}

/** `destination`: where the JSON lines go (stdout unless given; tests read them back). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream) {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', '*.password', '*.secret', '*.token'],
      censor: MARK,
    },
    serializers: {
      req: (req: { method: string; url: string; id?: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        ip: req.ip,
      }),
    },
    hooks: { streamWrite: redactLogLine },
  };
  return destination ? pino(options, destination) : pino(options);
}

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger (Fastify makes one per request, bound to its id) that becomes a pino child
 * on the first line written at an enabled level. pino serialises and redacts a child's bindings
 * when it is made, which costs more than most requests' logging at a production level: none
 * (docs/benchmarks/project-get.md).
 */
class RequestLogger {
  #parent: pino.Logger;
  #bindings: pino.Bindings;
  #options: pino.ChildLoggerOptions;
  #made: pino.Logger | undefined;

  constructor(parent: pino.Logger, bindings: pino.Bindings, options: pino.ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #logger() {
    this.#made ??= this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  #write(level: LogMethod, args: unknown[]) {
    if ((this.#made ?? this.#parent).isLevelEnabled(level)) (this.#logger()[level] as (...args: unknown[]) => void)(...args);
  }

  get level() {
    return (this.#made ?? this.#parent).level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  isLevelEnabled(level: string) {
    return (this.#made ?? this.#parent).isLevelEnabled(level);
  }

  bindings() {
    return this.#logger().bindings();
  }

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions) {
    return this.#logger().child(bindings, options);
  }

  fatal(...args: unknown[]) {
    this.#write('fatal', args);
  }

  error(...args: unknown[]) {
    this.#write('error', args);
  }

  warn(...args: unknown[]) {
    this.#write('warn', args);
  }

  info(...args: unknown[]) {
    this.#write('info', args);
  }

  debug(...args: unknown[]) {
    this.#write('debug', args);
  }

  trace(...args: unknown[]) {
    this.#write('trace', args);
  }

  silent() {}
}

/** Fastify's `childLoggerFactory`: a route's own level or serializers make the child at once, else it is made on first use. */
export function requestLogger(parent: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions): FastifyBaseLogger {
  if (Object.keys(options).length) return parent.child(bindings, options);
  return new RequestLogger(parent as pino.Logger, bindings, options);
}
