import type { AppDeps } from '../appDeps.ts';
import { appDeps, rawRouteGroup, routesOf } from './rawRoute.ts';

/** What Stripe says when it sends the user back (server/billing/stripe.ts), as the console shows it. */
const backs = ['done', 'cancelled'] as const;

const route = routesOf<AppDeps>();

/**
 * `/billing` was a page of its own; it is the console's billing page now (docs/console.md). The
 * URLs Stripe sends users back to keep working: `?checkout=done` becomes `/#/billing/checkout-done`.
 */
export const billingPageRoutes = rawRouteGroup(appDeps, [
  route({
    method: 'GET',
    path: '/billing',
    doc: {
      operationId: 'pages-billing',
      summary: 'Billing in the web console: redirects to /#/billing (where Checkout and the portal send the user back)',
      tags: ['billing'],
      parameters: [
        { name: 'checkout', in: 'query', required: false, schema: { type: 'string', enum: [...backs] } },
        { name: 'top-up', in: 'query', required: false, schema: { type: 'string', enum: [...backs] } },
      ],
      responses: {
        '302': { description: 'To the console’s billing page, saying whether a Checkout was completed or cancelled' },
      },
    },
    serve: () => async (req, reply) => {
      const back = (['checkout', 'top-up'] as const).flatMap((kind) => {
        const value = req.query[kind];
        return backs.some((known) => known === value) ? [`${kind}-${value}`] : [];
      })[0];
      return reply.header('cache-control', 'no-store').redirect(back ? `/#/billing/${back}` : '/#/billing', 302);
    },
  }),
]);
