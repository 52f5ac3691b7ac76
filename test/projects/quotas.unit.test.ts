import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/config.ts';
import { placesPerEndpoint } from '../../server/webhooks/inFlight.ts';

const env = { NODE_ENV: 'test', DATABASE_URL: 'postgres://x@127.0.0.1/x', JWT_SECRET: 'x'.repeat(64) };

describe('quotas an operator does not set', () => {
  it('are generous for real use, and the account’s browsers follow the project’s limit', () => {
    expect(parseConfig(env).quotas).toEqual({
      projectsPerAccount: 50,
      browsersPerAccount: 8,
      webhookEndpointsPerProject: 25,
      webhookDeliveriesInFlightPerProject: 100,
    });
    // A project allowed 30 browsers is not held to 8 by an account bound nobody set.
    expect(parseConfig({ ...env, BROWSERS_PER_PROJECT: '30' }).quotas.browsersPerAccount).toBe(60);
    expect(parseConfig({ ...env, BROWSERS_PER_PROJECT: '30', BROWSERS_PER_ACCOUNT: '5' }).quotas.browsersPerAccount).toBe(5);
  });

  it('refuse a bound of zero, naming the variable', () => {
    for (const name of [
      'PROJECTS_PER_ACCOUNT',
      'BROWSERS_PER_ACCOUNT',
      'WEBHOOK_ENDPOINTS_PER_PROJECT',
      'WEBHOOK_DELIVERIES_IN_FLIGHT_PER_PROJECT',
    ]) {
      expect(() => parseConfig({ ...env, [name]: '0' })).toThrow(name);
    }
  });
});

describe('an endpoint’s share of its project’s deliveries in flight', () => {
  it('is half, rounded up, so one endpoint that is down never holds them all (unless there is only one place)', () => {
    expect([1, 2, 3, 100].map(placesPerEndpoint)).toEqual([1, 1, 2, 50]);
  });
});
