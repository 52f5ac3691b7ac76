import pino, { type DestinationStream } from 'pino';
import type { Config } from './config.ts';

/**
 * Query parameters that carry credentials (CDP and live-view URLs, mail links). `input` is a
 * tRPC query's whole input as JSON, which can hold a token (external.registration).
 */
const secretParams = /([?&](?:token|key|secret|password|code|input)=)[^&#]*/gi;
/**
 * Paths whose last segment is a credential: the external-registration and link-confirmation tokens
 * travel in the path (the pages a provider's sign-in lands on, and the API the pages read them
 * from; `link/confirm` and `link/cancel` are routes, not tokens).
 */
const secretPathSegments =
  /(\/auth\/external-register\/|\/api\/auth\/external\/register\/|\/auth\/external-link\/|\/api\/auth\/external\/link\/(?!(?:confirm|cancel)(?:[/?#]|$)))[^/?#]+/gi;

export function redactUrl(url: string) {
  return url.replace(secretPathSegments, '$1[redacted]').replace(secretParams, '$1[redacted]');
}

/** `destination`: where the JSON lines go (stdout unless given; tests read them back). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream) {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', '*.password', '*.secret', '*.token'],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { method: string; url: string; id?: string; ip?: string }) => ({
        method: req.method,
        url: redactUrl(req.url),
        ip: req.ip,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
