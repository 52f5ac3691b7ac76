import { describe, expect, it } from 'vitest';
import {
  cleanupsAfterAll,
  type EmbeddedDependency,
  type EmbeddedService,
  hangWhole,
  npmStartWithOwner,
  START_TIMEOUT_MS,
} from '../support/embeddedService.ts';
import type { Credentials, HttpResponse } from '../support/http.ts';
import { longWaitSource } from '../support/pipelines.ts';

/**
 * A dependency that stops answering without going away (a stalled disk, a network partition;
 * SIGSTOP here) must not hold the requests: `npm start` on embedded defaults, its PostgreSQL
 * (the postmaster and its backends) and then its Temporal dev server stopped in turn. Each time a
 * read and a run start are answered within 5 s (503 with Retry-After is fine), the health check
 * says which dependency is not answering, and once it answers again a run succeeds.
 */

/** The bound the issue sets; the service's own bounds are 3 s (DATABASE_TIMEOUT_SECONDS, TEMPORAL_TIMEOUT_SECONDS). */
const ANSWER_WITHIN_MS = 5_000;

const cleanups = cleanupsAfterAll();

/** The answer and how long it took, or null when there was none within `ANSWER_WITHIN_MS`. */
async function timed(request: Promise<HttpResponse>) {
  const sent = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const answer = await Promise.race([
    request.catch((error: Error) => ({ status: 0, text: error.message, body: undefined, headers: new Headers() }) as HttpResponse),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ANSWER_WITHIN_MS);
    }),
  ]);
  clearTimeout(timer);
  return { answer, tookMs: Math.round(performance.now() - sent) };
}

/** Answered in time, 200 or a 503 the client can retry: Retry-After and the API's error body. */
function expectAnsweredInTime(what: string, { answer, tookMs }: Awaited<ReturnType<typeof timed>>, log = '') {
  expect(answer, `${what}: no answer within ${ANSWER_WITHIN_MS} ms\n${log}`).not.toBeNull();
  const { status, headers, body, text } = answer as HttpResponse;
  expect([200, 503], `${what}: ${status} ${text} after ${tookMs} ms`).toContain(status);
  if (status === 503) {
    expect(headers.get('retry-after'), what).toBe('5');
    expect(body, what).toMatchObject({ status: 'error', code: 'service_unavailable', message: expect.any(String) });
  }
  return status;
}

async function runToSuccess(service: EmbeddedService, as: Credentials, slug: string, pipelineId: string, session: string) {
  const { http } = service;
  // The first start after the fault may still meet its tail (a pool reconnecting): retried as a client would.
  let started: HttpResponse | undefined;
  for (const deadline = performance.now() + 60_000; performance.now() < deadline; ) {
    started = await http.post(`/${slug}/api/pipelines/${pipelineId}/start`, { session }, as);
    if (started.status !== 503) break;
    await new Promise((resolve) => setTimeout(resolve, Number(started?.headers.get('retry-after') ?? 1) * 200));
  }
  expect(started?.status, started?.text).toBe(200);
  const runUrl = `/${slug}/api/pipelines/${pipelineId}/${started?.body.id}`;
  await expect
    .poll(async () => (await http.get(runUrl, as)).body?.status?.pipeline, { timeout: 120_000, interval: 500 })
    .toMatch(/succeeded|failed|cancelled/);
  const run = (await http.get(runUrl, as)).body;
  expect(run.status.pipeline, JSON.stringify(run)).toBe('succeeded');
}

describe('a dependency that stops answering', () => {
  it('a read and a run start are answered within 5 s while PostgreSQL, then Temporal, is hung, and a run succeeds after each', {
    timeout: START_TIMEOUT_MS + 600_000,
  }, async () => {
    const { service, http, owner, slug, sessionId } = await npmStartWithOwner(cleanups, 'hung');
    const pipeline = await http.put(`/${slug}/api/pipelines`, { name: 'short', description: '', source: longWaitSource(200) }, owner);
    expect(pipeline.status, pipeline.text).toBe(200);
    const pipelineUrl = `/${slug}/api/pipelines/${pipeline.body.id}`;
    await runToSuccess(service, owner, slug, pipeline.body.id, sessionId);
    expect((await http.get('/api/health')).body).toEqual({ status: 'ok', database: 'ok', engine: 'ok' });

    const hungAnswers: Record<EmbeddedDependency, Record<string, number>> = { PostgreSQL: {}, Temporal: {} };
    for (const which of ['PostgreSQL', 'Temporal'] as const) {
      const hung = hangWhole(service, which);
      try {
        // At once, side by side, as clients would send them.
        const [read, start, health] = await Promise.all([
          timed(http.get(pipelineUrl, owner)),
          timed(http.post(`${pipelineUrl}/start`, { session: sessionId }, owner)),
          timed(http.get('/api/health')),
        ]);
        hungAnswers[which] = {
          read: expectAnsweredInTime(`GET the pipeline with ${which} hung`, read, service.output().slice(-3000)),
          start: expectAnsweredInTime(`a run start with ${which} hung`, start, service.output().slice(-3000)),
          health: expectAnsweredInTime(`GET /api/health with ${which} hung`, health, service.output().slice(-3000)),
        };
        const seen = [read, start, health].map(({ answer, tookMs }) => `${answer?.status} ${answer?.text.slice(0, 200)} in ${tookMs} ms`);
        expect(health.answer?.status, `${which} hung: the health check notices; ${seen.join('; ')}`).toBe(503);
        expect(health.answer?.body.message).toMatch(which === 'PostgreSQL' ? /the database/ : /the workflow engine/);
        // A second round meets what the first left behind (pooled connections that timed out).
        expectAnsweredInTime(`a second GET with ${which} hung`, await timed(http.get(pipelineUrl, owner)));
      } finally {
        hung.resume();
      }
      await runToSuccess(service, owner, slug, pipeline.body.id, sessionId);
      await expect.poll(async () => (await http.get('/api/health')).status, { timeout: 30_000, interval: 500 }).toBe(200);
    }
    // What the database's hang does to a read and a start: neither can be served without it.
    expect(hungAnswers.PostgreSQL).toMatchObject({ read: 503, start: 503, health: 503 });
    // The engine's hang leaves reads alone; a start needs the engine.
    expect(hungAnswers.Temporal).toMatchObject({ read: 200, start: 503, health: 503 });
  });
});
