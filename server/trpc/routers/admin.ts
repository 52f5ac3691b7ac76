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
