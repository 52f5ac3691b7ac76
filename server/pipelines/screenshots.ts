import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { type Project, RunScreenshot, screenshotKinds, screenshotModes } from '../../db/entities/index.ts';
import type { Config } from '../config.ts';
import { iso } from '../wireShapes.ts';

/** The run option, as start inputs take it. */
export const screenshotsOption = z
  .enum(screenshotModes)
  .optional()
  .describe(
    'Pictures of the run’s pages: `none`; `failures` (the default), where a node failed; `steps`, after every browser node as well. Bounded per run by RUN_SCREENSHOTS_MAX_BYTES and kept RUN_SCREENSHOT_RETENTION_DAYS',
  );

export const screenshotView = z.object({
  id: z.string(),
  node: z.string().describe('the node’s path in the run'),
  kind: z
    .enum(screenshotKinds)
    .describe('`step`: after the node; `failure`: where it failed; `proposal`: a page an analysis’s proposal acts on'),
  pageUrl: z.string().describe('the page’s address when it was taken, secrets hidden'),
  url: z.string().describe('the JPEG, with the same credentials as the run (GET)'),
  width: z.number(),
  height: z.number(),
  bytes: z.number(),
  taken: z.string(),
  /** A proposal's picture: where each step's element is, in CSS pixels of the picture. */
  boxes: z
    .array(z.object({ step: z.number(), selector: z.string(), x: z.number(), y: z.number(), width: z.number(), height: z.number() }))
    .optional(),
});

export type ScreenshotView = z.infer<typeof screenshotView>;

/** Where a screenshot is served: `GET /{project}/api/screenshots/{screenshotId}` (server/http/screenshotRoutes.ts). */
export function screenshotUrl(config: Pick<Config, 'publicUrl'>, project: Pick<Project, 'slug'>, id: string) {
  return `${config.publicUrl}/${project.slug}/api/screenshots/${id}`;
}

/** The screenshots of a run or of an analysis's proposal, in the order they were taken, without their images. */
export async function screenshotsOf(
  em: EntityManager,
  config: Pick<Config, 'publicUrl'>,
  project: Pick<Project, 'slug'>,
  owner: { run: string } | { analysis: string },
): Promise<ScreenshotView[]> {
  const rows = await em.find(RunScreenshot, owner, { orderBy: { created: 'asc', id: 'asc' } });
  return rows.map((row) => ({
    id: row.id,
    node: row.node,
    kind: row.kind,
    pageUrl: row.url,
    url: screenshotUrl(config, project, row.id),
    width: row.width,
    height: row.height,
    bytes: row.bytes,
    taken: iso(row.created),
    ...(row.boxes ? { boxes: row.boxes } : {}),
  }));
}
