/**
 * The rules of each kind of value a request can name (lexicon.ts): whether a text the page shows
 * is an e-mail address, a phone number, a web address, a date, an amount of money, a number, a
 * rating, or a person's or a thing's name. A column of phone numbers is not e-mail addresses,
 * whichever model chose it: the verification holds every output to the kind the request names.
 */
import type { ValueKind } from './lexicon.ts';

const MONTHS =
  'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?';
const WEEKDAYS = 'mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:rs(?:day)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?';
const CURRENCY = '[$€£¥₹₽₩]|\\b(?:usd|eur|gbp|chf|jpy|sek|nok|dkk|cad|aud|kr|zł|pln)\\b';

const isEmail = (text: string) => /^(?:mailto:)?[^\s@<>()]+@[^\s@<>()]+\.[a-z]{2,}$/i.test(text);
const isUrl = (text: string) =>
  /^(?:https?:\/\/|www\.)[^\s]+$/i.test(text) || /^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:\/\S*)?$/i.test(text);
const isDate = (text: string) =>
  /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$/.test(text) ||
  /^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$/.test(text) ||
  new RegExp(
    `^(?:(?:${WEEKDAYS}),?\\s+)?(?:\\d{1,2}(?:st|nd|rd|th)?\\s+(?:${MONTHS})\\.?|(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?)(?:,?\\s+\\d{4})?$`,
    'i',
  ).test(text) ||
  new RegExp(`^(?:${MONTHS})\\.?\\s+\\d{4}$`, 'i').test(text) ||
  new RegExp(`^(?:${WEEKDAYS})$`, 'i').test(text) ||
  /^(?:today|yesterday|tomorrow|\d+\s+(?:minutes?|hours?|days?|weeks?|months?|years?)\s+ago)$/i.test(text);
const isMoney = (text: string) =>
  new RegExp(`^(?:(?:${CURRENCY})\\s?[-+]?\\d[\\d,.\\s]*|[-+]?\\d[\\d,.\\s]*\\s?(?:${CURRENCY}))(?:\\s*/\\s*\\p{L}+)?$`, 'iu').test(text) ||
  /^[-+]?\d{1,3}(?:,\d{3})*\.\d{2}$|^[-+]?\d+\.\d{2}$/.test(text) ||
  /^free$/i.test(text);
const isNumber = (text: string) => /^[-+]?(?:\d[\d\s,.']*\d|\d)\s?(?:%|‰|[\p{L}]{1,12}(?:\/[\p{L}]{1,6})?)?$/u.test(text) && !isDate(text);
const digits = (text: string) => (text.match(/\d/g) ?? []).length;
const isPhone = (text: string) =>
  /^(?:tel:)?\+?[\d\s().\-/]{7,24}(?:\s*(?:ext\.?|x)\s*\d{1,5})?$/i.test(text) &&
  digits(text) >= 7 &&
  digits(text) <= 15 &&
  !isDate(text) &&
  !/^\d+[.,]\d+$/.test(text.replace(/\s/g, ''));
const isRating = (text: string) =>
  /^[★☆✩✪⭐]{1,10}$/u.test(text) ||
  /^\d+(?:[.,]\d)?\s*(?:\/|out of|of)\s*\d+(?:\s*stars?)?$/i.test(text) ||
  /^\d+(?:[.,]\d)?\s*(?:stars?|★|⭐)$/iu.test(text) ||
  /^(?:10|\d)(?:[.,]\d)?$/.test(text);
const isName = (text: string) =>
  /\p{L}{2,}/u.test(text) &&
  text.length <= 160 &&
  !isEmail(text) &&
  !/^(?:https?:\/\/|www\.)/i.test(text) &&
  !isPhone(text) &&
  !isDate(text) &&
  !isMoney(text) &&
  !isNumber(text);

/** The rule of each kind: whether one text, trimmed, is a value of it. */
export const kindRules: Record<ValueKind, (text: string) => boolean> = {
  email: isEmail,
  phone: isPhone,
  url: isUrl,
  date: isDate,
  money: isMoney,
  number: isNumber,
  rating: isRating,
  name: isName,
};

/** Whether `value` (a text the page showed, or a number) is of `kind`. */
export function valueIsOfKind(kind: ValueKind, value: unknown): boolean {
  if (typeof value === 'number') return kind === 'number' || kind === 'money' || (kind === 'rating' && value >= 0 && value <= 10);
  if (typeof value !== 'string') return false;
  const text = value.replace(/\s+/g, ' ').trim();
  return text !== '' && kindRules[kind](text);
}

/** The share of values present (not empty) that must be of the kind for a field to hold it. */
const HOLDS_SHARE = 0.8;

/**
 * The fields of `records` whose values are of `kind`: at least 80% of the values present, and
 * present in at least half the records. A column of phone numbers holds no e-mail addresses.
 */
export function fieldsOfKind(kind: ValueKind, records: readonly Record<string, unknown>[]): string[] {
  const names = [...new Set(records.flatMap((record) => Object.keys(record)))];
  return names.filter((name) => {
    const present = records
      .map((record) => record[name])
      .filter((value) => value !== null && value !== undefined && String(value).trim() !== '');
    if (present.length === 0 || present.length < records.length / 2) return false;
    return present.filter((value) => valueIsOfKind(kind, value)).length >= present.length * HOLDS_SHARE;
  });
}
