/**
 * An agent job's conversation as stored: the messages appended to the job and its log stream,
 * redacted of everything the job hides and of every secret the recogniser finds in them (a page
 * that shows a token, a model that repeats a password). The model side (./model/conversation.ts) and
 * the browser host that runs an analysis's tool calls (server/browsers/host/agentTools.ts) both
 * record here; this module loads no model code, AI SDK or billing, so a browser host does not
 * either.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AgentMessage } from '../../db/entities/AnalysisJob.ts';
import { type AnalysisJob, BrowserSession, type GenerationJob, PipelineRun } from '../../db/entities/index.ts';
import { appendLogs, logStreams, type NewLogEntry } from '../logs/logWriter.ts';
import { redactor } from '../logs/redact.ts';
import { openSecretValues, storedCookieValues } from '../pipelines/runSecrets.ts';

type Job = AnalysisJob | GenerationJob;

/** The strings a job hides: its prompt's secrets, the session's stored cookies, earlier runs' secrets there. */
export async function jobHidden(em: EntityManager, serviceSecret: string, job: AnalysisJob) {
  const secrets = openSecretValues(serviceSecret, job.sealedSecrets);
  const hidden = [...Object.values(secrets)];
  if (job.session) {
    const session = await em.findOne(BrowserSession, { id: job.session.id }, { populate: ['cookies'] });
    hidden.push(...storedCookieValues(session?.cookies));
    const runs = await em.find(
      PipelineRun,
      { session: job.session.id, sealedSecrets: { $ne: null } },
      { fields: ['sealedSecrets'], populate: ['sealedSecrets'], limit: 50, orderBy: { created: 'desc' } },
    );
    for (const run of runs) {
      try {
        hidden.push(...Object.values(openSecretValues(serviceSecret, run.sealedSecrets)).filter((value) => typeof value === 'string'));
      } catch {
        // Sealed under another service secret: nothing of it can be shown anyway.
      }
    }
  }
  return { secrets, hidden: hidden.filter((value) => typeof value === 'string' && value.length >= 3) };
}

/**
 * What a job's messages, outputs and logs pass: the values it hides, token shapes, and the secrets
 * the recogniser finds in prose (server/logs/secretRecogniser.ts).
 */
export const jobRedactor = (hidden: readonly string[]) => redactor(hidden, { recognise: true });

/**
 * Appends messages to a job and its log stream, redacted; tokens per call ride on the assistant
 * messages. Answers the messages as stored: what a model may be sent.
 */
export async function recordMessages(
  em: EntityManager,
  job: Job,
  kind: 'analysis' | 'generation',
  messages: Omit<AgentMessage, 'created'>[],
  hidden: readonly string[],
) {
  const hide = jobRedactor(hidden);
  const stored: AgentMessage[] = messages.map((message) => ({
    ...message,
    content: hide.object(message.content),
    created: new Date().toISOString(),
  }));
  await em
    .getConnection()
    .execute(
      `update ${kind === 'analysis' ? 'analysis_jobs' : 'generation_jobs'} set messages = messages || ?::jsonb, updated = now() where id = ?`,
      [JSON.stringify(stored), job.id],
    );
  const entries: NewLogEntry[] = stored.map((message) => ({
    context: `step ${message.step}`,
    severity: 'info',
    message: describe(message),
    area: message.role,
    object: message.content as Record<string, unknown>,
  }));
  await appendLogs(
    em.fork(),
    job.project.id,
    kind === 'analysis' ? logStreams.analysis(job.id) : logStreams.generation(job.id),
    entries,
    hide,
  );
  return stored;
}

function describe(message: Omit<AgentMessage, 'created'>): string {
  const parts = Array.isArray(message.content) ? (message.content as { type: string; toolName?: string; text?: string }[]) : [];
  if (message.role === 'tool') return `tool results: ${parts.map((part) => part.toolName).join(', ')}`;
  const calls = parts.filter((part) => part.type === 'tool-call').map((part) => part.toolName);
  if (calls.length) return `${message.role} calls ${calls.join(', ')}`;
  const text = typeof message.content === 'string' ? message.content : parts.map((part) => part.text ?? '').join(' ');
  return `${message.role}: ${text.slice(0, 300)}`;
}
