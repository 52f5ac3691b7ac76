import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarmBrowser } from '../../../db/entities/index.ts';
import { createProject, registerUser } from '../../support/accounts.ts';
import { stopAndWait } from '../../support/resources.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

/**
 * The warm pool follows demand (docs/browsers.md, Warm pool): a burst of session starts grows it
 * above its floor, up to BROWSER_WARM_POOL_MAX, and it shrinks back to the floor once starts stop.
 * Short timings set here (a 20 s demand window, 5 s idle); the defaults are a minute each.
 */

const FLOOR = 1;
const MAX = 4;
const BURST = 6;

type HostView = {
  id: string;
  warmPool: {
    floor: number;
    max: number;
    target: number;
    size: number;
    launching: number;
    startsPerMinute: number;
    claims: { recent: { claims: number; warm: number }; sinceStart: { claims: number; warm: number } };
    hitRate: { recent: number | null; sinceStart: number | null };
  } | null;
};

let stack: TestStack;
let admin: Awaited<ReturnType<typeof registerUser>>;

beforeAll(async () => {
  stack = await startTestStack(
    {
      BROWSER_WARM_POOL: String(FLOOR),
      BROWSER_WARM_POOL_MAX: String(MAX),
      BROWSER_WARM_DEMAND_SECONDS: '20',
      BROWSER_WARM_IDLE_SECONDS: '5',
      BROWSERS_PER_PROJECT: String(BURST + 2),
    },
    { browserHost: true },
  );
  // ADMIN_EMAILS of the test stack.
  admin = await registerUser(stack, { email: 'admin@example.test' });
});
afterAll(async () => {
  await stack?.close();
});

const offers = () => stack.orm.em.fork().count(WarmBrowser, { hostId: stack.config.browsers.hostId });
async function ownHost() {
  const answer = await stack.http.get('/api/admin/hosts', { token: admin.token });
  expect(answer.status, answer.text).toBe(200);
  return (answer.body as HostView[]).find((host) => host.id === stack.config.browsers.hostId);
}

describe('a warm pool that follows demand', () => {
  it('grows with a burst of starts, up to its ceiling, shows it in the host overview, and shrinks back to its floor once starts stop', async () => {
    const pool = stack.browserHost?.pool;
    if (!pool) throw new Error('no browser host');
    // At rest: the floor, and the overview says so.
    await expect.poll(offers, { timeout: 60_000 }).toBe(FLOOR);
    await expect
      .poll(async () => (await ownHost())?.warmPool, { timeout: 15_000 })
      .toMatchObject({ floor: FLOOR, max: MAX, target: FLOOR, size: FLOOR });

    const project = await createProject(stack, admin.token);
    const sessions = `/${project.slug}/api/sessions`;
    const ids: string[] = [];
    for (let i = 0; i < BURST + 2; i++) ids.push((await stack.http.put(sessions, { name: `burst-${i}` }, { token: admin.token })).body.id);
    const start = (id: string) => stack.http.post(`${sessions}/${id}/start`, undefined, { token: admin.token });
    const started = await Promise.all(ids.slice(0, BURST).map(start));
    for (const answer of started) expect(answer.status, answer.text).toBe(200);
    // One took the warm browser, the rest started cold.
    expect(started.filter((answer) => answer.body.warm).length).toBe(FLOOR);

    // The burst grows the pool to its ceiling (no further: MAX, not the burst's size).
    await expect.poll(() => pool.warmStatus().target, { timeout: 30_000 }).toBe(MAX);
    await expect.poll(offers, { timeout: 120_000, interval: 500 }).toBe(MAX);
    // The overview shows it from the host's next heartbeat.
    await expect.poll(async () => (await ownHost())?.warmPool?.size, { timeout: 15_000 }).toBe(MAX);
    const grown = await ownHost();
    expect(grown?.warmPool).toMatchObject({ floor: FLOOR, max: MAX, claims: { sinceStart: { claims: BURST, warm: FLOOR } } });
    expect(grown?.warmPool?.hitRate.sinceStart).toBeCloseTo(FLOOR / BURST, 5);

    // The next starts find warm browsers.
    const next = await Promise.all(ids.slice(BURST).map(start));
    for (const answer of next) expect(answer.body.warm, answer.text).toBe(true);
    await expect
      .poll(async () => (await ownHost())?.warmPool?.claims.sinceStart, { timeout: 15_000 })
      .toMatchObject({ claims: BURST + 2, warm: FLOOR + 2 });

    await Promise.all(
      [...started, ...next].map((answer, i) => stopAndWait(stack.http, `${sessions}/${ids[i]}/${answer.body.id}`, { token: admin.token })),
    );

    // Demand stops: past the window and the idle time, the pool is back at its floor.
    await expect.poll(offers, { timeout: 90_000, interval: 1_000 }).toBe(FLOOR);
    await expect
      .poll(async () => (await ownHost())?.warmPool, { timeout: 15_000 })
      .toMatchObject({ target: FLOOR, size: FLOOR, launching: 0, startsPerMinute: 0 });
    expect(pool.warmCount).toBe(FLOOR);
  }, 300_000);
});
