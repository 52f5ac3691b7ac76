import { describe, expect, it } from 'vitest';
import { parseQuantity, parseTopUpAmount, quantityString, scaledString, usageCostMicros } from '../../server/billing/money.ts';
import { parseConfig } from '../../server/config.ts';
import { currencyOf, parseDecimal } from '../../server/decimals.ts';

const usd = currencyOf('usd') as NonNullable<ReturnType<typeof currencyOf>>;
const jpy = currencyOf('jpy') as NonNullable<ReturnType<typeof currencyOf>>;

describe('money', () => {
  it('reads top-up amounts typed by people: plain decimals with at most the minor digits, above zero', () => {
    expect(parseTopUpAmount('10.5', usd)).toEqual({ minor: 1050n });
    expect(parseTopUpAmount('10', usd)).toEqual({ minor: 1000n });
    expect(parseTopUpAmount('0.01', usd)).toEqual({ minor: 1n });
    expect(parseTopUpAmount('999999.99', usd)).toEqual({ minor: 99_999_999n });
    expect(parseTopUpAmount('1e3', usd)).toEqual({ problem: 'not_a_decimal' });
    expect(parseTopUpAmount('10.555', usd)).toEqual({ problem: 'too_many_decimals' });
    expect(parseTopUpAmount('-5', usd)).toEqual({ problem: 'not_a_decimal' });
    expect(parseTopUpAmount('0', usd)).toEqual({ problem: 'not_positive' });
    expect(parseTopUpAmount('0.00', usd)).toEqual({ problem: 'not_positive' });
    expect(parseTopUpAmount('1000000', usd)).toEqual({ problem: 'too_large' });
    // A currency without minor units takes whole amounts only.
    expect(parseTopUpAmount('500', jpy)).toEqual({ minor: 500n });
    expect(parseTopUpAmount('5.5', jpy)).toEqual({ problem: 'too_many_decimals' });
  });

  it('prices usage exactly, rounding half to even at the millionth of a minor unit', () => {
    const price = (text: string) => parseDecimal(text, 12) as NonNullable<ReturnType<typeof parseDecimal>>;
    expect(usageCostMicros(parseQuantity(10) as bigint, price('0.0001'), usd)).toBe(1000n);
    expect(usageCostMicros(parseQuantity('1.5') as bigint, price('0.0014'), usd)).toBe(2100n);
    expect(usageCostMicros(parseQuantity(100) as bigint, price('0.00000001'), usd)).toBe(1n);
    // 50 bytes at 0.00000001: half a micro-unit, to the even 0; 150 bytes: 1.5, to 2.
    expect(usageCostMicros(parseQuantity(50) as bigint, price('0.00000001'), usd)).toBe(0n);
    expect(usageCostMicros(parseQuantity(150) as bigint, price('0.00000001'), usd)).toBe(2n);
  });

  it('reads quantities with at most six decimals, from JSON numbers or strings', () => {
    expect(parseQuantity('1.5')).toBe(1_500_000n);
    expect(parseQuantity(0.1 + 0.2)).toBe(300_000n);
    expect(parseQuantity('0.0000001')).toBeUndefined();
    expect(parseQuantity(-1)).toBeUndefined();
    expect(parseQuantity('1e3')).toBeUndefined();
    expect(quantityString(3_000_500_000n)).toBe('3000.5');
    expect(scaledString({ amount: 14n, scale: 4 })).toBe('0.0014');
  });
});

describe('billing configuration', () => {
  const base = { NODE_ENV: 'test' };

  it('is off without a Stripe key, and needs the webhook secret with one', () => {
    expect(parseConfig(base).billing.enabled).toBe(false);
    expect(() => parseConfig({ ...base, STRIPE_SECRET_KEY: 'sk_test' })).toThrow(/STRIPE_WEBHOOK_SECRET: required/);
    expect(parseConfig({ ...base, STRIPE_SECRET_KEY: 'sk_test', STRIPE_WEBHOOK_SECRET: 'whsec' }).billing.enabled).toBe(true);
  });

  it('names what is wrong with plans, prices and the currency', () => {
    expect(() => parseConfig({ ...base, BILLING_CURRENCY: 'xyz' })).toThrow(/BILLING_CURRENCY: not a known/);
    expect(() => parseConfig({ ...base, USAGE_PRICING: '{"cpu": "-1"}' })).toThrow(/USAGE_PRICING: cpu/);
    expect(() => parseConfig({ ...base, USAGE_PRICING: '{"cpu": 0.5}' })).toThrow(/USAGE_PRICING: cpu/);
    expect(() => parseConfig({ ...base, BILLING_PLANS: '[{"planId": "a"}]' })).toThrow(/BILLING_PLANS: 0\.priceId/);
    const plan = { planId: 'a', priceId: 'price_a', name: 'A', monthlyPrice: 100 };
    expect(() => parseConfig({ ...base, BILLING_PLANS: JSON.stringify([plan, plan]) })).toThrow(/appears twice/);
    const parsed = parseConfig({ ...base, BILLING_PLANS: JSON.stringify([plan]), USAGE_PRICING: '{"tokens": "0.00002"}' });
    expect(parsed.billing.plans[0]).toMatchObject({ currency: 'usd', monthlyPrice: 100n, discount: 0n, features: [] });
    expect(scaledString(parsed.billing.pricing.tokens)).toBe('0.00002');
    expect(scaledString(parsed.billing.pricing.cpu)).toBe('0.0014');
  });
});
