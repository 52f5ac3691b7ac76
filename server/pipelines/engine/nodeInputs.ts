/**
 * The one check of a node's input values against its spec (registry.ts): the compiler runs
 * `checkInputValue` on literals, and whatever runs a node runs `checkNodeInputs` on the values it
 * was handed (references and parameters are only known then). Messages name the input, never
 * quote its value: at run time it may be a secret.
 *
 * Pure: workflows import the engine.
 */

import type { InputSpec, NodeTypeSpec } from './nodes/spec.ts';
import { valueFits } from './refTypes.ts';

export type InputProblem = { input: string | null; message: string; rule: 'type' | 'enum' | 'range' | 'check' | 'missing' };

const quoted = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(', ');

function typeMessage(name: string, input: InputSpec) {
  if (input.refType === 'page') return '`page` must be a page handle from browser.page or another browser node';
  if (input.refType === 'string' && input.nonEmpty) return `\`${name}\` must be a non-empty string`;
  return `\`${name}\` must be a ${input.refType}`;
}

/** What is wrong with a value given for `name`, or null; a literal has passed the refType check already. */
export function checkInputValue(name: string, input: InputSpec, value: unknown): InputProblem | null {
  const problem = (rule: InputProblem['rule'], message: string): InputProblem => ({ input: name, message, rule });
  if (!valueFits(value, input.refType)) return problem('type', typeMessage(name, input));
  if (input.enum && typeof value === 'string' && !input.enum.includes(value))
    return problem('enum', `\`${name}\` must be one of ${quoted(input.enum)}`);
  if (typeof value === 'number') {
    if (input.min !== undefined && value < input.min) return problem('range', `\`${name}\` must be at least ${input.min}`);
    if (input.max !== undefined && value > input.max) return problem('range', `\`${name}\` must be at most ${input.max}`);
  }
  const message = input.check?.(value);
  return message ? problem('check', message) : null;
}

/**
 * A node's inputs as its implementation reads them, or the first problem with them. An input not
 * given (`null` counts as not given, except for a `json` input, and so does "" for a free-text
 * optional string) takes its default; then required inputs, `oneOf` and every value are checked.
 * Plans carry the defaults already; filling them here serves callers that pass only what they set.
 */
export function checkNodeInputs(
  spec: NodeTypeSpec,
  inputs: Record<string, unknown>,
): { values: Record<string, unknown>; problem: null } | { values: null; problem: InputProblem } {
  const values: Record<string, unknown> = { ...inputs };
  const given = (name: string, input: InputSpec) => {
    const value = values[name];
    if (value === undefined) return false;
    if (value === null) return input.refType === 'json';
    if (value === '' && input.refType === 'string') return input.required ? !input.nonEmpty : Boolean(input.enum);
    return true;
  };
  for (const [name, input] of Object.entries(spec.inputs)) {
    if (given(name, input)) continue;
    delete values[name];
    if (input.default !== undefined) values[name] = input.default;
    else if (input.required) return { values: null, problem: { input: name, message: typeMessage(name, input), rule: 'missing' } };
  }
  if (spec.oneOf && !spec.oneOf.some((name) => values[name] !== undefined)) {
    return { values: null, problem: { input: null, message: `${spec.type} needs at least one of ${quoted(spec.oneOf)}`, rule: 'missing' } };
  }
  for (const [name, input] of Object.entries(spec.inputs)) {
    if (values[name] === undefined) continue;
    const problem = checkInputValue(name, input, values[name]);
    if (problem) return { values: null, problem };
  }
  return { values, problem: null };
}
