import { type Dinero, dinero, halfEven, multiply, toSnapshot, transformScale } from 'dinero.js/bigint';
import { type Currency, parseDecimal, type Scaled } from '../decimals.ts';

/**
 * Money without floating point. Balances and ledger amounts are bigint minor units (cents);
 * usage is priced finer: a price per unit is a decimal number of minor units ("0.0001" of a cent
 * per token), a quantity has six decimals, and a cost is kept in micro-units (a millionth of a
 * minor unit) until whole minor units add up (server/billing/ledger.ts carries the rest).
 */

export const MICROS_PER_MINOR = 1_000_000n;
const QUANTITY_DIGITS = 6;

export type TopUpProblem = 'not_a_decimal' | 'too_many_decimals' | 'not_positive' | 'too_large';

/** The most one top-up may add: Stripe's own ceiling for a Checkout payment (999,999.99). */
const MAX_TOP_UP_MAJOR = 999_999n;

/**
 * A top-up amount typed by a person, in major units ("10.5"), as minor units (1050n). Only plain
 * decimals with at most the currency's minor digits: "1e3", "10.555", "-5" and "0" are refused.
 */
export function parseTopUpAmount(text: string, currency: Currency): { minor: bigint } | { problem: TopUpProblem } {
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text);
  if (!match) return { problem: 'not_a_decimal' };
  const digits = Number(currency.exponent);
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return { problem: 'too_many_decimals' };
  const minor = BigInt(match[1] as string) * 10n ** BigInt(digits) + BigInt(fraction.padEnd(digits, '0') || '0');
  if (minor <= 0n) return { problem: 'not_positive' };
  if (minor > (MAX_TOP_UP_MAJOR + 1n) * 10n ** BigInt(digits) - 1n) return { problem: 'too_large' };
  return { minor };
}

/** A usage quantity ("1.5" CPU seconds, "2048" bytes) in millionths of the unit. */
export function parseQuantity(value: string | number): bigint | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) && value >= 0 ? quantityText(value) : '') : value;
  const parsed = parseDecimal(text, QUANTITY_DIGITS);
  if (!parsed) return undefined;
  return parsed.amount * 10n ** BigInt(QUANTITY_DIGITS - parsed.scale);
}

/** A JSON number as the decimal it was written as, at most six decimals (no exponent form). */
function quantityText(value: number) {
  const text = value.toFixed(QUANTITY_DIGITS);
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** Millionths of a unit as the decimal the API shows ("1.5"). */
export function quantityString(micro: bigint) {
  return scaledString({ amount: micro, scale: QUANTITY_DIGITS });
}

function money(amount: bigint, currency: Currency, scale: number): Dinero<bigint> {
  return dinero({ amount, currency: currency as never, scale: currency.exponent + BigInt(scale) });
}

/**
 * What `quantityMicro` millionths of a unit cost at `pricePerUnit` minor units each, in
 * micro-units of the currency, rounded half to even at the micro-unit (never more than half a
 * millionth of a cent off).
 */
export function usageCostMicros(quantityMicro: bigint, pricePerUnit: Scaled, currency: Currency): bigint {
  const price = money(pricePerUnit.amount, currency, pricePerUnit.scale);
  const cost = multiply(price, { amount: quantityMicro, scale: BigInt(QUANTITY_DIGITS) } as never);
  const micros = transformScale(cost, (currency.exponent + 6n) as never, halfEven);
  return toSnapshot(micros).amount as bigint;
}

/** Minor units as the API shows them: an integer string ("1050"). */
export function minorString(minor: bigint) {
  return minor.toString();
}

/** Micro-units of the currency as a decimal of minor units ("0.001"), for sub-cent figures. */
export function microsString(micros: bigint) {
  return scaledString({ amount: micros, scale: 6 });
}

/** An exact decimal's shortest text ("0.0014", "12"). */
export function scaledString({ amount, scale }: Scaled) {
  if (scale === 0) return amount.toString();
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, -scale);
  const fraction = digits.slice(-scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The smaller of two bigints (Math.min takes numbers only). */
export function minBig(a: bigint, b: bigint) {
  if (a < b) return a;
  return b;
}
