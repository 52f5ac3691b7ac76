import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** The last sequence number handed out per log stream; incremented under a row lock. */
export const LogStream = defineEntity({
  name: 'LogStream',
  tableName: 'log_streams',
  properties: {
    stream: p.string().length(120).primary(),
    lastSeq: p.integer().default(0),
  },
});

export type LogStream = InferEntity<typeof LogStream>;
