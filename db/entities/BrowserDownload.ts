import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { BrowserSession } from './BrowserSession.ts';
import { created, id } from './common.ts';
import { PipelineRun } from './PipelineRun.ts';
import { Project } from './Project.ts';
import { SessionResource } from './SessionResource.ts';

/**
 * A file a browser downloaded (docs/browsers.md, Downloads): what the browser said of it, and where
 * its bytes are, the blob store's `downloads/<resource>/<id>` (server/browsers/downloads/). It
 * outlives the browser, and goes with its resource or after DOWNLOAD_RETENTION_DAYS (housekeeping).
 */
export const BrowserDownload = defineEntity({
  name: 'BrowserDownload',
  tableName: 'browser_downloads',
  // The resource's files in order, and housekeeping's deletion of old ones.
  indexes: [{ properties: ['resource', 'created'] }, { properties: ['created'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade').index(),
    session: () => p.manyToOne(BrowserSession).deleteRule('cascade').index(),
    resource: () => p.manyToOne(SessionResource).deleteRule('cascade'),
    /** The run whose `page.download` node fetched it, if one did. */
    run: () => p.manyToOne(PipelineRun).nullable().deleteRule('set null').index(),
    /** The name the site suggested, as Chromium made it safe for a file (no folders). */
    name: p.string().length(500),
    bytes: p.bigint('number'),
    mimeType: p.string().length(200),
    /** Where it came from (a data: or blob: URL is cut to its scheme). */
    url: p.text(),
    created: created(),
  },
});

export type BrowserDownload = InferEntity<typeof BrowserDownload>;
