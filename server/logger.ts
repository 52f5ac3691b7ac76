import pino from 'pino';
import type { Config } from './config.ts';

/** Query parameters that carry credentials (CDP and live-view URLs, mail links). */
const secretParams = /([?&](?:token|key|secret|password|code)=)[^&#]*/gi;

export function redactUrl(url: string) {
  return url.replace(secretParams, '$1[redacted]');
}

export function createLogger(config: Pick<Config, 'logLevel'>) {
  return pino({
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
  });
}
