import { z } from 'zod';
import { listHosts } from '../../browsers/hosts/hostOverview.ts';
import { authorizeServiceOperation } from '../../permissions/permissions.ts';
import { iso } from '../../wireShapes.ts';
import { publicProcedure, router } from '../base.ts';

const tags = ['admin'];

const host = z.object({
  id: z.string().describe('The host’s id (BROWSER_HOST_ID); its task queue is `browsers.<id>`'),
  address: z.string().describe('The address the host recorded (BROWSER_HOST_ADDRESS)'),
  relayPort: z.number().int().nullable().describe('The port of the host’s relay on `address`; null for a host without one'),
  capacity: z.number().int().describe('Browsers it may run (BROWSERS_PER_HOST)'),
  load: z.number().int().describe('Its active resources (starting, running or stopping), counted against `capacity`'),
  warmBrowsers: z.object({
    count: z.number().int(),
    bySignature: z.record(z.string(), z.number().int()).describe('Warm browsers offered, per launch signature'),
  }),
  warmSignatures: z
    .array(z.string())
    .describe('The launch signatures the host keeps warm: its default settings and those started there lately'),
  warmPool: z
    .object({
      floor: z.number().int().describe('BROWSER_WARM_POOL: browsers of the default settings kept warm whatever the demand'),
      max: z.number().int().describe('BROWSER_WARM_POOL_MAX (never below the floor)'),
      target: z.number().int().describe('Browsers of the default settings the pool keeps warm now, from the recent rate of starts'),
      size: z.number().int().describe('Warm browsers waiting now, of every settings kept warm'),
      launching: z.number().int().describe('Warm browsers being launched'),
      startsPerMinute: z.number().describe('Starts of the default settings per minute over the demand window'),
      launchMs: z.number().int().describe('The running average of a warm launch on the host'),
      claims: z.object({
        recent: z.object({
          claims: z.number().int().describe('Starts that could take a warm browser within the window'),
          warm: z.number().int().describe('Of those, the ones that took one'),
          windowSeconds: z.number().int().describe('BROWSER_WARM_DEMAND_SECONDS'),
        }),
        sinceStart: z.object({
          claims: z.number().int().describe('Starts that could take a warm browser since the host started'),
          warm: z.number().int().describe('Of those, the ones that took one'),
          since: z.string().describe('When the host started'),
        }),
      }),
      hitRate: z.object({
        recent: z.number().nullable().describe('Claims served warm / all claims within the window; null without claims'),
        sinceStart: z.number().nullable().describe('Claims served warm / all claims since the host started; null without claims'),
      }),
    })
    .nullable()
    .describe('The warm pool as the host last reported it; null for a host that does not report it'),
  lastHeartbeat: z.string().describe('When the host last heartbeated (every 5 s while it runs)'),
  drainingSince: z.string().nullable().describe('Since when the host drains (it was asked to stop): it takes no new browsers'),
  state: z
    .enum(['live', 'draining', 'gone'])
    .describe('`draining`: heartbeating, finishing its browsers, taking no new ones; `gone`: no heartbeat for 15 s. No start picks either'),
});

export const adminRouter = router({
  hosts: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/admin/hosts',
        tags,
        summary: 'Browser hosts, their load and warm browsers (global admins)',
      },
    })
    .input(z.strictObject({}).optional())
    .output(z.array(host))
    .query(async ({ ctx }) => {
      authorizeServiceOperation(ctx.subject);
      const hosts = await listHosts(ctx.em);
      return hosts.map((entry) => ({
        ...entry,
        lastHeartbeat: iso(entry.lastHeartbeat),
        drainingSince: entry.drainingSince ? iso(entry.drainingSince) : null,
      }));
    }),
});
