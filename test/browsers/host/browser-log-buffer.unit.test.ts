import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BrowserLog, BUFFER_BOUND_CHARS } from '../../../server/browsers/host/pool/browserLogs.ts';
import type { NewLogEntry } from '../../../server/logs/logWriter.ts';

/**
 * A browser's log while the database is out of reach (server/browsers/host/pool/browserLogs.ts):
 * its lines stay buffered and are written, in order, once it answers; past the buffer's bound the
 * loss is counted and told once. The real stack's outage is in test/database-outage.test.ts.
 */

const unreachable = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

function browserLog() {
  const state = { down: true, attempts: 0 };
  const written: NewLogEntry[] = [];
  const logged: { msg: string; count?: number }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const browser = new BrowserLog(
    () => ({ resourceId: 'resource-1', projectId: 'project-1' }),
    async (_resourceId, _projectId, entries) => {
      state.attempts++;
      if (state.down) throw unreachable();
      written.push(...entries);
    },
    log,
  );
  return { browser, state, written, logged };
}

const line = (message: string): NewLogEntry => ({ context: 'https://example.test/', severity: 'info', message, area: 'console' });

describe('a browser’s log while the database is away', () => {
  it('keeps its lines and writes them all, in order, once the database answers', async () => {
    const { browser, state, written, logged } = browserLog();
    browser.push(line('one'));
    await browser.flushNow();
    browser.push(line('two'));
    await browser.flushNow();
    expect(state.attempts).toBe(2);
    expect(written).toEqual([]);
    state.down = false;
    browser.push(line('three'));
    await browser.flushNow();
    expect(written.map((entry) => entry.message)).toEqual(['one', 'two', 'three']);
    // One warning for the outage, not one per failed write.
    expect(logged.filter((entry) => entry.msg.startsWith('could not write browser logs'))).toHaveLength(1);
  });

  it('past its bound, counts the lines it could not keep and says so once, with the count, where they are missing', async () => {
    const { browser, state, written, logged } = browserLog();
    const big = 'x'.repeat(20_000);
    const kept = Math.floor(BUFFER_BOUND_CHARS / (big.length + 'https://example.test/'.length + 'console'.length));
    for (let i = 0; i < kept + 30; i++) browser.push(line(`${i} ${big}`.slice(0, 20_000)));
    await browser.flushNow();
    state.down = false;
    await browser.flushNow();
    await browser.flushNow();
    const messages = written.map((entry) => entry.message);
    expect(messages.slice(0, -1).map((message) => Number(message.split(' ')[0]))).toEqual(Array.from({ length: kept }, (_, i) => i));
    expect(messages.at(-1)).toBe(
      '30 line(s) of this log were lost here: the database was out of reach for longer than the host could keep them',
    );
    const lost = logged.filter((entry) => /browser log line\(s\) lost/.test(entry.msg));
    expect(lost).toHaveLength(1);
    expect(lost[0]?.count).toBe(30);
  });

  it('takes a released secret out of the lines still waiting, so they are never written with it', async () => {
    const { browser, state, written } = browserLog();
    const release = browser.hide(['s3cret-value']);
    browser.push(line('the password is s3cret-value'));
    await release();
    state.down = false;
    await browser.flushNow();
    expect(written.map((entry) => entry.message)).toEqual(['the password is [redacted]']);
  });
});
