import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { created, id } from './common.ts';
import { PipelineRun } from './PipelineRun.ts';
import { Project } from './Project.ts';

export const screenshotKinds = ['step', 'failure'] as const;

/**
 * A picture of a run's page, taken by its browser's host after a node (`step`) or where a node
 * failed (`failure`), as the run's `screenshots` option asks (docs/pipelines.md, Screenshots). The
 * JPEG itself is lazy: lists never load it. It goes with its run, or after
 * RUN_SCREENSHOT_RETENTION_DAYS (housekeeping).
 */
export const RunScreenshot = defineEntity({
  name: 'RunScreenshot',
  tableName: 'run_screenshots',
  // The run's pictures in order, and housekeeping's deletion of old ones.
  indexes: [{ properties: ['run', 'created'] }, { properties: ['created'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    run: () => p.manyToOne(PipelineRun).deleteRule('cascade'),
    /** The node's path in the run (`loop.2.read` inside a loop). */
    node: p.string().length(500),
    kind: p.enum(screenshotKinds),
    /** The page's address when it was taken, the run's secrets hidden. */
    url: p.text(),
    width: p.integer(),
    height: p.integer(),
    bytes: p.integer(),
    image: p.blob().lazy().hidden(),
    created: created(),
  },
});

export type RunScreenshot = InferEntity<typeof RunScreenshot>;
