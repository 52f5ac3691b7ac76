/**
 * The syntax of a pipeline source, as zod schemas. docs/pipeline-language.md describes it.
 *
 * `sourceSchema` is the lenient, generic grammar the compiler parses with: any `type`, any input
 * names and literal values, so that unknown types, inputs and type mismatches are reported by
 * the compiler with their own codes. `typedSourceSchema()` is the same grammar specialised per
 * node type from the registry; its JSON Schema is what `Accept: application/schema+json` answers.
 */
import { z } from 'zod';
import type { InputSpec, NodeTypeSpec } from './engine/nodes/spec.ts';
import { parameterRefTypes } from './engine/refTypes.ts';
import { nodeRegistry } from './engine/registry.ts';

/** Node, input, output and parameter names: no dots, so `node.output` is unambiguous. */
export const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const REF_PATTERN = /^([A-Za-z_][A-Za-z0-9_-]{0,63})\.([A-Za-z_][A-Za-z0-9_-]{0,63})$/;

/** Most nodes in one source, counting those inside sub-graphs; and how deep sub-graphs nest. */
export const MAX_NODES = 500;
export const MAX_DEPTH = 8;

/** Any JSON value; one instance, so the JSON Schema defines it once. */
export const jsonValueSchema = z.json().meta({ id: 'JsonValue' });

export const nameSchema = z
  .string()
  .regex(NAME_PATTERN, 'a name starts with a letter or _ and has only letters, digits, _ and - (at most 64)');

export const refValueSchema = z
  .strictObject({ $ref: z.string().regex(REF_PATTERN, 'a reference is "node.output"') })
  .meta({ id: 'Ref', description: 'The output `output` of node `node`, written "node.output".' });
export const paramValueSchema = z
  .strictObject({ $param: nameSchema })
  .meta({ id: 'Param', description: 'The value of a pipeline parameter.' });
export const literalWrapperSchema = z
  .strictObject({ $literal: jsonValueSchema })
  .meta({ id: 'Literal', description: 'A literal taken as is, even an object with `$ref` or `$param` keys.' });

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * An input value: `{$ref}`, `{$param}`, `{$literal}`, or any other JSON literal. A reference
 * must be the whole value: a literal that hides one (`{"a": {"$ref": …}}`) is refused rather
 * than silently passed on as data.
 */
function checkInputValue(value: unknown, ctx: z.RefinementCtx) {
  if (isPlainObject(value) && Object.keys(value).some((key) => key.startsWith('$'))) {
    for (const schema of [refValueSchema, paramValueSchema, literalWrapperSchema]) {
      const key = Object.keys(schema.shape)[0] as string;
      if (key in value) {
        const parsed = schema.safeParse(value);
        if (!parsed.success)
          for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
        return;
      }
    }
    ctx.addIssue({ code: 'custom', message: 'an object with $-keys must be {"$ref": …}, {"$param": …} or {"$literal": …}' });
    return;
  }
  const pending: [unknown, PropertyKey[]][] = [[value, []]];
  while (pending.length) {
    const [item, path] = pending.pop() as [unknown, PropertyKey[]];
    if (Array.isArray(item)) {
      for (const [index, child] of item.entries()) pending.push([child, [...path, index]]);
    } else if (isPlainObject(item)) {
      if (path.length && ('$ref' in item || '$param' in item)) {
        ctx.addIssue({
          code: 'custom',
          path,
          message:
            'a reference must be the whole input value, not part of a literal; build records with json.object, or wrap data in {"$literal": …}',
        });
      }
      for (const [key, child] of Object.entries(item)) pending.push([child, [...path, key]]);
    }
  }
}

export const inputValueSchema = jsonValueSchema.superRefine(checkInputValue);

export const outputValueSchema = z.union([refValueSchema, paramValueSchema], {
  error: 'an output is {"$ref": "node.output"} or {"$param": "name"}',
});

export const parameterSchema = z.strictObject({
  refType: z.enum(parameterRefTypes).describe('The parameter’s type.'),
  secret: z.boolean().optional().describe('Its value is redacted from logs, errors and stored arguments.'),
  description: z.string().max(2000).optional(),
  default: jsonValueSchema.optional().describe('Used when a run gives no value; a parameter without a default is required.'),
});

const nodeOptions = {
  description: z.string().max(2000).optional().describe('A note for readers; no effect.'),
  timeoutMs: z.number().int().min(100).max(600_000).optional().describe('Time limit of one attempt, in ms (default per node type).'),
  retries: z.number().int().min(0).max(10).optional().describe('Extra attempts after a failure (default 0).'),
};

export type SourceBlock = { nodes: Record<string, SourceNode>; outputs?: Record<string, { $ref: string } | { $param: string }> };
export type SourceNode = {
  type: string;
  inputs?: Record<string, unknown>;
  description?: string;
  timeoutMs?: number;
  retries?: number;
  body?: SourceBlock;
  then?: SourceBlock;
  else?: SourceBlock;
};
/** A source that parses (`sourceSchema`); a stored one may not (`StoredSource`, versions.ts). */
export type PipelineSource = {
  $schema?: string;
  description?: string;
  parameters?: Record<string, z.infer<typeof parameterSchema>>;
  nodes: Record<string, SourceNode>;
  outputs?: Record<string, { $ref: string } | { $param: string }>;
};

