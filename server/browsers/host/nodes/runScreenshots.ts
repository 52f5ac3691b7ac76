import type { MikroORM } from '@mikro-orm/postgresql';
import type { Page } from 'playwright-core';
import type { ScreenshotBox, screenshotKinds, screenshotModes } from '../../../../db/entities/index.ts';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { redactor } from '../../../logs/redact.ts';

export type ScreenshotMode = (typeof screenshotModes)[number];
export type ScreenshotKind = (typeof screenshotKinds)[number];

/** JPEG of the viewport: a 1280×800 page is 50–250 kB at this quality. */
const JPEG_QUALITY = 70;
/** A picture that takes longer than this is not taken: the run goes on without it. */
const CAPTURE_TIMEOUT_MS = 3_000;
/** Marks of the elements that hold a secret while the picture is taken (removed after). */
const FIELD_MARK = 'data-browserflow-secret-field';
const TEXT_MARK = 'data-browserflow-secret-text';

/**
 * Whether a node's end gets a picture under the run's mode: failures in `failures` and `steps`,
 * every browser node's end in `steps`. A node that failed because its page or browser is gone
 * has nothing to show.
 */
export function wantsScreenshot(mode: ScreenshotMode, kind: ScreenshotKind, failureCode?: string) {
  if (mode === 'none') return false;
  if (kind === 'step') return mode === 'steps';
  return !['renderer_crashed', 'browser_crashed', 'no_page'].includes(failureCode ?? '');
}

/**
 * The page's viewport as a JPEG (or a PNG, for a model), with the secrets hidden as a password field hides them:
 * a text field or text area whose value holds one is drawn as dots (`-webkit-text-security`), and
 * an element whose own text holds one is covered by a grey box (Playwright's `mask`). Only the
 * top document is searched: a secret in a frame, a shadow root, a canvas, an image, or changed on
 * its way (split, encoded, cut) is not recognised (docs/pipelines.md, Screenshots).
 */
export async function capturePage(page: Page, hidden: readonly string[], type: 'jpeg' | 'png' = 'jpeg') {
  const secrets = hidden.filter((value) => value.length > 0);
  const { width, height } = await page.evaluate(
    ({ secrets, fieldMark, textMark }) => {
      const holds = (text: string) => secrets.some((secret) => text.includes(secret));
      for (const field of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input, textarea')) {
        if (holds(field.value)) field.setAttribute(fieldMark, '');
      }
      if (document.body && secrets.length) {
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (holds(node.nodeValue ?? '')) node.parentElement?.setAttribute(textMark, '');
        }
      }
      return { width: window.innerWidth, height: window.innerHeight };
    },
    { secrets, fieldMark: FIELD_MARK, textMark: TEXT_MARK },
  );
  try {
    const image = await page.screenshot({
      type,
      ...(type === 'jpeg' ? { quality: JPEG_QUALITY } : {}),
      timeout: CAPTURE_TIMEOUT_MS,
      caret: 'hide',
      style: `[${FIELD_MARK}] { -webkit-text-security: disc !important; }`,
      mask: [page.locator(`[${TEXT_MARK}]`)],
      maskColor: '#8a8a8a',
    });
    return { image, width, height, url: page.url() };
  } finally {
    await page
      .evaluate(
        (marks) => {
          for (const mark of marks) for (const element of document.querySelectorAll(`[${mark}]`)) element.removeAttribute(mark);
        },
        [FIELD_MARK, TEXT_MARK],
      )
      .catch(() => {});
  }
}

/**
 * Takes and stores one picture of a run's page, within the run's bound of bytes; answers the log
 * line that links it (or says why there is none). Never throws: a run does not fail for want of
 * a picture.
 */
export async function keepScreenshot(
  orm: MikroORM,
  target: { projectId: string; runId: string; node: string; kind: ScreenshotKind; page: Page; hidden: readonly string[] },
  maxBytesPerRun: number,
): Promise<NewLogEntry> {
  const { projectId, runId, node, kind } = target;
  const what = kind === 'step' ? 'after the node' : 'where the node failed';
  try {
    if (target.page.isClosed()) return line(node, 'warn', `no screenshot ${what}: the page was closed`);
    const shot = await Promise.race([
      capturePage(target.page, target.hidden),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), CAPTURE_TIMEOUT_MS * 2).unref()),
    ]);
    const id = await insertScreenshot(orm, { projectId, runId, node, kind, ...shot, hidden: target.hidden }, maxBytesPerRun);
    if (!id) return line(node, 'warn', `no screenshot ${what}: the run's screenshots reached their bound of ${maxBytesPerRun} bytes`);
    return { ...line(node, 'info', `screenshot ${what}`), object: { screenshot: id } };
  } catch (error) {
    return line(node, 'warn', `no screenshot ${what}: ${error instanceof Error ? error.message.split('\n')[0] : 'it failed'}`);
  }
}

/**
 * Stores a picture of a run (`runId`) or of an analysis's proposal (`analysisId`), its page address
 * with the `hidden` secrets redacted, unless the pictures it already has and this one together pass
 * `maxBytes`; answers its id, or null when it was not kept.
 */
export async function insertScreenshot(
  orm: MikroORM,
  row: {
    projectId: string;
    runId?: string;
    analysisId?: string;
    node: string;
    kind: ScreenshotKind;
    url: string;
    width: number;
    height: number;
    image: Buffer;
    boxes?: ScreenshotBox[];
    hidden: readonly string[];
  },
  maxBytes: number,
) {
  const owner = row.runId ? { column: 'run_id', id: row.runId } : { column: 'analysis_id', id: row.analysisId };
  return orm.em.fork().transactional(async (tx) => {
    const connection = tx.getConnection();
    const context = tx.getTransactionContext();
    // Pictures of one run (or analysis) are stored one at a time: an overlapping attempt (a lost
    // stretch still running, an activity's retry) waits here, so the sum holds.
    await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [`run_screenshots:${owner.id}`], 'run', context);
    const [{ total }] = (await connection.execute(
      `select coalesce(sum(bytes), 0)::bigint as total from run_screenshots where ${owner.column} = ?`,
      [owner.id],
      'all',
      context,
    )) as [{ total: string }];
    if (Number(total) + row.image.length > maxBytes) return null;
    const [inserted] = (await connection.execute(
      `insert into run_screenshots (id, project_id, run_id, analysis_id, node, kind, url, width, height, bytes, boxes, image, created)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now()) returning id`,
      [
        row.projectId,
        row.runId ?? null,
        row.analysisId ?? null,
        row.node,
        row.kind,
        redactor(row.hidden).text(row.url),
        row.width,
        row.height,
        row.image.length,
        row.boxes ? JSON.stringify(row.boxes) : null,
        row.image,
      ],
      'all',
      context,
    )) as [{ id: string }];
    return inserted.id;
  });
}

function line(node: string, severity: 'info' | 'warn', message: string): NewLogEntry {
  return { context: node, severity, message, area: 'screenshot' };
}
