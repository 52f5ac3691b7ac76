import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created } from './common.ts';
import { Project } from './Project.ts';

export const logSeverities = ['debug', 'info', 'warn', 'error'] as const;

/**
 * One line of a log stream (`resource:<id>`, `run:<id>`, …). `seq` counts from 1 within its
 * stream and is the SSE event id, so a client resumes with Last-Event-ID.
 */
export const LogEntry = defineEntity({
  name: 'LogEntry',
  tableName: 'log_entries',
  uniques: [{ properties: ['stream', 'seq'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    stream: p.string().length(120),
    seq: p.integer(),
    context: p.string().length(200),
    severity: p.enum(logSeverities),
    message: p.text(),
    area: p.string().length(60),
    object: p.json<Record<string, unknown>>().nullable(),
    created: created(),
  },
});

export type LogEntry = InferEntity<typeof LogEntry>;
