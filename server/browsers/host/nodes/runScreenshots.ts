import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Page } from 'playwright-core';
import type { ScreenshotBox, screenshotKinds, screenshotModes } from '../../../../db/entities/index.ts';
import type { NewLogEntry } from '../../../logs/logWriter.ts';
import { redactor } from '../../../logs/redact.ts';
import { evaluateIsolated } from '../../page/isolatedWorld.ts';

export type ScreenshotMode = (typeof screenshotModes)[number];
export type ScreenshotKind = (typeof screenshotKinds)[number];

/** JPEG of the viewport: a 1280×800 page is 50–250 kB at this quality. */
const JPEG_QUALITY = 70;
/** A picture that takes longer than this is not taken: the run goes on without it. */
const CAPTURE_TIMEOUT_MS = 3_000;
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
 *
 * No secret enters the page: the isolated world (server/browsers/page/isolatedWorld.ts) hands out the fields'
 * values and the texts, Node finds the secrets in them, and the world is told only which of them
 * to mark, with attributes of fresh random names.
 */
export async function capturePage(page: Page, hidden: readonly string[], type: 'jpeg' | 'png' = 'jpeg') {
  const secrets = hidden.filter((value) => value.length > 0);
  const holding = (texts: string[]) => texts.flatMap((text, index) => (secrets.some((secret) => text.includes(secret)) ? [index] : []));
  const token = () => randomBytes(6).toString('hex');
  // The world keeps the elements it read under `stash` (its own global, out of the page's sight) until they are marked.
  const marks = { stash: `bf${token()}`, field: `data-bf-${token()}`, text: `data-bf-${token()}` };
  const read = await evaluateIsolated(page, readShown, { stash: marks.stash, search: secrets.length > 0 });
  let marked = false;
  try {
    const covered = { fields: holding(read.fields), texts: holding(read.texts) };
    if (secrets.length) marked = await evaluateIsolated(page, markShown, { ...marks, ...covered });
    // A new document since the read may show a secret nobody looked for.
    if (secrets.length && !marked) throw new Error('the page changed while it was taken');
    const image = await page.screenshot({
      type,
      ...(type === 'jpeg' ? { quality: JPEG_QUALITY } : {}),
      timeout: CAPTURE_TIMEOUT_MS,
      caret: 'hide',
      style: `[${marks.field}] { -webkit-text-security: disc !important; }`,
      mask: [page.locator(`[${marks.text}]`)],
      maskColor: '#8a8a8a',
    });
    return { image, width: read.width, height: read.height, url: page.url() };
  } finally {
    if (marked) await evaluateIsolated(page, unmark, [marks.field, marks.text]).catch(() => {});
  }
}

/** In the isolated world: the viewport's size and, to `search`, the text fields' values and the body's texts. */
function readShown({ stash, search }: { stash: string; search: boolean }) {
  const size = { width: window.innerWidth, height: window.innerHeight };
  if (!search) return { ...size, fields: [], texts: [] };
  const fields = Array.from(document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input, textarea'));
  const nodes: Text[] = [];
  if (document.body) {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text);
  }
  (globalThis as Record<string, unknown>)[stash] = { fields, nodes };
  return { ...size, fields: fields.map((field) => field.value), texts: nodes.map((node) => node.nodeValue ?? '') };
}

/** In the isolated world: marks the stashed fields and texts at the indices given; false when the stash is gone (a new document). */
function markShown({
  stash,
  field,
  text,
  fields,
  texts,
}: {
  stash: string;
  field: string;
  text: string;
  fields: number[];
  texts: number[];
}) {
  const kept = (globalThis as Record<string, unknown>)[stash] as { fields: Element[]; nodes: Text[] } | undefined;
  delete (globalThis as Record<string, unknown>)[stash];
  if (!kept) return false;
  for (const index of fields) kept.fields[index]?.setAttribute(field, '');
  for (const index of texts) kept.nodes[index]?.parentElement?.setAttribute(text, '');
  return true;
}

/** In the isolated world: removes the marks. */
function unmark(marks: string[]) {
  for (const mark of marks) for (const element of document.querySelectorAll(`[${mark}]`)) element.removeAttribute(mark);
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
