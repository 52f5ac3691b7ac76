import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Destination } from './destination.ts';

/**
 * One POST of a signed webhook (the Standard Webhooks specification: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature`, signed by its own library). The connection goes to the
 * address the destination check approved, whatever DNS says by now; TLS still checks the
 * certificate against the URL's host name. Redirects are answers, not followed.
 */

export type SendOutcome = { statusCode: number | null; error: string | null; durationMs: number };

/** What of an answer's body is read before the connection is dropped: the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** How much of a connection error's message an attempt keeps. */
const MAX_ERROR_LENGTH = 300;

export function signatureHeaders(secret: string, messageId: string, timestamp: Date, body: string) {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, timestamp, body),
  };
}

export function sendWebhook(options: {
  url: URL;
  destination: Destination;
  secret: string;
  messageId: string;
  body: string;
  timeoutMs: number;
  userAgent: string;
}): Promise<SendOutcome> {
  const { url, destination, body } = options;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [destination]);
    } else {
      callback(null, destination.address, destination.family);
    }
  };
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': options.userAgent,
    ...signatureHeaders(options.secret, options.messageId, new Date(), body),
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    let deadline: NodeJS.Timeout | undefined;
    const settle = (outcome: Omit<SendOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, durationMs: elapsed() });
    };
    const tooSlow = () => ({ statusCode: null, error: `no whole answer within ${Math.round(options.timeoutMs / 1000)} s` });
    const request = transport.request(
      url,
      { method: 'POST', headers, lookup: pinned, timeout: options.timeoutMs, agent: false },
      (answer) => {
        const statusCode = answer.statusCode ?? null;
        let read = 0;
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) answer.destroy();
        });
        const done = () => {
          const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
          settle({ statusCode, error: redirect ? `answered a redirect (${statusCode}); redirects are not followed` : null });
        };
        answer.on('end', done);
        answer.on('close', done);
        answer.on('error', done);
      },
    );
    // One deadline over the whole exchange: the socket's idle timeout alone would let an endpoint
    // that drips a byte now and then hold the try (and a worker's slot) for ever.
    deadline = setTimeout(() => {
      settle(tooSlow());
      request.destroy();
    }, options.timeoutMs);
    request.on('timeout', () => {
      settle(tooSlow());
      request.destroy();
    });
    request.on('error', (error: NodeJS.ErrnoException) => settle({ statusCode: null, error: connectionError(error) }));
    request.end(body);
  });
}

/** A connection failure in words, without the stack (a TLS error can list every name of a certificate). */
function connectionError(error: NodeJS.ErrnoException) {
  const known: Record<string, string> = {
    ECONNREFUSED: 'the connection was refused',
    ECONNRESET: 'the connection was reset',
    EHOSTUNREACH: 'the host cannot be reached',
    ENETUNREACH: 'the network cannot be reached',
  };
  return (error.code && known[error.code]) ?? `the request failed: ${error.message.slice(0, MAX_ERROR_LENGTH)}`;
}

/** Whether an answer counts as delivered: any 2xx. */
export function delivered(outcome: SendOutcome) {
  return outcome.error === null && outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
}
