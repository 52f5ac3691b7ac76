import * as currencies from 'dinero.js/bigint/currencies';

/**
 * Exact decimals and ISO currencies: what the config parses prices and plans with. Apart from
 * server/billing/money.ts, their arithmetic, so that a process which bills nothing (a browser
 * host) loads no billing code for its config.
 */

/** A price per unit may have this many decimals of a minor unit. */
export const PRICE_DIGITS = 12;

export type Currency = { code: string; base: bigint; exponent: bigint };

/** The currency of a lowercase ISO code (`usd`), or undefined for one that does not exist. */
export function currencyOf(code: string): Currency | undefined {
  const found = (currencies as Record<string, Currency | undefined>)[code.toUpperCase()];
  return found && typeof found === 'object' && 'exponent' in found ? found : undefined;
}

/** An exact decimal: `amount` × 10^-`scale`. */
export type Scaled = { amount: bigint; scale: number };

const decimalPattern = /^(\d{1,18})(?:\.(\d{1,18}))?$/;

/** "0.0014" → {14n, 4}; undefined for anything that is not a plain non-negative decimal. */
export function parseDecimal(text: string, maxDigits: number): Scaled | undefined {
  const match = decimalPattern.exec(text);
  if (!match) return undefined;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > maxDigits) return undefined;
  return { amount: BigInt(`${match[1]}${fraction}`), scale: fraction.length };
}
