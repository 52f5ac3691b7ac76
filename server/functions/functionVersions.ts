import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { FunctionVersion, PipelineFunction, type PipelineVersion, type Project } from '../../db/entities/index.ts';
import type { CompileError } from '../../db/entities/PipelineVersion.ts';
import { BadRequest, Conflict } from '../errors.ts';
import { compilePipeline } from '../pipelines/compiler.ts';
import type { Plan } from '../pipelines/engine/plan.ts';
import { isAssignable, type RefType } from '../pipelines/engine/refTypes.ts';
import { isUuid } from '../projects/projectRepository.ts';
import type { FunctionOutput, FunctionParameter } from './schemas.ts';

/**
 * Creating functions and their versions. Every version is made by `createFunctionVersion`, which
 * compiles its source and checks the declared interface against it; a version is stored with
 * the compiler's errors and the interface's problems (`errors`) and cannot be executed while it
 * has any. Versions of a function form a linked list through `predecessor`.
 */

const uuidShapedMessage = 'a slug may not look like an id (a UUID): the by-id routes would read it as one';

/**
 * Function slugs: like project slugs, alphanumerics, dashes and underscores, stored lower-case;
 * never UUID-shaped (`POST …/functions/{functionId}/execute` takes an id or a slug in one segment).
 */
export const functionSlugSchema = z
  .string()
  .min(1, 'a slug has at least 1 character')
  .max(64, 'a slug has at most 64 characters')
  .regex(/^[A-Za-z0-9_-]+$/, 'a slug may contain only letters, digits, dashes and underscores')
  .refine((slug) => !isUuid(slug), uuidShapedMessage)
  .transform((slug) => slug.toLowerCase());

/**
 * How PATCH reads "a slug update re-slugifies the provided name": the given `slug` is turned into
 * a slug, not refused: lower-cased, every run of other characters (spaces included) becomes one
 * `-`, dashes at the ends are dropped, and it is cut to 64 characters. `"My Tool!"` → `my-tool`.
 * Answers '' when nothing is left (the caller refuses that).
 */
export function slugify(text: string) {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
}

export type FunctionDefinition = {
  source: Record<string, unknown>;
  parameters: FunctionParameter[];
  outputs: FunctionOutput[];
  metadata: Record<string, unknown>;
  outputType: string;
};

export type VersionOrigin = { sourcePipelineId: string | null; sourcePipelineVersion: PipelineVersion | null };

/**
 * Problems of the declared interface against a compiled plan (only checked when the source
 * compiles): each parameter must be a parameter of the source, of a type the source's accepts;
 * every source parameter without a default must be declared (a caller could not give it
 * otherwise); each output's `source` must name a top-level node's output of a fitting type; an
 * output without `source` must be one of the source's declared outputs (the run's `result`).
 */
export function checkInterface(plan: Plan, parameters: FunctionParameter[], outputs: FunctionOutput[]): CompileError[] {
  const errors: CompileError[] = [];
  const declared = new Set(parameters.map((p) => p.name));
  for (const parameter of parameters) {
    const target = plan.parameters[parameter.name];
    if (!target) {
      errors.push({
        node: null,
        input: parameter.name,
        code: 'unknown_parameter',
        message: `parameter \`${parameter.name}\` is not a parameter of the source`,
      });
    } else if (!isAssignable(parameter.refType as RefType, target.refType)) {
      errors.push({
        node: null,
        input: parameter.name,
        code: 'parameter_type_mismatch',
        message: `parameter \`${parameter.name}\` is declared ${parameter.refType}, the source expects ${target.refType}`,
      });
    }
  }
  for (const [name, target] of Object.entries(plan.parameters)) {
    if (!declared.has(name) && target.default === undefined) {
      errors.push({
        node: null,
        input: name,
        code: 'undeclared_parameter',
        message: `the source's required parameter \`${name}\` is not declared`,
      });
    }
  }
  const steps = new Map(plan.steps.map((step) => [step.name, step]));
  const resultNames = plan.result.kind === 'declared' ? new Set(Object.keys(plan.result.outputs)) : new Set<string>();
  for (const output of outputs) {
    if (output.source) {
      const step = steps.get(output.source.nodeName);
      const type = step?.outputs[output.source.outputName];
      if (!step) {
        errors.push({
          node: output.source.nodeName,
          code: 'unknown_output_source',
          message: `output \`${output.name}\`: no top-level node \`${output.source.nodeName}\``,
        });
      } else if (!type) {
        errors.push({
          node: output.source.nodeName,
          code: 'unknown_output_source',
          message: `output \`${output.name}\`: node \`${output.source.nodeName}\` has no output \`${output.source.outputName}\``,
        });
      } else if (!isAssignable(type, output.refType as RefType)) {
        errors.push({
          node: output.source.nodeName,
          code: 'output_type_mismatch',
          message: `output \`${output.name}\` is declared ${output.refType}, \`${output.source.nodeName}.${output.source.outputName}\` is ${type}`,
        });
      }
    } else if (!resultNames.has(output.name)) {
      errors.push({
        node: null,
        code: 'unknown_output_source',
        message: `output \`${output.name}\` has no \`source\` and the source declares no output of that name`,
      });
    }
  }
  return errors;
}

