import { z } from 'zod';
import type { FunctionOutput, FunctionParameter } from '../../db/entities/FunctionVersion.ts';
import type { ErrorIssue } from '../errors.ts';
import { parameterRefTypes, type RefType, valueFits } from '../pipelines/engine/refTypes.ts';
import { NAME_PATTERN } from '../pipelines/language.ts';

/**
 * The typed interface of a function: its declared parameters and outputs (spec 2, Function), as
 * zod input schemas for the API, as JSON Schema (draft 2020-12, the object schemas MCP tools
 * take as `inputSchema` / `outputSchema`), and the check of call arguments against them.
 *
 * Types come from the pipeline language (server/pipelines/engine/refTypes.ts). A parameter cannot be a
 * `page`; neither can an output (a page handle means nothing outside its run).
 */

export type { FunctionOutput, FunctionParameter };

/** Function output types: every type but `page`, like parameters. */
export const outputRefTypes = parameterRefTypes;

export const functionParameterSchema = z.strictObject({
  name: z.string().regex(NAME_PATTERN, 'a name starts with a letter or `_`, then letters, digits, `_` or `-` (at most 64)'),
  refType: z.enum(parameterRefTypes),
  description: z.string().max(2000).optional(),
});

export const functionOutputSchema = z.strictObject({
  name: z.string().regex(NAME_PATTERN, 'a name starts with a letter or `_`, then letters, digits, `_` or `-` (at most 64)'),
  refType: z.enum(outputRefTypes),
  source: z
    .strictObject({
      nodeName: z.string().min(1).max(64),
      outputName: z.string().min(1).max(64),
    })
    .optional(),
});

function uniqueNames(list: { name: string }[]) {
  return new Set(list.map((item) => item.name)).size === list.length;
}

export const functionParametersSchema = z.array(functionParameterSchema).max(100).refine(uniqueNames, 'parameter names must be unique');
export const functionOutputsSchema = z.array(functionOutputSchema).max(100).refine(uniqueNames, 'output names must be unique');

/** The JSON Schema of one value of `type`. */
export function refTypeJsonSchema(type: RefType | string, description?: string): Record<string, unknown> {
  const described = (schema: Record<string, unknown>) => (description ? { ...schema, description } : schema);
  switch (type) {
    case 'string':
    case 'html':
      return described({ type: 'string' });
    case 'image':
      return described({ type: 'string', contentEncoding: 'base64', contentMediaType: 'image/png' });
    case 'number':
      return described({ type: 'number' });
    case 'boolean':
      return described({ type: 'boolean' });
    case 'list':
      return described({ type: 'array' });
    case 'record':
      return described({ type: 'object' });
    case 'page':
      return described({ type: 'object', properties: { pageId: { type: 'string' } }, required: ['pageId'] });
    default:
      // `json`, and anything unknown: any JSON value.
      return described({});
  }
}

/**
 * The object schema of a function's arguments. Every declared parameter is required, except the
 * ones named in `optional` (those whose source parameter has a default); no other properties.
 */
export function functionInputJsonSchema(parameters: FunctionParameter[], options: { optional?: string[] } = {}): Record<string, unknown> {
  const optional = new Set(options.optional ?? []);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: Object.fromEntries(parameters.map((p) => [p.name, refTypeJsonSchema(p.refType, p.description)])),
    required: parameters.filter((p) => !optional.has(p.name)).map((p) => p.name),
    additionalProperties: false,
  };
}

/** `schema`, also accepting `null`. A schema without `type` (any JSON value) accepts it already. */
function orNull(schema: Record<string, unknown>): Record<string, unknown> {
  return typeof schema.type === 'string' ? { ...schema, type: [schema.type, 'null'] } : schema;
}

/**
 * The object schema of a function's `outputs`: every declared output, by name. Each is present
 * but may be `null`: an execution answers `null` for a value the run did not produce (a condition
 * branch not taken, an optional extraction that matched nothing, a cookie not set), and MCP
 * clients validate `structuredContent` against this schema.
 */
export function functionOutputJsonSchema(outputs: FunctionOutput[]): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: Object.fromEntries(outputs.map((o) => [o.name, orNull(refTypeJsonSchema(o.refType))])),
    required: outputs.map((o) => o.name),
    additionalProperties: false,
  };
}

/**
 * Checks call arguments against the declared parameters: an object, each value of its
 * parameter's type, every required parameter given, nothing undeclared. Answers one issue per
 * problem (path `['args', <name>]`); messages never contain the values (they may be secret).
 */
export function checkFunctionArgs(
  parameters: FunctionParameter[],
  args: unknown,
  options: { optional?: string[] } = {},
): { values: Record<string, unknown>; issues: ErrorIssue[] } {
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args)) {
    return { values: {}, issues: [{ path: ['args'], message: '`args` must be an object of parameter values', code: 'invalid_type' }] };
  }
  const given = args as Record<string, unknown>;
  const optional = new Set(options.optional ?? []);
  const declared = new Map(parameters.map((p) => [p.name, p]));
  const values: Record<string, unknown> = {};
  const issues: ErrorIssue[] = [];
  for (const parameter of parameters) {
    const value = Object.hasOwn(given, parameter.name) ? given[parameter.name] : undefined;
    if (value === undefined) {
      if (!optional.has(parameter.name)) {
        issues.push({
          path: ['args', parameter.name],
          message: `\`${parameter.name}\` (${parameter.refType}) is required`,
          code: 'required',
        });
      }
    } else if (!valueFits(value, parameter.refType as RefType)) {
      issues.push({
        path: ['args', parameter.name],
        message: `\`${parameter.name}\` must be a ${parameter.refType}`,
        code: 'invalid_type',
      });
    } else {
      values[parameter.name] = value;
    }
  }
  for (const name of Object.keys(given)) {
    if (!declared.has(name) && given[name] !== undefined) {
      issues.push({ path: ['args', name], message: `the function has no parameter \`${name}\``, code: 'unrecognized_key' });
    }
  }
  return { values, issues };
}
