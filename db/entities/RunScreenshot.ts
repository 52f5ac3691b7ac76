import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { AnalysisJob } from './AnalysisJob.ts';
import { created, id } from './common.ts';
import { PipelineRun } from './PipelineRun.ts';
import { Project } from './Project.ts';

export const screenshotKinds = ['step', 'failure', 'proposal'] as const;

/** Where a proposal's step acts on the picture, in CSS pixels of the viewport. */
export type ScreenshotBox = { step: number; selector: string; x: number; y: number; width: number; height: number };

/**
 * A picture of a run's page, taken by its browser's host after a node (`step`) or where a node
 * failed (`failure`), as the run's `screenshots` option asks (docs/pipelines.md, Screenshots); or
 * of a page an analysis's proposal acts on (`proposal`), with the boxes of its steps' elements
 * (docs/analysis-generation.md). The JPEG itself is lazy: lists never load it. It goes with its run
 * or analysis, or after RUN_SCREENSHOT_RETENTION_DAYS (housekeeping).
 */
export const RunScreenshot = defineEntity({
  name: 'RunScreenshot',
  tableName: 'run_screenshots',
  // The run's pictures in order, and housekeeping's deletion of old ones.
  indexes: [{ properties: ['run', 'created'] }, { properties: ['created'] }],
  properties: {
    id: id(),
    project: () => p.manyToOne(Project).deleteRule('cascade'),
    run: () => p.manyToOne(PipelineRun).nullable().deleteRule('cascade'),
    analysis: () => p.manyToOne(AnalysisJob).nullable().deleteRule('cascade').index(),
    /** The node's path in the run (`loop.2.read` inside a loop). */
    node: p.string().length(500),
    kind: p.enum(screenshotKinds),
    /** The page's address when it was taken, the run's secrets hidden. */
    url: p.text(),
    width: p.integer(),
    height: p.integer(),
    bytes: p.integer(),
    boxes: p.json<ScreenshotBox[]>().nullable(),
    image: p.blob().lazy().hidden(),
    created: created(),
  },
});

export type RunScreenshot = InferEntity<typeof RunScreenshot>;
