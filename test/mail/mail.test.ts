import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../server/config.ts';
import { PASSWORD } from '../support/accounts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * What happens to a mail (and the one-time token in it) off the happy path: no SMTP server
 * (the development outbox), an SMTP server that refuses it for good, and production config.
 */

let stack: TestStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

type MailRow = { status: string; text: string | null; attempts: number };

async function register(current: TestStack) {
  const email = `mail-${randomBytes(4).toString('hex')}@example.test`;
  const registered = await current.http.post('/api/auth/register', { email, password: PASSWORD, firstName: 'Mai', lastName: 'Ler' });
  expect(registered.status, registered.text).toBe(200);
  return email;
}

/** The mail row to `email` once it has left `queued`. */
async function settledMail(current: TestStack, email: string): Promise<MailRow> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await current.orm.em
      .fork()
      .getConnection()
      .execute<MailRow[]>('select status, text, attempts from mails where "to" = ?', [email]);
    if (row && row.status !== 'queued') return row;
    if (Date.now() > deadline) throw new Error(`the mail to ${email} is still ${row?.status ?? 'missing'}`);
    await sleep(200);
  }
}

describe('without SMTP_URL (development outbox)', () => {
  it('keeps the mail in the table and prints it in development', async () => {
    const lines: string[] = [];
    stack = await startTestStack(
      { NODE_ENV: 'development', SMTP_URL: '', LOG_LEVEL: 'info' },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
    const email = await register(stack);
    const mail = await settledMail(stack, email);
    expect(mail.status).toBe('outbox');
    const token = /token: ([\w-]{20,})/.exec(mail.text ?? '')?.[1];
    expect(token).toBeDefined();
    expect(lines.join('')).toContain(token);
  });

  it('keeps it but does not print the body outside development', async () => {
    const lines: string[] = [];
    stack = await startTestStack(
      { SMTP_URL: '', LOG_LEVEL: 'info' },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
    const email = await register(stack);
    const mail = await settledMail(stack, email);
    expect(mail.status).toBe('outbox');
    const token = /token: ([\w-]{20,})/.exec(mail.text ?? '')?.[1] as string;
    expect(token).toBeDefined();
    const logged = lines.join('');
    expect(logged).toContain('development outbox');
    expect(logged).not.toContain(token);
  });
});

describe('an SMTP server that refuses the mail for good', () => {
  it('marks the mail failed and clears its body', async () => {
    const refusing = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(_address, _session, callback) {
        callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      },
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const { port } = refusing.server.address() as { port: number };
    try {
      stack = await startTestStack({ SMTP_URL: `smtp://127.0.0.1:${port}` });
      const email = await register(stack);
      const mail = await settledMail(stack, email);
      expect(mail).toMatchObject({ status: 'failed', text: null, attempts: 1 });
    } finally {
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });
});

describe('production', () => {
  it('refuses to start without SMTP_URL, so no outbox keeps tokens there', () => {
    const base = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    expect(() => parseConfig(base)).toThrow(/SMTP_URL: required in production/);
    expect(parseConfig({ ...base, SMTP_URL: 'smtp://127.0.0.1:25' }).mail.smtpUrl).toBe('smtp://127.0.0.1:25');
  });
});