/** The plan of a source, or null when it does not compile (such a version can never run). */
export function compileSource(source: Record<string, unknown>) {
  return compilePipeline(source).plan ?? null;
}

/** Compiles a definition: the compiler's errors, then (when it compiles) the interface's. */
export function compileDefinition(definition: Pick<FunctionDefinition, 'source' | 'parameters' | 'outputs'>) {
  const { errors, plan } = compilePipeline(definition.source);
  if (!plan) return { errors, plan: null };
  const problems = checkInterface(plan, definition.parameters, definition.outputs);
  return { errors: problems, plan: problems.length ? null : plan };
}

/** Parameters of `plan` that have a default, so a caller may leave them out. */
export function optionalParameters(plan: Plan | null | undefined) {
  if (!plan) return [];
  return Object.entries(plan.parameters)
    .filter(([, parameter]) => parameter.default !== undefined)
    .map(([name]) => name);
}

/**
 * Stores a new version of `fn` (locked meanwhile, so concurrent imports chain instead of
 * branching) and makes it current. Runs in (or nests into) a transaction and flushes.
 */
export async function createFunctionVersion(
  em: EntityManager,
  fn: PipelineFunction,
  definition: FunctionDefinition,
  origin: VersionOrigin,
) {
  return em.transactional(async (tx) => {
    const locked = await tx.findOneOrFail(PipelineFunction, { id: fn.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const { errors, plan } = compileDefinition(definition);
    const version = tx.create(FunctionVersion, {
      function: locked,
      project: locked.project,
      source: definition.source,
      errors,
      plan: plan ? (plan as unknown as Record<string, unknown>) : null,
      parameters: definition.parameters,
      outputs: definition.outputs,
      metadata: definition.metadata,
      outputType: definition.outputType,
      sourcePipelineId: origin.sourcePipelineId,
      sourcePipelineVersion: origin.sourcePipelineVersion,
      predecessor: locked.currentVersion ?? null,
    });
    locked.currentVersion = version;
    await tx.flush();
    return version;
  });
}

export type NewFunction = { name: string; description: string; slug: string; definition: FunctionDefinition };

export async function slugTaken(em: EntityManager, project: Project, slug: string, exceptId?: string) {
  const existing = await em.findOne(PipelineFunction, { project: project.id, slug }, { fields: ['id'] });
  return !!existing && existing.id !== exceptId;
}

export function slugConflict(slug: string) {
  return new Conflict('slug_taken', `A function with slug "${slug}" already exists in this project`, {
    issues: [{ path: ['slug'], message: 'this slug is taken in the project' }],
  });
}

/** A function and its first version, together (a function is never seen without a current version). */
export async function createFunction(em: EntityManager, project: Project, input: NewFunction) {
  if (await slugTaken(em, project, input.slug)) throw slugConflict(input.slug);
  try {
    return await em.transactional(async (tx) => {
      const fn = tx.create(PipelineFunction, {
        project,
        name: input.name,
        slug: input.slug,
        description: input.description,
        currentVersion: null,
      });
      await tx.flush();
      const version = await createFunctionVersion(tx, fn, input.definition, { sourcePipelineId: null, sourcePipelineVersion: null });
      return { fn, version };
    });
  } catch (error) {
    // Two creates racing for one slug: the unique index decides.
    if (error instanceof UniqueConstraintViolationException) throw slugConflict(input.slug);
    throw error;
  }
}

export function requireSlug(text: string) {
  const slug = slugify(text);
  if (!slug) {
    throw new BadRequest('invalid_input', 'The slug has no letters or digits', {
      issues: [{ path: ['slug'], message: 'nothing left after slugifying' }],
    });
  }
  if (isUuid(slug))
    throw new BadRequest('invalid_input', `Invalid slug: ${uuidShapedMessage}`, {
      issues: [{ path: ['slug'], message: uuidShapedMessage }],
    });
  return slug;
}
