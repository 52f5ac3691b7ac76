import { randomUUID } from 'node:crypto';
import pino from 'pino';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHousekeepingActivities } from '../../../activities/housekeeping.ts';
import { initORM, migrate } from '../../../db/orm.ts';
import { createScratchDatabase } from '../../../scripts/scratch-database.ts';
import { type BlobStore, PostgresBlobStore } from '../../../server/blobs/blobStore.ts';
import { BrowserRecorder } from '../../../server/browsers/host/recording/browserRecorder.ts';
import { readEvents, readManifest, recordingBlobs, scrubSecrets } from '../../../server/browsers/recordings/recordingFiles.ts';
import { loadConfig } from '../../../server/config.ts';
import type { NewLogEntry } from '../../../server/logs/logWriter.ts';
import { launchChromium } from '../../support/chromium.ts';
import { startTestSite } from '../../support/pages.ts';
import { testDatabaseBase } from '../../support/stack.ts';

/**
 * The recorder of one browser against a real Chromium and the blob store in a real PostgreSQL: what
 * it stores of a page, its bound (RECORDING_MAX_BYTES) and the retention housekeeping applies.
 */

const silent = pino({ level: 'silent' });
let orm: Awaited<ReturnType<typeof initORM>>;
let drop: () => Promise<void>;
let blobs: BlobStore;
let browser: Browser;
let site: Awaited<ReturnType<typeof startTestSite>>;

const PAGE = `<!doctype html><title>Recorded</title><h1>Recorded heading</h1>
<input id="name" type="text"><input id="pass" type="password"><p id="filler"></p>`;

beforeAll(async () => {
  const scratch = await createScratchDatabase(testDatabaseBase, 'recordings');
  drop = scratch.drop;
  orm = await initORM(scratch.url);
  await migrate(orm);
  blobs = recordingBlobs(orm, 'a-service-secret-for-the-recorder-test');
  browser = await launchChromium();
  site = await startTestSite({
    '/page': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(PAGE);
    },
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await orm?.close(true);
  await drop?.();
});

async function recordedContext(maxBytes: number) {
  const resourceId = randomUUID();
  const notes: NewLogEntry[] = [];
  const recorder = new BrowserRecorder({ resourceId, blobs, maxBytes, note: (entry) => notes.push(entry), log: silent });
  const context = await browser.newContext();
  await recorder.start(context);
  return { resourceId, notes, recorder, context };
}

describe('a browser recorder', () => {
  it('stores the page, masks password inputs, and every input while secrets are hidden, with the secrets scrubbed from text', async () => {
    const { resourceId, recorder, context } = await recordedContext(10_000_000);
    const page = await context.newPage();
    await page.goto(`${site.url}/page`);
    await page.fill('#name', 'visible-name-1234');
    await page.fill('#pass', 'Password-typed-9876');
    const release = recorder.hide(['Hidden-secret-5555']);
    await page.fill('#name', 'Hidden-secret-5555');
    await page.evaluate(() => {
      (document.getElementById('filler') as HTMLElement).textContent = 'the page prints Hidden-secret-5555';
    });
    await page.waitForTimeout(800);
    release();
    await recorder.stop();
    await context.close();

    const manifest = await readManifest(blobs, resourceId);
    expect(manifest?.pages.length).toBe(1);
    expect(manifest?.pages[0]?.url).toBe(`${site.url}/page`);
    const events = await readEvents(blobs, resourceId, manifest!.pages[0]!);
    const text = JSON.stringify(events);
    expect(events.some((event) => (event as { type: number }).type === 2)).toBe(true);
    expect(text).toContain('Recorded heading');
    expect(text).toContain('visible-name-1234');
    expect(text).not.toContain('Password-typed-9876');
    expect(text).not.toContain('Hidden-secret-5555');
    expect(text).toContain('the page prints ');
  }, 60_000);

  it('stops at its bound with a note in the browser’s log, keeping what it stored within it', async () => {
    const { resourceId, notes, recorder, context } = await recordedContext(1_500);
    const page = await context.newPage();
    await page.goto(`${site.url}/page`);
    // Text that compresses badly, in steps, so that parts go past the bound.
    for (let i = 0; i < 6; i++) {
      await page.evaluate(() => {
        const p = document.getElementById('filler') as HTMLElement;
        p.textContent += Array.from({ length: 2000 }, () => Math.random().toString(36)[2]).join('');
      });
      await page.waitForTimeout(600);
    }
    await recorder.stop();
    await context.close();
    const manifest = await readManifest(blobs, resourceId);
    expect(manifest?.stopped).toMatch(/RECORDING_MAX_BYTES/);
    expect(manifest?.bytes ?? 0).toBeLessThanOrEqual(1_500);
    expect(notes.map((note) => note.message).join('\n')).toMatch(/reached its bound of 1500 bytes/);
  }, 60_000);

  it('scrubs a secret as JSON escapes it; one that is JSON syntax itself breaks the batch, which the recorder then drops', () => {
    expect(scrubSecrets('[{"a":"x Sec\\"ret1 y"}]', ['Sec"ret1'])).toBe('[{"a":"x ******** y"}]');
    expect(() => JSON.parse(scrubSecrets('[{"a":1},{"b":2}]', ['1},{']))).toThrow();
  });

  it('is deleted by housekeeping past RECORDING_RETENTION_DAYS, and only then', async () => {
    const store = new PostgresBlobStore(orm);
    await store.put('recordings/old-one/0-0', Buffer.from('old'));
    await store.put('recordings/new-one/0-0', Buffer.from('new'));
    await store.put('other/old-one/file', Buffer.from('not a recording'));
    await orm.em
      .getConnection()
      .execute(`update blobs set created = now() - interval '15 days' where key in ('recordings/old-one/0-0', 'other/old-one/file')`);
    const config = loadConfig({ RECORDING_RETENTION_DAYS: '14' });
    const housekeeping = createHousekeepingActivities({ orm, config, log: silent } as never);
    const deleted = await housekeeping.deleteExpiredRows();
    expect(deleted.recordings).toBe(1);
    expect(await store.get('recordings/old-one/0-0')).toBeUndefined();
    expect(await store.get('recordings/new-one/0-0')).toBeDefined();
    expect(await store.get('other/old-one/file')).toBeDefined();
  }, 60_000);
});
