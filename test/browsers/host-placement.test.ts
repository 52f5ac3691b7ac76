import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserHost } from '../../db/entities/index.ts';
import { createProject, registerUser } from '../support/accounts.ts';
import { browserHostProcess, killBrowsersLeftUnder } from '../support/browserHostProcess.ts';
import { stopAndWait } from '../support/resources.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** Two browser hosts as their own processes, two places each; no host in the test's process. */
const CAPACITY = 2;
const PER_PROJECT = 3;
const suffix = Date.now().toString(36);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bf-place-'));
let stack: TestStack;
let hosts: ReturnType<typeof browserHostProcess>[] = [];
const hostIds = [`place-a-${suffix}`, `place-b-${suffix}`];

beforeAll(async () => {
  stack = await startTestStack({ BROWSERS_PER_PROJECT: String(PER_PROJECT) });
  hosts = hostIds.map((hostId) =>
    browserHostProcess(stack, { hostId, dataDir, env: { BROWSERS_PER_HOST: String(CAPACITY), BROWSER_WARM_RECENT: '0' } }),
  );
  for (const host of hosts) host.start();
  for (const host of hosts) await host.ready();
}, 120_000);

afterAll(async () => {
  for (const host of hosts) await host.kill();
  killBrowsersLeftUnder(dataDir);
  await stack?.close();
});

describe('placing browsers over several hosts', () => {
  it('registers each host with its address, capacity and warm settings, not draining', async () => {
    const rows = await stack.orm.em.fork().find(BrowserHost, { id: { $in: hostIds } }, { orderBy: { id: 'asc' } });
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ address: '127.0.0.1', capacity: CAPACITY, drainingSince: null, warmSignatures: [] });
      expect(Date.now() - row.heartbeatAt.getTime()).toBeLessThan(10_000);
    }
  });

  it('spreads 2 × capacity starts over both hosts, holds the project limit across them, and answers hosts-full past that', async () => {
    const owner = await registerUser(stack);
    const as = { token: owner.token };
    const first = (await createProject(stack, owner.token)).slug;
    const second = (await createProject(stack, owner.token)).slug;
    const started: { url: string; host: string }[] = [];
    const start = async (slug: string) => {
      const session = await stack.http.put(`/${slug}/api/sessions`, { name: `s-${started.length}-${Date.now()}` }, as);
      expect(session.status, session.text).toBe(200);
      return stack.http.post(`/${slug}/api/sessions/${session.body.id}/start`, undefined, as);
    };
    try {
      // The first project takes its limit's worth: the least loaded host each time, so both get some.
      for (let i = 0; i < PER_PROJECT; i++) {
        const answer = await start(first);
        expect(answer.status, answer.text).toBe(200);
        started.push({ url: `/${first}/api/sessions/${answer.body.session}/${answer.body.id}`, host: answer.body.host });
      }
      expect(
        started
          .slice(0, 2)
          .map((s) => s.host)
          .sort(),
      ).toEqual([...hostIds].sort());
      // Past its limit, though a host has room: the limit counts the project's browsers on every host.
      const overLimit = await start(first);
      expect(overLimit.status, overLimit.text).toBe(429);
      expect(overLimit.body.code).toBe('browser_limit_reached');

      // Another project takes the last place.
      const last = await start(second);
      expect(last.status, last.text).toBe(200);
      started.push({ url: `/${second}/api/sessions/${last.body.session}/${last.body.id}`, host: last.body.host });
      const perHost = hostIds.map((id) => started.filter((s) => s.host === id).length);
      expect(perHost).toEqual([CAPACITY, CAPACITY]);

      // Every host is full: the documented answer, whoever asks.
      const full = await start(second);
      expect(full.status, full.text).toBe(429);
      expect(full.body.code).toBe('browser_hosts_full');
    } finally {
      for (const { url } of started) await stopAndWait(stack.http, url, as);
    }
    // Stopped browsers free their places: the next start goes through.
    const again = await start(second);
    expect(again.status, again.text).toBe(200);
    await stopAndWait(stack.http, `/${second}/api/sessions/${again.body.session}/${again.body.id}`, as);
  }, 240_000);
});
