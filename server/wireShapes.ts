import { z } from 'zod';

/** Pieces of the API's input and output schemas, and of the views domain code answers with (ISO dates, paging). */

export const pagination = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
};

export const uuid = z.uuid();

export const iso = (date: Date) => date.toISOString();

export const statusOk = z.object({ status: z.literal('ok') });

/** Query-string flags: `?my`, `?my=true`, `?my=1` are on; `false`, `0` are off. */
export const queryFlag = z
  .union([z.boolean(), z.enum(['', 'true', 'false', '1', '0'])])
  .transform((value) => value === true || value === '' || value === 'true' || value === '1');

/** A JSON object of at most `maxBytes` when serialised (sources, metadata). */
export function jsonObject(maxBytes: number) {
  return z
    .record(z.string(), z.unknown())
    .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, `at most ${maxBytes} bytes of JSON`);
}

/** A pipeline or function source: any JSON object; the compiler says what it means. */
export const sourceJson = jsonObject(512 * 1024);
export const metadataJson = jsonObject(64 * 1024);
