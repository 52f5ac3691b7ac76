import { z } from 'zod';
import { refTypes } from '../../pipelines/engine/refTypes.ts';
import { nodeCatalog } from '../../pipelines/engine/registry.ts';
import { pipelineJsonSchema } from '../../pipelines/language.ts';
import { projectProcedure, router } from '../base.ts';

export const SCHEMA_MEDIA_TYPE = 'application/schema+json';

const outputView = z.looseObject({ refType: z.enum(refTypes), description: z.string() });

const catalogView = z
  .object({
    refTypes: z.array(z.object({ name: z.enum(refTypes), description: z.string() })),
    nodes: z.array(
      z.looseObject({
        type: z.string(),
        title: z.string(),
        description: z.string(),
        category: z.enum(['browser', 'extract', 'flow', 'data']),
        browser: z.boolean().describe('Runs against a page on the browser’s host; otherwise a data or flow node.'),
        inputs: z.record(
          z.string(),
          z
            .looseObject({ refType: z.enum(refTypes), required: z.boolean(), description: z.string() })
            .describe('Also `default`, `enum`, `min`, `max` where they apply.'),
        ),
        outputs: z.record(z.string(), outputView),
        example: z.record(z.string(), z.unknown()).describe('A small source that uses the node.'),
      }),
    ),
  })
  .describe('The node catalog');

const jsonSchemaView = z.record(z.string(), z.unknown()).describe('The JSON Schema (draft 2020-12) of a pipeline source');

/**
 * Whether the caller asked for the schema: `?format=schema`, or an Accept header that prefers the
 * schema media type (its q above 0 and at least that of JSON or a wildcard).
 */
function wantsSchema(format: 'catalog' | 'schema' | undefined, accept: string | undefined) {
  if (format) return format === 'schema';
  let schemaQ = 0;
  let otherQ = 0;
  for (const part of (accept ?? '').split(',')) {
    const [type, ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (type === SCHEMA_MEDIA_TYPE) schemaQ = Math.max(schemaQ, q);
    else if (type === 'application/json' || type === 'application/*' || type === '*/*') otherQ = Math.max(otherQ, q);
  }
  return schemaQ > 0 && schemaQ >= otherQ;
}

export const pipelineNodesRouter = router({
  catalog: projectProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/{project}/api/pipelines/nodes',
        tags: ['pipelines'],
        summary: 'The node catalog, or the JSON Schema of a pipeline source',
        description:
          'Anyone who can read the project. By default the compiler’s node catalog: every node type with its inputs, outputs, refTypes and an example. With `Accept: application/schema+json` (or `?format=schema`, for clients that cannot set Accept) the JSON Schema (draft 2020-12) of a pipeline source. Both are served as `application/json`. The language: docs/pipeline-language.md.',
      },
    })
    .input(
      z.strictObject({
        project: z.string().max(100),
        format: z.enum(['catalog', 'schema']).optional().describe('Overrides the Accept header.'),
      }),
    )
    .output(z.union([catalogView, jsonSchemaView]))
    .query(({ ctx, input }) => {
      const accept = ctx.req.headers.accept;
      return wantsSchema(input.format, Array.isArray(accept) ? accept.join(',') : accept) ? pipelineJsonSchema() : nodeCatalog();
    }),
});
