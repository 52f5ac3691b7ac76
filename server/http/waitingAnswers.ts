import type { FastifyReply } from 'fastify';

/**
 * The HTTP side of waiting starts (server/infra/waiting.ts waits on the engine): the client's
 * hang-up as an abort signal, and the 202 of an object still going.
 */

/**
 * Aborts when the HTTP client goes away before its answer is written. A reply's `close` comes
 * once the answer is written too, so the listener never outlives the request.
 */
export function clientGone(reply: FastifyReply | undefined): AbortSignal | undefined {
  const raw = reply?.raw;
  if (!raw) return undefined;
  const controller = new AbortController();
  raw.once('close', () => {
    if (!raw.writableEnded) controller.abort();
  });
  return controller.signal;
}

/**
 * Answers 202 on the reply when the object is still going: over REST the status says it; over
 * /trpc the object's own status does. The REST adapter keeps a 2xx status set here (server/app.ts).
 */
export function markRunning(reply: FastifyReply | undefined, running: boolean) {
  if (running) reply?.code(202);
}

/**
 * A waiting start's end: waits with `waitFor` (cut short when the client hangs up), then `reload`s
 * the object, which answers whether it is still going; then it is 202.
 */
export async function waitThenMark(
  reply: FastifyReply | undefined,
  waitFor: (clientGone: AbortSignal | undefined) => Promise<unknown>,
  reload: () => Promise<boolean>,
) {
  await waitFor(clientGone(reply));
  markRunning(reply, await reload());
}
