import type { FastifyReply, FastifyRequest } from 'fastify';

/** The client asked for a stream of events (`Accept: text/event-stream`) rather than a JSON page. */
export function wantsEventStream(req: FastifyRequest) {
  return String(req.headers.accept ?? '').includes('text/event-stream');
}

/**
 * Takes the reply over as a server-sent event stream and answers the raw response to write the
 * events to. Proxies on the way are told not to buffer it (`x-accel-buffering`), or a client
 * would see events only when a buffer fills.
 */
export function openEventStream(reply: FastifyReply) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  return raw;
}