/** The keys of a node that hold sub-graphs (which of them a type takes is in the registry). */
export const BLOCK_KEYS = ['body', 'then', 'else'] as const;

export const blockSchema: z.ZodType<SourceBlock> = z.strictObject({
  get nodes() {
    return z.record(nameSchema, nodeSchema);
  },
  outputs: z.record(nameSchema, outputValueSchema).optional(),
});

export const nodeSchema: z.ZodType<SourceNode> = z.strictObject({
  type: z.string().min(1).max(100),
  inputs: z.record(nameSchema, inputValueSchema).optional(),
  ...nodeOptions,
  get body() {
    return blockSchema.optional();
  },
  // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
  get then() {
    return blockSchema.optional();
  },
  get else() {
    return blockSchema.optional();
  },
});

/** One node without its sub-graphs: the compiler checks nodes one by one with it. */
export const nodeHeaderSchema = z.strictObject({
  type: z.string().min(1).max(100),
  inputs: z.record(nameSchema, inputValueSchema).optional(),
  ...nodeOptions,
  body: z.unknown().optional(),
  // biome-ignore lint/suspicious/noThenProperty: a condition's `then` sub-graph is data, never a thenable
  then: z.unknown().optional(),
  else: z.unknown().optional(),
});

export const sourceSchema: z.ZodType<PipelineSource> = z.strictObject({
  $schema: z.string().optional(),
  description: z.string().max(10_000).optional(),
  parameters: z.record(nameSchema, parameterSchema).optional(),
  nodes: z.record(nameSchema, nodeSchema),
  outputs: z.record(nameSchema, outputValueSchema).optional(),
});

// ---- The typed grammar, for the JSON Schema ---------------------------------------------------

function literalSchemaFor(input: InputSpec): z.ZodType | null {
  switch (input.refType) {
    case 'page':
      return null;
    case 'string':
    case 'html':
    case 'image':
      return input.enum ? z.enum(input.enum as [string, ...string[]]) : z.string();
    case 'number':
      return z.number();
    case 'boolean':
      return z.boolean();
    case 'list':
      return z.array(jsonValueSchema);
    case 'record':
      return z.record(z.string(), jsonValueSchema);
    case 'json':
      return jsonValueSchema;
  }
}

function typedInputSchema(input: InputSpec) {
  const literal = literalSchemaFor(input);
  const options = literal ? [refValueSchema, paramValueSchema, literalWrapperSchema, literal] : [refValueSchema];
  return z.union(options).describe(`${input.refType}${input.required ? '' : ' (optional)'}: ${input.description}`);
}

function typedNodeSchema(spec: NodeTypeSpec, block: () => z.ZodType) {
  const inputShape = Object.fromEntries(
    Object.entries(spec.inputs).map(([name, input]) => {
      const schema = typedInputSchema(input);
      return [name, input.required ? schema : schema.optional()];
    }),
  );
  const inputs = spec.extraInputs
    ? z.object(inputShape).catchall(z.union([refValueSchema, paramValueSchema, literalWrapperSchema, jsonValueSchema]))
    : z.strictObject(inputShape);
  const required = Object.values(spec.inputs).some((input) => input.required);
  const blocks = Object.fromEntries(
    Object.entries(spec.blocks ?? {}).map(([key, blockSpec]) => {
      const schema = z.lazy(block).describe(blockSpec.description);
      return [key, blockSpec.required ? schema : schema.optional()];
    }),
  );
  return z
    .strictObject({
      type: z.literal(spec.type),
      inputs: required ? inputs : inputs.optional(),
      ...nodeOptions,
      ...blocks,
    })
    .describe(`${spec.title}: ${spec.description}`);
}

let typedSchema: z.ZodType | undefined;

/** The source grammar with one node schema per registered type. */
export function typedSourceSchema() {
  if (typedSchema) return typedSchema;
  const nodes: z.ZodType = z.lazy(() =>
    z
      .record(
        nameSchema,
        z.discriminatedUnion('type', [...nodeRegistry.values()].map((spec) => typedNodeSchema(spec, () => block)) as never),
      )
      .meta({ id: 'Nodes', description: 'Node name → node. Names are unique across the whole source, sub-graphs included.' }),
  );
  const block: z.ZodType = z
    .strictObject({ nodes, outputs: z.record(nameSchema, outputValueSchema).optional() })
    .meta({ id: 'Block', description: 'A sub-graph: its nodes, and the outputs it hands to the flow node.' });
  typedSchema = z
    .strictObject({
      $schema: z.string().optional(),
      description: z.string().max(10_000).optional(),
      parameters: z.record(nameSchema, parameterSchema).optional(),
      nodes,
      outputs: z.record(nameSchema, outputValueSchema).optional().describe('The pipeline’s result: name → a node output or a parameter.'),
    })
    .meta({ title: 'Pipeline source', description: 'A typed dataflow graph of named nodes; see docs/pipeline-language.md.' });
  return typedSchema;
}

let jsonSchema: Record<string, unknown> | undefined;

/** The JSON Schema (draft 2020-12) of a pipeline source. */
export function pipelineJsonSchema(): Record<string, unknown> {
  jsonSchema ??= z.toJSONSchema(typedSourceSchema(), { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return jsonSchema;
}
