import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { Credentials, HttpClient } from './http.ts';

/**
 * `POST <resource>/stop`, then the resource read until it has stopped. The stop answers once it is
 * requested (`stopping`, or `stopped` when the teardown was quicker than the answer); its workflow
 * finishes the teardown. `resource` is the resource's path, `/{project}/api/sessions/{id}/{resourceId}`.
 * Answers the stop's answer and the resource as it ended.
 */
export async function stopAndWait(http: HttpClient, resource: string, as: Credentials) {
  const stop = await http.post(`${resource}/stop`, undefined, as);
  expect(stop.status, stop.text).toBe(200);
  expect(['stopping', 'stopped']).toContain(stop.body.status);
  return { answer: stop.body, ended: await readUntilStopped(http, resource, as) };
}

/** The resource, read until it is no longer `stopping` (its stop was asked for). */
export async function readUntilStopped(http: HttpClient, resource: string, as: Credentials, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await http.get(resource, as);
    expect(read.status, read.text).toBe(200);
    if (read.body.status !== 'stopping') return read.body;
    if (Date.now() > deadline) throw new Error(`${resource} was still stopping after ${timeoutMs} ms`);
    await sleep(100);
  }
}
