import { randomUUID } from 'node:crypto';
import { p } from '@mikro-orm/core';

/** Columns every table shares: a UUID primary key made by the application, and timestamps. */
export const id = () =>
  p
    .uuid()
    .primary()
    .onCreate(() => randomUUID());

export const created = () => p.datetime().onCreate(() => new Date());

export const updated = () =>
  p
    .datetime()
    .onCreate(() => new Date())
    .onUpdate(() => new Date());
